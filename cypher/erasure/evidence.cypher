// Answers: the evidence of an erasure: for each place (or model) of a request, the completed
// runs that wrote it since the request was opened, earliest first, with their jobs.
// Param $datasets: list of {namespace, name}
// Param $since: when the request was opened
// Returns: namespace, name, writes (runId, job, end; at most 20, earliest first)
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'raw.users'}]
// :param since => datetime('2026-06-01T00:00:00Z')
UNWIND $datasets AS k
MATCH (d:Dataset {namespace: k.namespace, name: k.name})
USING INDEX SEEK d:Dataset(namespace, name)
RETURN d.namespace AS namespace, d.name AS name,
       COLLECT { MATCH (r:Run {state: 'COMPLETE'})-[:WROTE]->(d) WHERE r.completeTime > $since
                 MATCH (r)-[:OF]->(j:Job)
                 RETURN {runId: r.runId, job: j.namespace + ':' + j.name, end: r.completeTime} AS w
                 ORDER BY w.end LIMIT 20 } AS writes

// Answers: where bad data began for a rerun plan of a dataset: its writes since a time (or its
// latest write), each with its run and version.
// Param $namespace: the bad dataset's namespace
// Param $name: the bad dataset's name
// Param $since: the time its bad data began; null for its latest write
// Returns: found (whether the dataset exists), writes (latest first: runId, job, state, start, end, version)
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'raw.orders'
// :param since => null
OPTIONAL MATCH (d:Dataset {namespace: $namespace, name: $name})
OPTIONAL MATCH (r:Run)-[x:WROTE]->(d)
OPTIONAL MATCH (r)-[:OF]->(j:Job)
WITH d, r, x, j, coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime) AS end
ORDER BY end DESC
WITH d, [w IN collect(CASE WHEN r IS NOT NULL THEN
           {runId: r.runId, job: j.namespace + ':' + j.name, state: r.state,
            start: coalesce(r.startTime, r.runningTime, r.stateTime), end: end,
            version: x.version} END) WHERE w IS NOT NULL] AS writes
RETURN d IS NOT NULL AND d.deleted IS NULL AS found,
       CASE WHEN $since IS NULL THEN writes[..1] ELSE [w IN writes WHERE w.end >= $since] END AS writes

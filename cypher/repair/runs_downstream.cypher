// Answers: what a rerun plan replays: every dataset downstream of where bad data began (the
// starts themselves too; lineage current or retired: runs read what they read), with the runs
// that read it or wrote it since a time, and its last write by a completed run before then.
// Param $starts: list of {namespace, name}: the datasets bad data began in
// Param $since: the time bad data began (runs that started before it are not read)
// Param $depth: maximum number of DERIVED_FROM hops downstream (1 to 50)
// Returns: namespace, name, reads (runId, job, state, start, end, version), writes (the same), before (the last write by a completed run that ended before $since: runId, job, end, version; null when none), readers (the jobs that read it in current lineage: job, lastRunId, lastStart of their latest run), writers (the jobs that write it in current lineage), otherNames (its other names, symlinks and declared aliases: 'namespace:name'); every time a DateTime
// :param starts => [{namespace: 'postgres://warehouse:5432', name: 'raw.orders'}]
// :param since => datetime('2026-01-01T00:00:00Z')
// :param depth => 20
// expand each walk from its start (a young graph's statistics made the planner pair the start
// with every node instead)
CYPHER statefulShortestPlanningMode=all_if_possible
UNWIND $starts AS s
MATCH (src:Dataset {namespace: s.namespace, name: s.name})
USING INDEX SEEK src:Dataset(namespace, name)
CALL (src) {
  RETURN src AS d
  UNION
  MATCH p = ANY SHORTEST (src)(()<-[e:DERIVED_FROM]-()){1,50}(d:Dataset)
  WHERE size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
  RETURN d
}
WITH DISTINCT d
CALL (d) {
  OPTIONAL MATCH (r:Run)-[x:READ]->(d)
  WITH r, x, coalesce(r.startTime, r.runningTime, r.stateTime) AS start
  WHERE r IS NOT NULL AND start >= $since
  MATCH (r)-[:OF]->(j:Job)
  RETURN collect({runId: r.runId, job: j.namespace + ':' + j.name, state: r.state, start: start,
                  end: coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime),
                  version: x.version}) AS reads
}
CALL (d) {
  OPTIONAL MATCH (r:Run)-[x:WROTE]->(d)
  WITH r, x, coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime) AS end
  WHERE r IS NOT NULL AND end >= $since
  MATCH (r)-[:OF]->(j:Job)
  RETURN collect({runId: r.runId, job: j.namespace + ':' + j.name, state: r.state,
                  start: coalesce(r.startTime, r.runningTime, r.stateTime), end: end,
                  version: x.version}) AS writes
}
CALL (d) {
  OPTIONAL MATCH (r:Run {state: 'COMPLETE'})-[x:WROTE]->(d)
  WHERE r.completeTime < $since
  WITH r, x ORDER BY r.completeTime DESC LIMIT 1
  OPTIONAL MATCH (r)-[:OF]->(j:Job)
  RETURN CASE WHEN r IS NOT NULL THEN {runId: r.runId, job: j.namespace + ':' + j.name,
                                        end: r.completeTime, version: x.version} END AS before
}
CALL (d) {
  OPTIONAL MATCH (j:Job)-[x:READS]->(d) WHERE x.retired IS NULL
  WITH j WHERE j IS NOT NULL
  OPTIONAL CALL (j) {
    MATCH (r:Run)-[:OF]->(j)
    RETURN r ORDER BY coalesce(r.startTime, r.runningTime, r.stateTime) DESC LIMIT 1
  }
  RETURN collect({job: j.namespace + ':' + j.name, lastRunId: r.runId,
                  lastStart: coalesce(r.startTime, r.runningTime, r.stateTime)}) AS readers
}
CALL (d) {
  OPTIONAL MATCH (j:Job)-[x:WRITES]->(d) WHERE x.retired IS NULL
  RETURN [k IN collect(j.namespace + ':' + j.name) WHERE k IS NOT NULL] AS writers
}
RETURN d.namespace AS namespace, d.name AS name, reads, writes, before, readers, writers,
       COLLECT { MATCH (d)-[:SYMLINK]-{1,4}(a:Dataset) WHERE a <> d
                 RETURN DISTINCT a.namespace + ':' + a.name } AS otherNames
ORDER BY namespace, name

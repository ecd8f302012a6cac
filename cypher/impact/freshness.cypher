// Answers: freshness of a dataset: when a successful run last wrote it, its recent successful
// writes (completed runs that wrote it, newest first, to judge its usual cadence) and the latest
// run of each job writing it.
// Param $namespace: dataset namespace
// Param $name: dataset name
// Param $asOf: only runs finished at or before this time; null for now
// Returns: namespace, name, successes (newest first, up to 30), latestRuns (job, runId, state, time, errorMessage)
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'marts.revenue_by_country'
// :param asOf => null
MATCH (n:Dataset {namespace: $namespace, name: $name})
USING INDEX SEEK n:Dataset(namespace, name)
// a table with several names (symlinks) is written under any of them
WITH n, [n] + COLLECT { MATCH (n)(()-[:DERIVED_FROM {alias: true}]->()){1,4}(a:Dataset)
                        RETURN DISTINCT a } AS names
CALL (names) {
  // only completed runs that wrote this dataset (not every run of a job that writes it)
  UNWIND names AS m
  OPTIONAL MATCH (r:Run {state: 'COMPLETE'})-[:WROTE]->(m)
  WITH DISTINCT r WHERE r IS NULL OR $asOf IS NULL OR r.completeTime <= $asOf
  WITH r ORDER BY r.completeTime DESC LIMIT 30
  RETURN collect(r.completeTime) AS successes
}
CALL (names) {
  UNWIND names AS m
  OPTIONAL MATCH (j:Job)-[:WRITES]->(m)
  WITH DISTINCT j
  OPTIONAL CALL (j) {
    MATCH (r:Run)-[:OF]->(j)
    WHERE r.state IS NOT NULL AND ($asOf IS NULL OR r.stateTime <= $asOf)
    RETURN r ORDER BY r.stateTime DESC LIMIT 1
  }
  WITH j, r WHERE j IS NOT NULL
  RETURN collect({job: j.namespace + ':' + j.name, runId: r.runId, state: r.state, time: r.stateTime,
                  errorMessage: r.errorMessage}) AS latestRuns
}
RETURN n.namespace AS namespace, n.name AS name, successes, latestRuns

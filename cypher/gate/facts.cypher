// Answers: what a gate (impact.policy.gate) asks of each dataset on the way to the one gated: its
// recent successful writes (completed runs that wrote it, under any of its names, newest first,
// to judge whether it is late), the latest run of each job writing it, and its failed
// data-quality assertions.
// Param $datasets: the datasets, a list of {namespace, name}
// Returns: namespace, name, successes (newest first, up to 30), latestRuns (job, runId, state, time, errorMessage), failedAssertions
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'marts.revenue_by_country'}]
UNWIND $datasets AS one
MATCH (n:Dataset {namespace: one.namespace, name: one.name})
WITH n, [n] + COLLECT { MATCH (n)(()-[:DERIVED_FROM {alias: true}]->()){1,4}(a:Dataset)
                        RETURN DISTINCT a } AS names
CALL (names) {
  UNWIND names AS m
  OPTIONAL MATCH (r:Run {state: 'COMPLETE'})-[:WROTE]->(m)
  WITH DISTINCT r WHERE r IS NOT NULL
  WITH r ORDER BY r.completeTime DESC LIMIT 30
  RETURN collect(r.completeTime) AS successes
}
CALL (names) {
  UNWIND names AS m
  OPTIONAL MATCH (j:Job)-[w:WRITES]->(m) WHERE w.retired IS NULL
  WITH DISTINCT j
  OPTIONAL CALL (j) {
    MATCH (r:Run)-[:OF]->(j)
    WHERE r.state IS NOT NULL
    RETURN r ORDER BY r.stateTime DESC LIMIT 1
  }
  WITH j, r WHERE j IS NOT NULL AND r IS NOT NULL
  RETURN collect({job: j.namespace + ':' + j.name, runId: r.runId, state: r.state,
                  time: r.stateTime, errorMessage: r.errorMessage}) AS latestRuns
}
RETURN n.namespace AS namespace, n.name AS name, successes, latestRuns,
       coalesce(n.failedAssertions, []) AS failedAssertions

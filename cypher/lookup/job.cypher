// Answers: one job in full: properties, what it reads and writes, its parent job, and its latest runs.
// Param $namespace: job namespace
// Param $name: job name
// Param $runs: how many of the latest runs to return
// Returns: props, reads, writes, parents, runs (newest first) (or no row if unknown)
// :param namespace => 'shop-nightly'
// :param name => 'revenue_by_country'
// :param runs => 10
MATCH (j:Job {namespace: $namespace, name: $name})
USING INDEX SEEK j:Job(namespace, name)
OPTIONAL CALL (j) {
  MATCH (r:Run)-[:OF]->(j) WHERE r.state IS NOT NULL
  WITH r ORDER BY r.stateTime DESC LIMIT $runs
  RETURN collect({runId: r.runId, state: r.state, start: r.startTime,
                  end: coalesce(r.completeTime, r.failTime, r.abortTime),
                  errorMessage: r.errorMessage}) AS runs
}
RETURN properties(j) AS props,
       [(j)-[:READS]->(d:Dataset) | d.namespace + ':' + d.name] AS reads,
       [(j)-[:WRITES]->(d:Dataset) | d.namespace + ':' + d.name] AS writes,
       COLLECT { MATCH (j)<-[:OF]-(:Run)-[:PARENT]->(:Run)-[:OF]->(p:Job) RETURN DISTINCT p.namespace + ':' + p.name } AS parents,
       coalesce(runs, []) AS runs

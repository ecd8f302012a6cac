// Answers: one job in full: properties, what it reads and writes, its parent job, and its latest runs.
// Param $namespace: job namespace
// Param $name: job name
// Param $runs: how many of the latest runs to return
// Returns: props, reads, writes, parents, children (child jobs with their latest run), runs (newest first) (or no row if unknown)
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
       COLLECT { MATCH (j)<-[:OF]-(:Run)<-[:PARENT]-(:Run)-[:OF]->(c:Job) WHERE c <> j
                 WITH DISTINCT c ORDER BY c.namespace, c.name
                 RETURN {job: c.namespace + ':' + c.name, latest: COLLECT {
                           MATCH (cr:Run)-[:OF]->(c) WHERE cr.state IS NOT NULL
                           RETURN {runId: cr.runId, state: cr.state, time: cr.stateTime}
                           ORDER BY cr.stateTime DESC LIMIT 1 }[0]} } AS children,
       coalesce(runs, []) AS runs

// Answers: jobs as Marquez shows them, a page at a time (all, one namespace's, or one by name),
// the latest updated first as Marquez orders them (JobDao.findAll: updated_at DESC): current
// inputs and outputs, parent job, facets and the latest runs.
// Param $namespace: the namespace, or null for all
// Param $name: one job's name, or null for all
// Param $keys: instead of $namespace and $name, these jobs ({namespace, name} each), or null
// Param $states: keep jobs whose latest run is in one of these states (START, RUNNING, OTHER, COMPLETE, FAIL, ABORT, or NEW: made by the legacy run write, not started), or null for all
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Param $runs: how many of the latest runs to return
// Returns: props, apiTags (tags set through the API), inputs, outputs (current: not retired), parent (the job of its latest run's parent run), runs (newest first: props of each run, with its inputs and outputs), total
// :param namespace => 'food_delivery'
// :param name => null
// :param keys => null
// :param states => null
// :param skip => 0
// :param limit => 100
// :param runs => 10
CALL () {
  // every job, or a namespace's, only when no keys are given: a row to start from, or none (a
  // predicate on $keys alone is checked per node, after reading every job)
  UNWIND CASE WHEN $keys IS NULL THEN [true] ELSE [] END AS listing
  MATCH (j:Job)
  WHERE ($namespace IS NULL OR j.namespace = $namespace) AND ($name IS NULL OR j.name = $name)
  RETURN j
  UNION
  UNWIND coalesce($keys, []) AS k
  MATCH (j:Job {namespace: k.namespace, name: k.name})
  RETURN j
}
WITH j WHERE j.deleted IS NULL
OPTIONAL CALL (j) {
  MATCH (r:Run)-[:OF]->(j) WHERE r.state IS NOT NULL
  // NEW: made by Marquez's legacy run write and not started since (impact.marquez.models.run_state)
  RETURN CASE WHEN r.state = 'OTHER' AND r.`facet.marquezRunArgs` IS NOT NULL THEN 'NEW'
              ELSE r.state END AS lastState ORDER BY r.stateTime DESC LIMIT 1
}
WITH j WHERE $states IS NULL OR lastState IN $states
ORDER BY j.lastSeen DESC, j.namespace, j.name
WITH collect(j) AS found
UNWIND found[$skip..$skip + $limit] AS j
CALL (j) {
  OPTIONAL MATCH (r:Run)-[:OF]->(j) WHERE r.state IS NOT NULL
  WITH r ORDER BY r.stateTime DESC LIMIT $runs
  RETURN collect(CASE WHEN r IS NOT NULL THEN {props: properties(r),
                  inputs: [(r)-[:READ]->(d:Dataset) | {namespace: d.namespace, name: d.name}],
                  outputs: [(r)-[:WROTE]->(d:Dataset) | {namespace: d.namespace, name: d.name}]} END) AS runs
}
RETURN properties(j) AS props,
       COLLECT { MATCH (j)-[e:READS]->(d:Dataset) WHERE e.retired IS NULL
                 RETURN {namespace: d.namespace, name: d.name} AS d ORDER BY d.namespace, d.name } AS inputs,
       COLLECT { MATCH (j)-[e:WRITES]->(d:Dataset) WHERE e.retired IS NULL
                 RETURN {namespace: d.namespace, name: d.name} AS d ORDER BY d.namespace, d.name } AS outputs,
       COLLECT { MATCH (j)<-[:OF]-(r:Run)-[:PARENT]->(:Run)-[:OF]->(p:Job)
                 RETURN {namespace: p.namespace, name: p.name} AS p ORDER BY r.stateTime DESC LIMIT 1 }[0] AS parent,
       [(j)-[:TAGGED]->(t:Tag) | t.name] AS apiTags, runs, size(found) AS total

// Answers: jobs, optionally of one namespace, a page at a time, each with its latest run.
// Param $namespace: namespace to list, or null for all
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: namespace, name, description, owners, latestRun, lastSeen, and the total count
// :param namespace => null
// :param skip => 0
// :param limit => 50
MATCH (j:Job) WHERE $namespace IS NULL OR j.namespace = $namespace
WITH j ORDER BY j.namespace, j.name
WITH collect(j) AS found
UNWIND found[$skip..$skip + $limit] AS j
OPTIONAL CALL (j) {
  MATCH (r:Run)-[:OF]->(j) WHERE r.state IS NOT NULL
  RETURN r ORDER BY r.stateTime DESC LIMIT 1
}
RETURN j.namespace AS namespace, j.name AS name, j.description AS description,
       coalesce(j.owners, []) AS owners, coalesce(j.stub, false) AS stub,
       CASE WHEN r IS NULL THEN null ELSE {runId: r.runId, state: r.state, time: r.stateTime} END AS latestRun,
       j.lastSeen AS lastSeen, size(found) AS total

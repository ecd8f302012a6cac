// Answers: runs as Marquez shows them: the runs of one job, newest first, a page at a time, or one
// run by its id; each with what it read and wrote.
// Param $namespace: the job's namespace (ignored when $runId is given)
// Param $name: the job's name (ignored when $runId is given)
// Param $runId: one run's UUID, or null for the job's runs
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: props, job (namespace, name), inputs, outputs (namespace, name, version), parent (runId, namespace, name of its parent run), total
// :param namespace => 'food_delivery'
// :param name => 'etl_orders'
// :param runId => null
// :param skip => 0
// :param limit => 100
CALL () {
  MATCH (r:Run {runId: toLower($runId)})-[:OF]->(j:Job) RETURN r, j
  UNION
  MATCH (r:Run)-[:OF]->(j:Job {namespace: $namespace, name: $name})
  WHERE $runId IS NULL AND r.state IS NOT NULL
  RETURN r, j
}
WITH r, j ORDER BY r.stateTime DESC, r.runId
WITH collect({r: r, j: j}) AS found
UNWIND found[$skip..$skip + $limit] AS f
WITH f.r AS r, f.j AS j, found
RETURN properties(r) AS props, {namespace: j.namespace, name: j.name} AS job,
       COLLECT { MATCH (r)-[x:READ]->(d:Dataset)
                 RETURN {namespace: d.namespace, name: d.name, version: x.version} AS d
                 ORDER BY d.namespace, d.name } AS inputs,
       COLLECT { MATCH (r)-[x:WROTE]->(d:Dataset)
                 RETURN {namespace: d.namespace, name: d.name, version: x.version} AS d
                 ORDER BY d.namespace, d.name } AS outputs,
       [(r)-[:PARENT]->(pr:Run)-[:OF]->(pj:Job)
         | {runId: pr.runId, namespace: pj.namespace, name: pj.name}][0] AS parent,
       size(found) AS total

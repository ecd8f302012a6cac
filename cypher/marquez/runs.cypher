// Answers: runs as Marquez shows them: the runs of one job, newest first, a page at a time, or one
// run by its id; each with what it read and wrote. A parent run that sent no event of its own
// started with its first child run and shows the state and times of its latest one.
// Param $namespace: the job's namespace (ignored when $runId is given)
// Param $name: the job's name (ignored when $runId is given)
// Param $runId: one run's UUID, or null for the job's runs
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: props, job (namespace, name), inputs (namespace, name, version, producedBy: the run that wrote the version read), outputs (namespace, name, version), parent (runId, namespace, name of its parent run), total
// :param namespace => 'food_delivery'
// :param name => 'etl_orders'
// :param runId => null
// :param skip => 0
// :param limit => 100
CALL () {
  MATCH (r:Run {runId: toLower($runId)})-[:OF]->(j:Job) RETURN r, j
  UNION
  MATCH (r:Run)-[:OF]->(j:Job {namespace: $namespace, name: $name})
  WHERE $runId IS NULL AND (r.state IS NOT NULL OR EXISTS { (:Run)-[:PARENT]->(r) })
  RETURN r, j
}
// a run known only as its children's parent (an Airflow DAG run) started with its first child
// and is as far as its latest child (Marquez gives it the state of the child event that made it)
WITH r, j, CASE WHEN r.state IS NULL THEN head(COLLECT {
       MATCH (c:Run)-[:PARENT]->(r) WHERE c.state IS NOT NULL
       RETURN c ORDER BY c.stateTime DESC, c.runId LIMIT 1 }) END AS child
WITH r, j, child ORDER BY coalesce(r.stateTime, child.stateTime) DESC, r.runId
WITH collect({r: r, j: j, child: child}) AS found
UNWIND found[$skip..$skip + $limit] AS f
WITH f.r AS r, f.j AS j, f.child AS child, properties(f.r) AS own, found
RETURN CASE WHEN child IS NULL THEN own
            ELSE own {.*, state: child.state, stateTime: child.stateTime,
                      startTime: COLLECT { MATCH (c:Run)-[:PARENT]->(r)
                                           WITH coalesce(c.startTime, c.runningTime) AS t
                                           WHERE t IS NOT NULL RETURN t ORDER BY t LIMIT 1 }[0],
                      completeTime: child.completeTime, failTime: child.failTime,
                      abortTime: child.abortTime} END AS props,
       {namespace: j.namespace, name: j.name} AS job,
       // a read is of the version before the run: the latest write of it by another run, no
       // later than this run's end (a run that reads and writes a table reads the old version)
       COLLECT { MATCH (r)-[x:READ]->(d:Dataset)
                 OPTIONAL CALL (r, d) {
                   MATCH (w:Run)-[y:WROTE]->(d)
                   WHERE w <> r AND y.firstSeen <= coalesce(r.completeTime, r.failTime,
                                                             r.abortTime, r.stateTime)
                   RETURN w.runId AS producedBy ORDER BY y.firstSeen DESC, w.runId DESC LIMIT 1
                 }
                 RETURN {namespace: d.namespace, name: d.name, version: x.version,
                         producedBy: producedBy} AS d
                 ORDER BY d.namespace, d.name } AS inputs,
       COLLECT { MATCH (r)-[x:WROTE]->(d:Dataset)
                 RETURN {namespace: d.namespace, name: d.name, version: x.version} AS d
                 ORDER BY d.namespace, d.name } AS outputs,
       [(r)-[:PARENT]->(pr:Run)-[:OF]->(pj:Job)
         | {runId: pr.runId, namespace: pj.namespace, name: pj.name}][0] AS parent,
       size(found) AS total

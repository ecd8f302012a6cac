// Answers: for Marquez's run lineage: each given run with its job, times and state, and each of
// its inputs with the run that produced the version it read: of the runs that reported writing
// that dataset (from their first event naming it as an output) no later than this run ended (or
// its latest event, while it runs), the latest.
// Param $runIds: the runs' UUIDs
// Returns: props (the run's), job (namespace, name), inputs (namespace, name, version, producedBy: the producing run's id), outputs (namespace, name)
// :param runIds => ['a43a8523-349f-4296-807f-3354ac491990']
UNWIND $runIds AS id
MATCH (r:Run {runId: toLower(id)})-[:OF]->(j:Job)
WITH r, j, coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime) AS ended
RETURN properties(r) AS props, {namespace: j.namespace, name: j.name} AS job,
       COLLECT { MATCH (r)-[x:READ]->(d:Dataset)
                 OPTIONAL CALL (d, ended) {
                   MATCH (w:Run)-[x:WROTE]->(d)
                   WITH w, x.firstSeen AS at
                   WHERE at <= ended
                   RETURN w.runId AS producedBy ORDER BY at DESC LIMIT 1
                 }
                 RETURN {namespace: d.namespace, name: d.name, version: x.version,
                         producedBy: producedBy} AS i ORDER BY i.namespace, i.name } AS inputs,
       [(r)-[:WROTE]->(d:Dataset) | {namespace: d.namespace, name: d.name}] AS outputs

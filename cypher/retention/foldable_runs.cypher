// Answers: which runs retention folds into summary lineage (docs/graph-model.md, "Retention"):
// runs whose latest event is before the detailed window's start, and parent runs that never sent
// an event (stubs) with no child run left, except what is kept however old: each job's latest
// run, its reference run (refRunId), for each of its outputs the latest completed run that
// stated column lineage for it, and a parent run while any child run is left. Oldest first.
// Param $before: the detailed window's start
// Param $limit: at most this many runs
// Returns: runId, job ({namespace, name}), state, time
// :param before => datetime('2024-06-01T00:00:00Z')
// :param limit => 1000
MATCH (j:Job)
WHERE EXISTS { MATCH (r:Run)-[:OF]->(j)
               WHERE r.lastSeen < $before OR (r.stub AND NOT EXISTS { (:Run)-[:PARENT]->(r) }) }
CALL (j) {
  MATCH (r:Run)-[:OF]->(j)
  RETURN r AS latest ORDER BY r.stateTime DESC, r.runId DESC LIMIT 1
}
CALL (j) {
  OPTIONAL MATCH (j)-[:WRITES]->(o:Dataset)
  OPTIONAL CALL (j, o) {
    MATCH (o)<-[w:WROTE]-(r:Run {state: 'COMPLETE'})-[:OF]->(j)
    WHERE w.lineage IS NOT NULL
    RETURN r.runId AS stating ORDER BY r.completeTime DESC, r.runId DESC LIMIT 1
  }
  RETURN collect(stating) AS stating
}
MATCH (r:Run)-[:OF]->(j)
WHERE (r.lastSeen < $before OR (r.stub AND NOT EXISTS { (:Run)-[:PARENT]->(r) }))
  AND r <> latest AND r.runId <> coalesce(j.refRunId, '') AND NOT r.runId IN stating
  AND NOT EXISTS { (:Run)-[:PARENT]->(r) }
RETURN r.runId AS runId, j {.namespace, .name} AS job, r.state AS state,
       coalesce(r.stateTime, r.lastSeen) AS time
ORDER BY time, runId
LIMIT $limit

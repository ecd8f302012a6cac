// Answers: which runs retention folds into summary lineage (docs/graph-model.md, "Retention"):
// runs whose latest event is before the detailed window's start, and parent runs that never sent
// an event (stubs) with no child run left, except what is kept however old: each job's latest
// run that sent events, its reference run (refRunId), for each of its outputs the latest completed run that
// stated column lineage for it, and a parent run while any child run is left. Oldest first.
// The candidates are found by the indexes run_last_seen and run_stub, so that a scan costs what
// it may fold, not every run of every job (docs/benchmarks.md, "Retention").
// Param $before: the detailed window's start
// Param $limit: at most this many runs
// Returns: runId, job ({namespace, name}), state, time
// :param before => datetime('2024-06-01T00:00:00Z')
// :param limit => 1000
CALL () {
  MATCH (r:Run) WHERE r.lastSeen < $before
  RETURN r
  UNION
  MATCH (r:Run) WHERE r.stub = true
  RETURN r
}
MATCH (r)-[:OF]->(j:Job)
WHERE NOT EXISTS { (:Run)-[:PARENT]->(r) }
  AND r.runId <> coalesce(j.refRunId, '')
  // not the job's latest run: another run that sent events comes before it in (stateTime DESC,
  // runId DESC), the order in which a missing stateTime comes first; a stub is never one
  AND (r.stub = true OR EXISTS { MATCH (n:Run)-[:OF]->(j)
               WHERE n <> r AND NOT coalesce(n.stub, false) AND (CASE WHEN n.stateTime IS NULL OR r.stateTime IS NULL
                                      THEN r.stateTime IS NOT NULL OR (n.stateTime IS NULL AND n.runId > r.runId)
                                      ELSE n.stateTime > r.stateTime OR (n.stateTime = r.stateTime AND n.runId > r.runId) END) })
  // nor, for an output of its job, the latest completed run (completeTime DESC, runId DESC) that
  // stated column lineage for it
  AND NOT EXISTS { MATCH (j)-[:WRITES]->(o:Dataset)<-[w:WROTE]-(r)
                   WHERE r.state = 'COMPLETE' AND w.lineage IS NOT NULL
                     AND NOT EXISTS { MATCH (o)<-[v:WROTE]-(n:Run {state: 'COMPLETE'})-[:OF]->(j)
                                      WHERE v.lineage IS NOT NULL AND n <> r AND (CASE WHEN n.completeTime IS NULL OR r.completeTime IS NULL
                                        THEN r.completeTime IS NOT NULL OR (n.completeTime IS NULL AND n.runId > r.runId)
                                        ELSE n.completeTime > r.completeTime OR (n.completeTime = r.completeTime AND n.runId > r.runId) END) } }
RETURN r.runId AS runId, j {.namespace, .name} AS job, r.state AS state,
       coalesce(r.stateTime, r.lastSeen) AS time
ORDER BY time, runId
LIMIT $limit

// Answers: every job that reported itself (not soft-deleted, not a stub) with its latest runs,
// for cadence, silence and unfinished runs (docs/health.md).
// Param $runs: how many of its latest runs
// Returns: namespace, name, lastSeen (its latest event), emitsColumnLineage, outputs (namespace:name, current), runs (newest first: runId, state, started, ended, completed)
// :param runs => 20
MATCH (j:Job) WHERE j.deleted IS NULL AND NOT coalesce(j.stub, false)
OPTIONAL CALL (j) {
  MATCH (r:Run)-[:OF]->(j) WHERE r.state IS NOT NULL
  WITH r, coalesce(r.startTime, r.runningTime, r.otherTime, r.stateTime) AS started
  ORDER BY started DESC LIMIT $runs
  RETURN collect({runId: r.runId, state: r.state, started: started,
                  ended: coalesce(r.completeTime, r.failTime, r.abortTime),
                  completed: r.completeTime}) AS runs
}
RETURN j.namespace AS namespace, j.name AS name, j.lastSeen AS lastSeen,
       j.lineageDigest IS NOT NULL AS emitsColumnLineage,
       [(j)-[w:WRITES]->(d:Dataset) WHERE w.retired IS NULL | d.namespace + ':' + d.name] AS outputs,
       coalesce(runs, []) AS runs
ORDER BY namespace, name

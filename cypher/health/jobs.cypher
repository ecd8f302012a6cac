// Answers: every job that reported itself (not soft-deleted, not a stub) with its latest runs,
// for cadence, silence and unfinished runs (docs/health.md).
// Param $runs: how many of its latest runs
// Returns: namespace, name, lastSeen (its latest event), emitsColumnLineage, reads (it reads a dataset now), outputs (namespace:name, current), runs (newest first: runId, state, started, ended, completed); times in epoch milliseconds
// :param runs => 20
MATCH (j:Job) WHERE j.deleted IS NULL AND NOT coalesce(j.stub, false)
OPTIONAL CALL (j) {
  MATCH (r:Run)-[:OF]->(j) WHERE r.state IS NOT NULL
  WITH r, coalesce(r.startTime, r.runningTime, r.otherTime, r.stateTime) AS started
  ORDER BY started DESC LIMIT $runs
  // times as epoch milliseconds (see health/datasets)
  RETURN collect({runId: r.runId, state: r.state, started: started.epochMillis,
                  ended: coalesce(r.completeTime, r.failTime, r.abortTime).epochMillis,
                  completed: r.completeTime.epochMillis}) AS runs
}
RETURN j.namespace AS namespace, j.name AS name, j.lastSeen.epochMillis AS lastSeen,
       j.lineageDigest IS NOT NULL AS emitsColumnLineage,
       EXISTS { (j)-[r:READS]->(:Dataset) WHERE r.retired IS NULL } AS reads,
       [(j)-[w:WRITES]->(d:Dataset) WHERE w.retired IS NULL | d.namespace + ':' + d.name] AS outputs,
       coalesce(runs, []) AS runs
ORDER BY namespace, name

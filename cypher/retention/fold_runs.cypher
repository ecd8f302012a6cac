// Answers: folds runs into summary lineage (docs/graph-model.md, "Retention"): each run's job
// counts it by state and keeps its last success and failure; each edge the run stated (its
// job's READS of what it read and WRITES of what it wrote, the job's dataset DERIVED_FROM edges
// from what it read to what it wrote, and the job's column edges into what it wrote whose
// lineages include one the run stated for that output) counts it and keeps the latest such
// run's id, state and time, and the latest completed one's id and completeTime; then the runs are removed with their READ, WROTE, OF and PARENT
// edges. Runs to fold are chosen by retention/foldable_runs.
// Param $runs: the run ids to fold
// Returns: folded (how many runs), edges (how many edge counts moved)
// :param runs => ['0190b4e4-0000-7000-8000-000000000001']
// one fold at a time, whatever process folds (several workers on a Kafka log): a run is read
// only once the lock is held, so a run another fold removed is not counted again
CALL () {
  MERGE (k:Retention {key: 'graph'})
  SET k.foldedAt = datetime()
}
CALL () {
  UNWIND $runs AS id
  MATCH (r:Run {runId: id})-[:OF]->(j:Job)
  USING INDEX SEEK r:Run(runId)
  WHERE r.state IS NOT NULL  // a parent that never sent an event is no run of its job's counts
  WITH j, r, coalesce(r.stateTime, r.lastSeen) AS time ORDER BY time, r.runId
  WITH j, collect({id: r.runId, state: r.state, time: time}) AS runs
  WITH j, runs, [x IN runs WHERE x.state = 'COMPLETE'] AS ok,
       [x IN runs WHERE x.state IN ['FAIL', 'ABORT']] AS bad
  FOREACH (s IN ['START', 'RUNNING', 'COMPLETE', 'FAIL', 'ABORT', 'OTHER'] |
    FOREACH (n IN CASE WHEN any(x IN runs WHERE x.state = s) THEN [size([x IN runs WHERE x.state = s])] ELSE [] END |
      SET j['summary.' + s] = coalesce(j['summary.' + s], 0) + n))
  SET j.`summary.since` = CASE WHEN j.`summary.since` IS NULL OR runs[0].time < j.`summary.since`
                               THEN runs[0].time ELSE j.`summary.since` END,
      j.`summary.until` = CASE WHEN j.`summary.until` IS NULL OR runs[-1].time > j.`summary.until`
                               THEN runs[-1].time ELSE j.`summary.until` END
  FOREACH (x IN CASE WHEN size(ok) > 0 AND (j.`summary.lastSuccess` IS NULL
                                             OR ok[-1].time > j.`summary.lastSuccess`)
                     THEN [ok[-1]] ELSE [] END |
    SET j.`summary.lastSuccess` = x.time, j.`summary.lastSuccessRunId` = x.id)
  FOREACH (x IN CASE WHEN size(bad) > 0 AND (j.`summary.lastFailure` IS NULL
                                              OR bad[-1].time > j.`summary.lastFailure`)
                     THEN [bad[-1]] ELSE [] END |
    SET j.`summary.lastFailure` = x.time, j.`summary.lastFailureRunId` = x.id)
}
CALL () {
  UNWIND $runs AS id
  MATCH (r:Run {runId: id})-[:OF]->(j:Job)
  USING INDEX SEEK r:Run(runId)
  CALL (r, j) {
    MATCH (r)-[:READ]->(:Dataset)<-[e:READS]-(j)
    RETURN e
    UNION
    MATCH (r)-[:WROTE]->(:Dataset)<-[e:WRITES]-(j)
    RETURN e
    UNION
    MATCH (r)-[:WROTE]->(:Dataset)-[e:DERIVED_FROM]->(i:Dataset)
    WHERE e.jobNamespace = j.namespace AND e.jobName = j.name AND e.alias IS NULL
      AND e.flow IS NULL AND e.boundary IS NULL AND e.declaredOnly IS NULL
      AND EXISTS { (r)-[:READ]->(i) }
    RETURN e
    UNION
    MATCH (r)-[w:WROTE]->(:Dataset)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(:Column)
    WHERE w.lineage IS NOT NULL AND e.jobNamespace = j.namespace AND e.jobName = j.name
      AND e.alias IS NULL AND e.declaredOnly IS NULL
      AND (e.lineages IS NULL OR any(l IN e.lineages WHERE l IN w.lineage))
    RETURN e
  }
  WITH e, r, coalesce(r.stateTime, r.lastSeen) AS time ORDER BY time DESC, r.runId DESC
  WITH e, count(*) AS n, collect({id: r.runId, state: r.state, time: time})[0] AS last,
       // the latest completed one, as the retirement of lineage reads runs (by completeTime)
       collect(CASE WHEN r.state = 'COMPLETE' THEN {id: r.runId, time: r.completeTime} END) AS ok
  WITH e, n, last, [x IN ok WHERE x.time IS NOT NULL] AS ok
  WITH e, n, last, reduce(a = null, x IN ok |
         CASE WHEN a IS NULL OR x.time > a.time OR (x.time = a.time AND x.id > a.id) THEN x ELSE a END) AS ok
  SET e.`summary.runs` = coalesce(e.`summary.runs`, 0) + n
  FOREACH (x IN CASE WHEN e.`summary.lastRunTime` IS NULL OR last.time >= e.`summary.lastRunTime`
                     THEN [last] ELSE [] END |
    SET e.`summary.lastRunId` = x.id, e.`summary.lastRunState` = x.state,
        e.`summary.lastRunTime` = x.time)
  FOREACH (x IN CASE WHEN ok IS NOT NULL AND (e.`summary.lastCompleteTime` IS NULL
                                              OR ok.time > e.`summary.lastCompleteTime`)
                     THEN [ok] ELSE [] END |
    SET e.`summary.lastCompleteRunId` = x.id, e.`summary.lastCompleteTime` = x.time)
  RETURN sum(n) AS edges
}
CALL () {
  UNWIND $runs AS id
  MATCH (r:Run {runId: id})
  USING INDEX SEEK r:Run(runId)
  DETACH DELETE r
  RETURN count(*) AS folded
}
RETURN folded, edges

// Answers: upserts Run nodes OF their Job; state by precedence (COMPLETE/FAIL/ABORT over RUNNING
// over START over OTHER), then by the event's stamp (time, then digest; kept as '@state'), so
// arrival order does not matter.
// Param $rows: one map per run {runId, jobNamespace, jobName, state, rank, stateStamp, stateTime, stateTimeOriginal, stateTimes, firstSeen, lastSeen, props, stamp, stamps (the properties whose stamp is older than stamp), digests}
// Returns: duplicates, how many of the given event digests were already recorded
// :param rows => [{runId: '0190b4e4-0000-7000-8000-000000000001', jobNamespace: 'example', jobName: 'etl_orders', state: 'COMPLETE', rank: 3, stateStamp: '2024-05-01T02:00:00.000000Z|0123456789abcdef', stateTime: datetime('2024-05-01T02:00:00Z'), stateTimeOriginal: '2024-05-01T02:00:00Z', stateTimes: {completeTime: datetime('2024-05-01T02:00:00Z')}, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), props: {}, stamp: '2024-05-01T02:00:00.000000Z|0123456789abcdef', stamps: null, digests: []}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen), stateTime: datetime(wire.stateTime)} AS row
MERGE (j:Job {namespace: row.jobNamespace, name: row.jobName})
  ON CREATE SET j.stub = false
MERGE (x:Run {runId: row.runId})
WITH j, x, row,
     // OTHER is no transition: among OTHER events the earliest holds (when the run became known)
     (x.stateRank IS NULL OR row.rank > x.stateRank
      OR (row.rank = x.stateRank AND CASE WHEN row.rank = 0
                                          THEN x.`@state` IS NULL OR row.stateStamp <= x.`@state`
                                          ELSE row.stateStamp >= coalesce(x.`@state`, '') END)) AS wins,
     // a run id reported for two jobs (a producer's bug): the job of the latest event
     (x.`@job` IS NULL OR row.stamp >= x.`@job`) AS jobWins,
     size([d IN row.digests WHERE d IN coalesce(x.events, [])]) AS dup
// a run is OF one job: that of its latest event
CALL (x, j, jobWins) {
  WITH x, j WHERE jobWins
  OPTIONAL MATCH (x)-[old:OF]->(other:Job) WHERE other <> j
  DELETE old
  MERGE (x)-[:OF]->(j)
}
// each property keeps the value of its latest stamp (event time, then event digest), kept beside
// it as '@' + its name: the same value whatever order the events arrive in
FOREACH (k IN [k IN keys(row.props) WHERE x['@' + k] IS NULL OR coalesce(row.stamps[k], row.stamp) > x['@' + k]] |
  SET x[k] = row.props[k], x['@' + k] = coalesce(row.stamps[k], row.stamp))
FOREACH (k IN keys(row.stateTimes) |
  SET x[k] = CASE WHEN x[k] IS NULL OR datetime(row.stateTimes[k]) > x[k] THEN datetime(row.stateTimes[k]) ELSE x[k] END)
SET x.stub = false,
    x.state = CASE WHEN wins THEN row.state ELSE x.state END,
    x.stateRank = CASE WHEN wins THEN row.rank ELSE x.stateRank END,
    x.`@state` = CASE WHEN wins THEN row.stateStamp ELSE x.`@state` END,
    x.stateTime = CASE WHEN wins THEN row.stateTime ELSE x.stateTime END,
    x.stateTimeOriginal = CASE WHEN wins THEN row.stateTimeOriginal ELSE x.stateTimeOriginal END,
    x.jobNamespace = CASE WHEN jobWins THEN row.jobNamespace ELSE x.jobNamespace END,
    x.jobName = CASE WHEN jobWins THEN row.jobName ELSE x.jobName END,
    x.`@job` = CASE WHEN jobWins THEN row.stamp ELSE x.`@job` END,
    x.events = coalesce(x.events, []) + [d IN row.digests WHERE NOT d IN coalesce(x.events, [])],
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN sum(dup) AS duplicates

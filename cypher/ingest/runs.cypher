// Answers: upserts Run nodes OF their Job; state by precedence (COMPLETE/FAIL/ABORT over RUNNING
// over START; OTHER never overrides), then by event time, so arrival order does not matter.
// Param $rows: one map per run {runId, jobNamespace, jobName, state, rank, stateTime, stateTimeOriginal, stateTimes, firstSeen, lastSeen, props, digests}
// Returns: duplicates, how many of the given event digests were already recorded
// :param rows => [{runId: '0190b4e4-0000-7000-8000-000000000001', jobNamespace: 'example', jobName: 'etl_orders', state: 'COMPLETE', rank: 3, stateTime: datetime('2024-05-01T02:00:00Z'), stateTimeOriginal: '2024-05-01T02:00:00Z', stateTimes: {completeTime: datetime('2024-05-01T02:00:00Z')}, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), props: {}, digests: []}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen), stateTime: datetime(wire.stateTime)} AS row
MERGE (j:Job {namespace: row.jobNamespace, name: row.jobName})
  ON CREATE SET j.stub = false
MERGE (x:Run {runId: row.runId})
MERGE (x)-[:OF]->(j)
WITH x, row,
     (x.stateRank IS NULL OR row.rank > x.stateRank
      OR (row.rank = x.stateRank AND row.rank > 0 AND row.stateTime >= x.stateTime)) AS wins,
     (x.propsTime IS NULL OR row.lastSeen >= x.propsTime) AS newer,
     size([d IN row.digests WHERE d IN coalesce(x.events, [])]) AS dup
FOREACH (k IN keys(row.props) |
  SET x[k] = CASE WHEN newer OR x[k] IS NULL THEN row.props[k] ELSE x[k] END)
FOREACH (k IN keys(row.stateTimes) |
  SET x[k] = CASE WHEN x[k] IS NULL OR datetime(row.stateTimes[k]) > x[k] THEN datetime(row.stateTimes[k]) ELSE x[k] END)
SET x.stub = false,
    x.state = CASE WHEN wins THEN row.state ELSE x.state END,
    x.stateRank = CASE WHEN wins THEN row.rank ELSE x.stateRank END,
    x.stateTime = CASE WHEN wins THEN row.stateTime ELSE x.stateTime END,
    x.stateTimeOriginal = CASE WHEN wins THEN row.stateTimeOriginal ELSE x.stateTimeOriginal END,
    x.jobNamespace = row.jobNamespace,
    x.jobName = row.jobName,
    x.propsTime = CASE WHEN newer THEN row.lastSeen ELSE x.propsTime END,
    x.events = coalesce(x.events, []) + [d IN row.digests WHERE NOT d IN coalesce(x.events, [])],
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END
RETURN sum(dup) AS duplicates

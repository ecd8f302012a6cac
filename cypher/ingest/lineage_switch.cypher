// Answers: before the column edges of a job are written one by one (ingest/column_edges), moves
// the times and run its current lineage gathered (lineageLastSeen, lineageRunId) onto the edges
// stamped with it, then makes the given lineage current if it is the newest seen (lineageDigest,
// lineageSince, lineageLastSeen, lineageRunId); ingest/column_edges stamps its edges.
// Param $rows: one map per job, its newest lineage in the batch {jobNamespace, jobName, digest, runId, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{jobNamespace: 'example', jobName: 'clean_orders', digest: '0123456789abcdef01234567', runId: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MATCH (j:Job {namespace: row.jobNamespace, name: row.jobName})
USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
CALL (j) {
  // a job's column edges start at columns of the datasets it writes
  MATCH (j)-[:WRITES]->(:Dataset)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(:Column)
  WHERE e.lineageDigest = j.lineageDigest AND e.jobNamespace = j.namespace AND e.jobName = j.name
  WITH j, e, e.lastSeen IS NULL OR j.lineageLastSeen >= e.lastSeen AS newer
  SET e.runId = CASE WHEN newer AND j.lineageRunId IS NOT NULL THEN j.lineageRunId ELSE e.runId END,
      e.lastSeen = CASE WHEN newer THEN j.lineageLastSeen ELSE e.lastSeen END
}
WITH j, row WHERE j.lineageLastSeen IS NULL OR row.lastSeen >= j.lineageLastSeen
SET j.lineageDigest = row.digest, j.lineageSince = row.firstSeen, j.lineageLastSeen = row.lastSeen,
    j.lineageRunId = row.runId

// Answers: records that jobs reported again the column lineage they already have, without
// rewriting its edges: the job's current lineage (lineageDigest) stays, and its lineageLastSeen and
// lineageRunId move on. A column edge of the job stamped with the job's lineageDigest was last seen
// at the later of its own lastSeen and the job's lineageLastSeen (and then in lineageRunId).
// Param $rows: one map per job {jobNamespace, jobName, digest, runId, firstSeen, lastSeen}
// Returns: missed, the [jobNamespace, jobName] whose column lineage must be written edge by edge (a
// new lineage, or an event older than the current lineage's lineageSince)
// :param rows => [{jobNamespace: 'example', jobName: 'clean_orders', digest: '0123456789abcdef01234567', runId: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
OPTIONAL MATCH (j:Job {namespace: row.jobNamespace, name: row.jobName})
  USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
  WHERE j.lineageDigest = row.digest AND j.lineageSince <= row.firstSeen
WITH row, j
CALL (row, j) {
  WITH row, j WHERE j IS NOT NULL
  WITH row, j, row.lastSeen >= j.lineageLastSeen AS newer
  SET j.lineageRunId = CASE WHEN newer AND row.runId IS NOT NULL THEN row.runId ELSE j.lineageRunId END,
      j.lineageLastSeen = CASE WHEN newer THEN row.lastSeen ELSE j.lineageLastSeen END
}
WITH row, j WHERE j IS NULL
RETURN collect([row.jobNamespace, row.jobName]) AS missed

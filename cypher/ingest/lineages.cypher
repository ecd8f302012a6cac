// Answers: keeps each job's current column lineage (lineageDigest, lineageSince, lineageLastSeen,
// lineageRunId) without rewriting its edges when the job reports the same lineage again: such an
// event only moves lineageLastSeen and lineageRunId (a touch). Any other lineage (new, changed,
// or older than lineageSince) first moves lineageLastSeen and lineageRunId onto the edges stamped
// with the current lineage, then becomes the current lineage if it is the newest; its edges are
// written one by one afterwards (ingest/column_edges), stamped with it if it is current. An edge
// stamped with its job's lineageDigest was last seen at the later of its own lastSeen and the
// job's lineageLastSeen (and then in lineageRunId).
// Param $rows: one map per job, its newest lineage in the batch {jobNamespace, jobName, digest, runId, firstSeen, lastSeen, force (the batch holds other lineages of it too: never a touch)}
// Returns: missed (the [jobNamespace, jobName] whose edges must be written), current (those of them whose given lineage is now the current one)
// :param rows => [{jobNamespace: 'example', jobName: 'clean_orders', digest: '0123456789abcdef01234567', runId: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), force: false}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MATCH (j:Job {namespace: row.jobNamespace, name: row.jobName})
USING INDEX SEEK j:Job(namespace, name)  // a seek even while the graph is young
// a touch: the current version again, not older than it (a missing version compares as null)
WITH row, j, NOT row.force
             AND coalesce(j.lineageDigest = row.digest AND j.lineageSince <= row.firstSeen, false) AS touch
CALL (row, j, touch) {
  WITH row, j, touch WHERE NOT touch AND j.lineageDigest IS NOT NULL
  // a job's column edges start at columns of the datasets it writes
  MATCH (j)-[:WRITES]->(:Dataset)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(:Column)
  WHERE e.lineageDigest = j.lineageDigest AND e.jobNamespace = j.namespace AND e.jobName = j.name
  WITH j, e, e.lastSeen IS NULL OR j.lineageLastSeen >= e.lastSeen AS newer
  SET e.runId = CASE WHEN newer AND j.lineageRunId IS NOT NULL THEN j.lineageRunId ELSE e.runId END,
      e.lastSeen = CASE WHEN newer THEN j.lineageLastSeen ELSE e.lastSeen END
}
WITH row, j, touch,
     NOT touch AND (j.lineageLastSeen IS NULL OR row.lastSeen > j.lineageLastSeen
                    OR (row.lastSeen = j.lineageLastSeen AND row.digest >= j.lineageDigest)) AS becomes,
     touch AND row.lastSeen >= j.lineageLastSeen AS later
SET j.lineageRunId = CASE WHEN becomes OR (later AND row.runId IS NOT NULL) THEN row.runId
                     ELSE j.lineageRunId END,
    j.lineageLastSeen = CASE WHEN becomes OR later THEN row.lastSeen ELSE j.lineageLastSeen END,
    // more than one lineage ever: its column edges may be retired by a later run (ingest/retire)
    j.lineageVaried = CASE WHEN row.force OR j.lineageDigest <> row.digest THEN true
                           ELSE j.lineageVaried END,
    j.lineageDigest = CASE WHEN becomes THEN row.digest ELSE j.lineageDigest END,
    j.lineageSince = CASE WHEN becomes THEN row.firstSeen ELSE j.lineageSince END
WITH row, j, touch
RETURN collect(CASE WHEN touch THEN null ELSE [row.jobNamespace, row.jobName] END) AS missed,
       collect(CASE WHEN NOT touch AND j.lineageDigest = row.digest THEN [row.jobNamespace, row.jobName] END) AS current

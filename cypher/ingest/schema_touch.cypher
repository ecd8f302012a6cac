// Answers: records that datasets were written again with the schema they already have, without
// rewriting their columns: the dataset's current written schema (schemaDigest) stays, and its
// schemaLastSeen moves on. A column stamped with the dataset's schemaDigest was last seen at the
// later of its own writtenLastSeen/lastSeen and the dataset's schemaLastSeen.
// Param $rows: one map per dataset {namespace, dataset, digest, firstSeen, lastSeen}
// Returns: missed, the [namespace, dataset] whose schema must be written column by column (a new
// schema, or an event older than the current schema's schemaSince)
// :param rows => [{namespace: 'example', dataset: 'public.orders', digest: '0123456789abcdef01234567', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
OPTIONAL MATCH (d:Dataset {namespace: row.namespace, name: row.dataset})
  USING INDEX SEEK d:Dataset(namespace, name)  // a seek even while the graph is young
  WHERE d.schemaDigest = row.digest AND d.schemaSince <= row.firstSeen
WITH row, d
CALL (row, d) {
  WITH row, d WHERE d IS NOT NULL
  SET d.schemaLastSeen = CASE WHEN row.lastSeen > d.schemaLastSeen THEN row.lastSeen ELSE d.schemaLastSeen END
}
WITH row, d WHERE d IS NULL
RETURN collect([row.namespace, row.dataset]) AS missed

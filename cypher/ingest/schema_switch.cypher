// Answers: before the columns of a dataset's schema are written one by one (ingest/columns), moves
// the times its current schema gathered (schemaLastSeen) onto the columns stamped with it, then
// makes the given schema current if it is the newest seen (schemaDigest, schemaSince,
// schemaLastSeen); ingest/columns stamps its columns.
// Param $rows: one map per dataset, its newest schema in the batch {namespace, dataset, digest, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{namespace: 'example', dataset: 'public.orders', digest: '0123456789abcdef01234567', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MATCH (d:Dataset {namespace: row.namespace, name: row.dataset})
USING INDEX SEEK d:Dataset(namespace, name)  // a seek even while the graph is young
CALL (d) {
  MATCH (d)-[:HAS_COLUMN]->(c:Column)
  WHERE c.schemaDigest = d.schemaDigest
  SET c.lastSeen = CASE WHEN c.lastSeen IS NULL OR d.schemaLastSeen > c.lastSeen THEN d.schemaLastSeen ELSE c.lastSeen END,
      c.writtenLastSeen = CASE WHEN c.writtenLastSeen IS NULL OR d.schemaLastSeen > c.writtenLastSeen
                          THEN d.schemaLastSeen ELSE c.writtenLastSeen END
}
WITH d, row WHERE d.schemaLastSeen IS NULL OR row.lastSeen >= d.schemaLastSeen
SET d.schemaDigest = row.digest, d.schemaSince = row.firstSeen, d.schemaLastSeen = row.lastSeen

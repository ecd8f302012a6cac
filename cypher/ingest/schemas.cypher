// Answers: keeps each dataset's current written schema (schemaDigest, schemaSince,
// schemaLastSeen) without rewriting its columns when a job writes the same schema again: such an
// event only moves schemaLastSeen (a touch). Any other schema (new, changed, or older than
// schemaSince) first moves schemaLastSeen onto the columns stamped with the current schema, then
// becomes the current schema if it is the newest (at the same time, the greatest digest), and
// the names of its columns, in order, the dataset's current columns (schemaColumns); its columns
// are written one by one afterwards
// (ingest/columns), stamped with it if it is current. A column stamped with its dataset's
// schemaDigest was last seen at the later of its own times and the dataset's schemaLastSeen.
// Param $rows: one map per dataset, its newest schema in the batch {namespace, dataset, digest, columnNames, firstSeen, lastSeen, force (the batch holds other schemas of it too: never a touch)}
// Returns: missed (the [namespace, dataset] whose columns must be written), current (those of them whose given schema is now the current one)
// :param rows => [{namespace: 'example', dataset: 'public.orders', digest: '0123456789abcdef01234567', columnNames: ['id', 'amount'], firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), force: false}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MATCH (d:Dataset {namespace: row.namespace, name: row.dataset})
USING INDEX SEEK d:Dataset(namespace, name)  // a seek even while the graph is young
// a touch: the current version again, not older than it (a missing version compares as null)
WITH row, d, NOT row.force
             AND coalesce(d.schemaDigest = row.digest AND d.schemaSince <= row.firstSeen, false) AS touch
CALL (row, d, touch) {
  WITH row, d, touch WHERE NOT touch AND d.schemaDigest IS NOT NULL
  MATCH (d)-[:HAS_COLUMN]->(c:Column)
  WHERE c.schemaDigest = d.schemaDigest
  SET c.lastSeen = CASE WHEN c.lastSeen IS NULL OR d.schemaLastSeen > c.lastSeen THEN d.schemaLastSeen ELSE c.lastSeen END,
      c.writtenLastSeen = CASE WHEN c.writtenLastSeen IS NULL OR d.schemaLastSeen > c.writtenLastSeen
                          THEN d.schemaLastSeen ELSE c.writtenLastSeen END
}
WITH row, d, touch,
     NOT touch AND (d.schemaLastSeen IS NULL OR row.lastSeen > d.schemaLastSeen
                    OR (row.lastSeen = d.schemaLastSeen AND row.digest >= d.schemaDigest)) AS becomes
SET d.schemaLastSeen = CASE WHEN becomes OR (touch AND row.lastSeen > d.schemaLastSeen) THEN row.lastSeen
                       ELSE d.schemaLastSeen END,
    d.schemaDigest = CASE WHEN becomes THEN row.digest ELSE d.schemaDigest END,
    d.schemaSince = CASE WHEN becomes THEN row.firstSeen ELSE d.schemaSince END,
    d.schemaColumns = CASE WHEN becomes THEN row.columnNames ELSE d.schemaColumns END
WITH row, d, touch
RETURN collect(CASE WHEN touch THEN null ELSE [row.namespace, row.dataset] END) AS missed,
       collect(CASE WHEN NOT touch AND d.schemaDigest = row.digest THEN [row.namespace, row.dataset] END) AS current

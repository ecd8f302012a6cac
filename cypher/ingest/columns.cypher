// Answers: upserts Column nodes from schema facets, each linked from its Dataset by HAS_COLUMN.
// A column stamped with its dataset's current written schema (schemaDigest) was last seen at the
// later of its own times and the dataset's schemaLastSeen (ingest/schemas, which ran first for the
// datasets of these rows).
// Param $rows: one map per column {namespace, dataset, name, type, description, firstSeen, lastSeen, written (the schema came from the dataset's producer, not a reader), stamp (the dataset's current written schema digest if the column belongs to it, else null)}
// Returns: nothing
// :param rows => [{namespace: 'example', dataset: 'public.orders', name: 'email', type: 'VARCHAR', description: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), written: true, stamp: null}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (d:Dataset {namespace: row.namespace, name: row.dataset})
MERGE (x:Column {namespace: row.namespace, dataset: row.dataset, name: row.name})
MERGE (d)-[:HAS_COLUMN]->(x)
WITH d, x, row, CASE WHEN x.schemaDigest = d.schemaDigest AND d.schemaLastSeen > x.lastSeen
                     THEN d.schemaLastSeen ELSE x.lastSeen END AS seen
WITH d, x, row, (seen IS NULL OR row.lastSeen >= seen) AS newer
SET x.schemaDigest = coalesce(row.stamp, x.schemaDigest),
    x.type = CASE WHEN (newer AND row.type IS NOT NULL) OR x.type IS NULL THEN row.type ELSE x.type END,
    x.description = CASE WHEN (newer AND row.description IS NOT NULL) OR x.description IS NULL
                    THEN row.description ELSE x.description END,
    x.inSchema = true,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END,
    x.writtenFirstSeen = CASE WHEN row.written AND (x.writtenFirstSeen IS NULL OR row.firstSeen < x.writtenFirstSeen)
                         THEN row.firstSeen ELSE x.writtenFirstSeen END,
    x.writtenLastSeen = CASE WHEN row.written AND (x.writtenLastSeen IS NULL OR row.lastSeen > x.writtenLastSeen)
                        THEN row.lastSeen ELSE x.writtenLastSeen END

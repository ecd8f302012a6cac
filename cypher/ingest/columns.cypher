// Answers: upserts Column nodes from schema facets, each linked from its Dataset by HAS_COLUMN.
// A column stamped with its dataset's current written schema (schemaDigest) was last seen at the
// later of its own times and the dataset's schemaLastSeen (ingest/schemas, which ran first for the
// datasets of these rows).
// Param $rows: one map per column {namespace, dataset, name, type, description, firstSeen, lastSeen, evt (the stamp of the event that reported it), written (the schema came from the dataset's producer, not a reader), stamp (the dataset's current written schema digest if the column belongs to it, else null), typed (a written row: its type with the first time of its schema in the batch, 'time\u001ftype'; else null)}
// Returns: nothing
// :param rows => [{namespace: 'example', dataset: 'public.orders', name: 'email', type: 'VARCHAR', description: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z'), evt: '2024-05-01T02:00:00.000000Z|0123456789abcdef', written: true, stamp: null, typed: ['2024-05-01T02:00:00.000000Z\u001fVARCHAR']}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (d:Dataset {namespace: row.namespace, name: row.dataset})
MERGE (x:Column {namespace: row.namespace, dataset: row.dataset, name: row.name})
MERGE (d)-[:HAS_COLUMN]->(x)
// type and description: those of the dataset's current written schema (the row is stamped with
// it); a column outside it keeps a producer's written schema over a reader's, then the latest
// event (event time, then digest), each kept beside its value as '@type' and '@description'
WITH x, row, CASE WHEN row.written THEN '1|' ELSE '0|' END + row.evt AS rank,
     row.stamp IS NOT NULL AS fromCurrent,
     row.stamp IS NULL AND x.schemaDigest IS NOT NULL AND x.schemaDigest = d.schemaDigest AS inCurrent
WITH x, row, rank,
     row.type IS NOT NULL AND (fromCurrent OR (NOT inCurrent AND (x.`@type` IS NULL OR rank > x.`@type`))) AS newType,
     row.description IS NOT NULL
       AND (fromCurrent OR (NOT inCurrent AND (x.`@description` IS NULL OR rank > x.`@description`))) AS newDescription
// the types its producer wrote it with, each with the first time it was written so (typed: one
// entry per type, that time as 27 characters of ISO text, a unit separator, the type; kept
// sorted): what changed reads a retyped column there (docs/graph-model.md, "What changed")
WITH x, row, rank, newType, newDescription,
     [t IN coalesce(row.typed, [])
      WHERE NOT any(e IN coalesce(x.writtenTypes, []) WHERE substring(e, 28) = substring(t, 28) AND e <= t)] AS typed
SET x.writtenTypes = CASE WHEN typed = [] THEN x.writtenTypes ELSE COLLECT {
      UNWIND coalesce(x.writtenTypes, []) + typed AS e
      WITH substring(e, 28) AS type, min(e) AS first
      RETURN first ORDER BY first } END,
    x.schemaDigest = coalesce(row.stamp, x.schemaDigest),
    x.type = CASE WHEN newType THEN row.type ELSE x.type END,
    x.`@type` = CASE WHEN newType THEN rank ELSE x.`@type` END,
    x.description = CASE WHEN newDescription THEN row.description ELSE x.description END,
    x.`@description` = CASE WHEN newDescription THEN rank ELSE x.`@description` END,
    x.inSchema = true,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END,
    x.writtenFirstSeen = CASE WHEN row.written AND (x.writtenFirstSeen IS NULL OR row.firstSeen < x.writtenFirstSeen)
                         THEN row.firstSeen ELSE x.writtenFirstSeen END,
    x.writtenLastSeen = CASE WHEN row.written AND (x.writtenLastSeen IS NULL OR row.lastSeen > x.writtenLastSeen)
                        THEN row.lastSeen ELSE x.writtenLastSeen END

// Answers: records that a run WROTE a dataset (its outputs), with the dataset version when given.
// Param $rows: one map per run and dataset {runId, namespace, name, version, rowCount, bytes, firstSeen, lastSeen}, for a model the input columns it was trained on: trainedOn ['namespace:dataset.column', ...], and the digests of the column lineages the run stated for it: lineage
// Returns: nothing
// :param rows => [{runId: '0190b4e4-0000-7000-8000-000000000001', namespace: 'example', name: 'public.orders', version: null, rowCount: 10, bytes: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MATCH (r:Run {runId: row.runId}) USING INDEX SEEK r:Run(runId)  // a seek even while the graph is young
MERGE (d:Dataset {namespace: row.namespace, name: row.name})
MERGE (r)-[x:WROTE]->(d)
SET x.version = coalesce(row.version, x.version),
    x.rowCount = coalesce(row.rowCount, x.rowCount),
    // what a model was trained on: the union of every statement of the run (docs/graph-model.md, "Models")
    x.trainedOn = CASE WHEN row.trainedOn IS NULL THEN x.trainedOn
                       ELSE COLLECT { UNWIND coalesce(x.trainedOn, []) + row.trainedOn AS c
                                      RETURN DISTINCT c ORDER BY c } END,
    // the column lineages the run stated for this output (their digests: ingest/retire)
    x.lineage = CASE WHEN row.lineage IS NULL THEN x.lineage
                     ELSE COLLECT { UNWIND coalesce(x.lineage, []) + row.lineage AS l
                                    RETURN DISTINCT l ORDER BY l } END,
    x.bytes = coalesce(row.bytes, x.bytes),
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

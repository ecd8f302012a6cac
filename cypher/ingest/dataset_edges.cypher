// Answers: records dataset-level lineage learnt from column lineage (fine, coarse = false) and
// removes the coarse inputs x outputs edges of the same job into that dataset.
// Param $rows: one map per edge {outNamespace, outDataset, inNamespace, inName, jobNamespace, jobName, runId, subtypes, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{outNamespace: 'example', outDataset: 'public.orders_clean', inNamespace: 'example', inName: 'public.orders', jobNamespace: 'example', jobName: 'clean_orders', runId: null, subtypes: ['IDENTITY'], firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (o:Dataset {namespace: row.outNamespace, name: row.outDataset})
MERGE (i:Dataset {namespace: row.inNamespace, name: row.inName})
MERGE (o)-[x:DERIVED_FROM {jobNamespace: row.jobNamespace, jobName: row.jobName}]->(i)
SET x.coarse = false,
    x.subtypes = reduce(acc = coalesce(x.subtypes, []), s IN row.subtypes |
                        CASE WHEN s IN acc THEN acc ELSE acc + s END),
    x.runId = coalesce(row.runId, x.runId),
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END
WITH DISTINCT o, row.jobNamespace AS jobNamespace, row.jobName AS jobName
MATCH (o)-[c:DERIVED_FROM {jobNamespace: jobNamespace, jobName: jobName, coarse: true}]->()
DELETE c

// Answers: records a field that a job makes with no tracked source (a lineage facet's field input
// of type JOB: `total` is a sum() over an API's answer): (Column)-[:PRODUCED_BY {type, subtype,
// masking, description}]->(Job), one edge per job, type and subtype.
// Param $rows: one map per edge {outNamespace, outDataset, outColumn, byNamespace, byName, jobNamespace, jobName, runId, type, subtype, masking, description, declared, observed, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{outNamespace: 'postgres://prod', outDataset: 'extracted_data', outColumn: 'total', byNamespace: 'airflow://prod', byName: 'data_pipeline.extract_task', jobNamespace: 'airflow://prod', jobName: 'data_pipeline.extract_task', runId: null, type: 'DIRECT', subtype: 'AGGREGATION', masking: false, description: 'sum()', declared: null, observed: true, firstSeen: '2026-03-25T10:00:00Z', lastSeen: '2026-03-25T10:00:00Z'}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (d:Dataset {namespace: row.outNamespace, name: row.outDataset})
MERGE (c:Column {namespace: row.outNamespace, dataset: row.outDataset, name: row.outColumn})
MERGE (d)-[:HAS_COLUMN]->(c)
MERGE (j:Job {namespace: row.byNamespace, name: row.byName})
  ON CREATE SET j.stub = true
MERGE (c)-[x:PRODUCED_BY {jobNamespace: row.jobNamespace, jobName: row.jobName, type: row.type,
                          subtype: row.subtype}]->(j)
// the latest event sets masking, description and run (at the same time, the greatest run id)
WITH x, row, (x.lastSeen IS NULL OR row.lastSeen > x.lastSeen
              OR (row.lastSeen = x.lastSeen AND coalesce(row.runId, '') >= coalesce(x.runId, ''))) AS newer
SET x.masking = CASE WHEN newer THEN row.masking ELSE x.masking END,
    x.description = CASE WHEN newer THEN row.description ELSE x.description END,
    x.runId = CASE WHEN newer AND row.runId IS NOT NULL THEN row.runId ELSE x.runId END,
    x.declared = CASE WHEN row.declared IS NOT NULL AND (x.declared IS NULL OR row.declared > x.declared)
                      THEN row.declared ELSE x.declared END,
    x.declaredOnly = CASE WHEN coalesce(row.observed, true)
                            OR (x.firstSeen IS NOT NULL AND x.declaredOnly IS NULL)
                          THEN null ELSE true END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

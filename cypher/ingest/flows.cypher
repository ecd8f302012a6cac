// Answers: records explicit lineage with a job at one end or both (a lineage facet's JOB entries
// and inputs: a hand-off through XCom or memory that no tracked dataset records):
// (derived Dataset or Job)-[:DERIVED_FROM {jobNamespace, jobName, flow: true}]->(source Dataset
// or Job), where jobNamespace/jobName name the job whose event stated it. A job named only here
// is created as a stub. Walks pass through these jobs (ingest/boundaries links them to what they
// read and write).
// Param $rows: one map per edge {outKind, outNamespace, outName, inKind, inNamespace, inName, jobNamespace, jobName, runId, subtypes, declared, observed, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{outKind: 'JOB', outNamespace: 'airflow://prod', outName: 'dag_b.task_1', inKind: 'JOB', inNamespace: 'airflow://prod', inName: 'dag_a.task_3', jobNamespace: 'airflow://prod', jobName: 'dag_b', runId: null, subtypes: [], declared: '2026-03-25T10:00:00.000000Z|0123456789abcdef', observed: null, firstSeen: '2026-03-25T10:00:00Z', lastSeen: '2026-03-25T10:00:00Z'}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
CALL (row) {
  WITH row WHERE row.outKind = 'DATASET'
  MERGE (o:Dataset {namespace: row.outNamespace, name: row.outName})
  RETURN o
  UNION
  WITH row WHERE row.outKind = 'JOB'
  MERGE (o:Job {namespace: row.outNamespace, name: row.outName})
    ON CREATE SET o.stub = true
  RETURN o
}
CALL (row) {
  WITH row WHERE row.inKind = 'DATASET'
  MERGE (i:Dataset {namespace: row.inNamespace, name: row.inName})
  RETURN i
  UNION
  WITH row WHERE row.inKind = 'JOB'
  MERGE (i:Job {namespace: row.inNamespace, name: row.inName})
    ON CREATE SET i.stub = true
  RETURN i
}
MERGE (o)-[x:DERIVED_FROM {jobNamespace: row.jobNamespace, jobName: row.jobName}]->(i)
SET x.flow = true, x.coarse = false, x.explicit = true,
    x.subtypes = COLLECT { UNWIND coalesce(x.subtypes, []) + row.subtypes AS s RETURN DISTINCT s ORDER BY s },
    x.declared = CASE WHEN row.declared IS NOT NULL AND (x.declared IS NULL OR row.declared > x.declared)
                      THEN row.declared ELSE x.declared END,
    x.declaredOnly = CASE WHEN coalesce(row.observed, true)
                            OR (x.firstSeen IS NOT NULL AND x.declaredOnly IS NULL)
                          THEN null ELSE true END,
    // the run of the latest event (at the same time, the greatest run id)
    x.runId = CASE WHEN row.runId IS NOT NULL
                        AND (x.runId IS NULL OR row.lastSeen > x.lastSeen
                             OR (row.lastSeen = x.lastSeen AND row.runId > x.runId))
                   THEN row.runId ELSE x.runId END,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

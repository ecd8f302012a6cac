// Answers: links runs to their PARENT run, creating stub runs and jobs for parents that never
// send events of their own (a Spark application, an Airflow DAG run, a dbt invocation).
// Param $rows: one map per link {runId, parentRunId, parentJobNamespace, parentJobName, rootRunId, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{runId: '0190b4e4-0000-7000-8000-000000000001', parentRunId: '0190b4e4-0000-7000-8000-000000000002', parentJobNamespace: 'example', parentJobName: 'nightly_dag', rootRunId: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MATCH (r:Run {runId: row.runId}) USING INDEX SEEK r:Run(runId)  // a seek even while the graph is young
MERGE (p:Run {runId: row.parentRunId})
  ON CREATE SET p.stub = true, p.jobNamespace = row.parentJobNamespace, p.jobName = row.parentJobName
MERGE (pj:Job {namespace: row.parentJobNamespace, name: row.parentJobName})
  ON CREATE SET pj.stub = true
MERGE (p)-[:OF]->(pj)
MERGE (r)-[x:PARENT]->(p)
SET r.rootRunId = coalesce(row.rootRunId, r.rootRunId),
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

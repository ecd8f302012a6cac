// Answers: links runs to their PARENT run, creating stub runs and jobs for parents that never
// send events of their own (a Spark application, an Airflow DAG run, a dbt invocation).
// Param $rows: one map per link {runId, parentRunId, parentJobNamespace, parentJobName, rootRunId, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{runId: '0190b4e4-0000-7000-8000-000000000001', parentRunId: '0190b4e4-0000-7000-8000-000000000002', parentJobNamespace: 'example', parentJobName: 'nightly_dag', rootRunId: null, firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
// a few parents have many children (a DAG run's tasks): each parent run and job once
UNWIND $rows AS link
WITH link.parentRunId AS runId, link.parentJobNamespace AS namespace, link.parentJobName AS name,
     min(datetime(link.firstSeen)) AS first, max(datetime(link.lastSeen)) AS last
MERGE (p:Run {runId: runId})
  ON CREATE SET p.stub = true, p.jobNamespace = namespace, p.jobName = name
MERGE (pj:Job {namespace: namespace, name: name})
  ON CREATE SET pj.stub = true
// a job known only as a parent was seen when its children named it (Marquez gives it those times)
SET pj.firstSeen = CASE WHEN pj.firstSeen IS NULL OR first < pj.firstSeen THEN first ELSE pj.firstSeen END,
    pj.lastSeen = CASE WHEN pj.lastSeen IS NULL OR last > pj.lastSeen THEN last ELSE pj.lastSeen END
MERGE (p)-[:OF]->(pj)
WITH count(*) AS parents
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MATCH (r:Run {runId: row.runId}) USING INDEX SEEK r:Run(runId)  // a seek even while the graph is young
MATCH (p:Run {runId: row.parentRunId}) USING INDEX SEEK p:Run(runId)
MERGE (r)-[x:PARENT]->(p)
SET r.rootRunId = coalesce(row.rootRunId, r.rootRunId),
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

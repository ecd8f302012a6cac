// Answers: records that a job WRITES a dataset (an output of any of its runs or of a JobEvent).
// Param $rows: one map per job and dataset {jobNamespace, jobName, namespace, name, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{jobNamespace: 'example', jobName: 'etl_orders', namespace: 'example', name: 'public.orders', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (j:Job {namespace: row.jobNamespace, name: row.jobName})
  ON CREATE SET j.stub = false
MERGE (d:Dataset {namespace: row.namespace, name: row.name})
MERGE (j)-[x:WRITES]->(d)
SET x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

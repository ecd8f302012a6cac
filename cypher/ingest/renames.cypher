// Answers: records a dataset rename from a lifecycleStateChange RENAME facet:
// (new Dataset)-[:RENAMED_FROM]->(previous Dataset).
// Param $rows: one map per rename {namespace, name, oldNamespace, oldName, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{namespace: 'example', name: 'public.orders_v2', oldNamespace: 'example', oldName: 'public.orders', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (d:Dataset {namespace: row.namespace, name: row.name})
MERGE (old:Dataset {namespace: row.oldNamespace, name: row.oldName})
MERGE (d)-[x:RENAMED_FROM]->(old)
SET old.renamedTo = row.name, old.renamedToNamespace = row.namespace,
    x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

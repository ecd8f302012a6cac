// Answers: records a second identity of a dataset: (dataset)-[:SYMLINK {type}]->(alias Dataset).
// Param $rows: one map per alias {namespace, name, aliasNamespace, aliasName, type, firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{namespace: 'file', name: '/warehouse/orders', aliasNamespace: 'hive://metastore', aliasName: 'default.orders', type: 'TABLE', firstSeen: datetime('2024-05-01T02:00:00Z'), lastSeen: datetime('2024-05-01T02:00:00Z')}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS wire
// times travel as ISO strings (the driver packs Python datetimes slowly)
WITH wire {.*, firstSeen: datetime(wire.firstSeen), lastSeen: datetime(wire.lastSeen)} AS row
MERGE (d:Dataset {namespace: row.namespace, name: row.name})
MERGE (a:Dataset {namespace: row.aliasNamespace, name: row.aliasName})
MERGE (d)-[x:SYMLINK {type: row.type}]->(a)
SET x.firstSeen = CASE WHEN x.firstSeen IS NULL OR row.firstSeen < x.firstSeen THEN row.firstSeen ELSE x.firstSeen END,
    x.lastSeen = CASE WHEN x.lastSeen IS NULL OR row.lastSeen > x.lastSeen THEN row.lastSeen ELSE x.lastSeen END

// Answers: makes sure every column that column lineage names exists, linked from its Dataset by
// HAS_COLUMN, so that the column edges can MATCH both ends (columns of schema facets are written
// by ingest/columns; these are the others, e.g. input columns of events without input schemas).
// Param $rows: one map per column {namespace, dataset, name}
// Returns: nothing
// :param rows => [{namespace: 'example', dataset: 'public.orders', name: 'email'}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS row
MERGE (d:Dataset {namespace: row.namespace, name: row.dataset})
MERGE (x:Column {namespace: row.namespace, dataset: row.dataset, name: row.name})
MERGE (d)-[:HAS_COLUMN]->(x)

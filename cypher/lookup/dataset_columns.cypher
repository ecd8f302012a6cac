// Answers: the columns of a dataset (to expand a dataset node id into its fields).
// Param $namespace: dataset namespace
// Param $name: dataset name
// Returns: namespace, dataset, name of each column
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'marts.orders_enriched'
MATCH (d:Dataset {namespace: $namespace, name: $name})-[:HAS_COLUMN]->(c:Column)
USING INDEX SEEK d:Dataset(namespace, name)
RETURN c.namespace AS namespace, c.dataset AS dataset, c.name AS name
ORDER BY name

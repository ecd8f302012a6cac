// Answers: the columns of the datasets a job writes now (to expand a job node id into fields, as
// Marquez's column lineage of a job starts from the fields its latest run wrote).
// Param $namespace: job namespace
// Param $name: job name
// Returns: namespace, dataset, name of each column
// :param namespace => 'shop-nightly'
// :param name => 'clean_users'
MATCH (j:Job {namespace: $namespace, name: $name})-[w:WRITES]->(d:Dataset)
WHERE w.retired IS NULL
MATCH (d)-[:HAS_COLUMN]->(c:Column)
RETURN c.namespace AS namespace, c.dataset AS dataset, c.name AS name
ORDER BY namespace, dataset, name

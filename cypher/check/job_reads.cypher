// Answers: the datasets a job reads now (to compare with a proposed SQL statement).
// Param $namespace: the job's namespace
// Param $name: the job's name
// Returns: namespace, name of each input dataset, or no row for an unknown job
// :param namespace => 'shop-nightly'
// :param name => 'enrich_orders'
MATCH (j:Job {namespace: $namespace, name: $name})-[:READS]->(d:Dataset)
USING INDEX SEEK j:Job(namespace, name)
RETURN d.namespace AS namespace, d.name AS name
ORDER BY namespace, name

// Answers: the datasets a job writes (where a job's blast radius starts), or no row for an unknown job.
// Param $namespace: the job's namespace
// Param $name: the job's name
// Returns: found (whether the job exists), outputs (list of {namespace, name})
// :param namespace => 'shop-nightly'
// :param name => 'enrich_orders'
OPTIONAL MATCH (j:Job {namespace: $namespace, name: $name})
RETURN j IS NOT NULL AS found,
       CASE WHEN j IS NULL THEN [] ELSE
         [(j)-[:WRITES]->(d:Dataset) | {namespace: d.namespace, name: d.name}] END AS outputs

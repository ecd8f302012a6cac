// Answers: which output columns of a job take their data from a given input dataset (what loses
// its source if the job stops reading it), with the transformation of each edge.
// Param $jobNamespace: the job's namespace
// Param $jobName: the job's name
// Param $namespace: the input dataset's namespace
// Param $name: the input dataset's name
// Returns: namespace, dataset, column (the job's output column), fromColumn, type, subtype
// :param jobNamespace => 'shop-nightly'
// :param jobName => 'enrich_orders'
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'staging.users_clean'
MATCH (d:Dataset {namespace: $namespace, name: $name})-[:HAS_COLUMN]->(i:Column)
USING INDEX SEEK d:Dataset(namespace, name)
MATCH (o:Column)-[e:DERIVED_FROM {jobNamespace: $jobNamespace, jobName: $jobName}]->(i)
RETURN o.namespace AS namespace, o.dataset AS dataset, o.name AS column, i.name AS fromColumn,
       e.type AS type, e.subtype AS subtype
ORDER BY dataset, column, fromColumn

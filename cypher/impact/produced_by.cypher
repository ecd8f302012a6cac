// Answers: the jobs that make a column with no tracked source (a lineage facet's field input of
// type JOB: a sum() over an API's answer), with the transformation each reported.
// Param $namespace: namespace of the column's dataset
// Param $dataset: name of the column's dataset
// Param $column: name of the column
// Returns: namespace, name (the job), job (whose event stated it), type, subtype, masking, description, lastSeen
// :param namespace => 'postgres://prod'
// :param dataset => 'extracted_data'
// :param column => 'total'
MATCH (c:Column {namespace: $namespace, dataset: $dataset, name: $column})-[e:PRODUCED_BY]->(j:Job)
USING INDEX SEEK c:Column(namespace, dataset, name)
RETURN j.namespace AS namespace, j.name AS name, e.jobName AS job, e.type AS type,
       e.subtype AS subtype, e.masking AS masking, e.description AS description,
       e.lastSeen AS lastSeen, coalesce(j.owners, []) AS owners
ORDER BY namespace, name, type, subtype

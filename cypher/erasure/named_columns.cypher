// Answers: which of the named columns the tables an erasure starts from have (`lineage erasure
// plan --personal NAME`: a personal column named rather than tagged), in datasets not soft-deleted.
// Param $tables: list of {namespace, dataset}
// Param $names: list of column names
// Returns: namespace, dataset, column
// :param tables => [{namespace: 'postgres://warehouse:5432', dataset: 'raw.users'}]
// :param names => ['email', 'full_name']
UNWIND $tables AS t
MATCH (d:Dataset {namespace: t.namespace, name: t.dataset})
USING INDEX SEEK d:Dataset(namespace, name)
WHERE d.deleted IS NULL
UNWIND $names AS column
MATCH (c:Column {namespace: t.namespace, dataset: t.dataset, name: column})
RETURN d.namespace AS namespace, d.name AS dataset, c.name AS column
ORDER BY namespace, dataset, column

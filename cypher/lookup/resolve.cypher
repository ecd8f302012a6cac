// Answers: which of several candidate (namespace, name) splits of an id names an existing node:
// ids like dataset:postgres://host:5432:public.orders are ambiguous because namespaces hold ':'.
// Param $label: 'Dataset', 'Job' or 'Column'
// Param $candidates: list of {namespace, name, column}
// Returns: the candidates that exist
// :param label => 'Dataset'
// :param candidates => [{namespace: 'postgres', name: '//warehouse:5432:raw.users', column: null}, {namespace: 'postgres://warehouse:5432', name: 'raw.users', column: null}]
UNWIND $candidates AS c
OPTIONAL MATCH (d:Dataset {namespace: c.namespace, name: c.name}) WHERE $label = 'Dataset'
OPTIONAL MATCH (j:Job {namespace: c.namespace, name: c.name}) WHERE $label = 'Job'
OPTIONAL MATCH (x:Column {namespace: c.namespace, dataset: c.name, name: c.column}) WHERE $label = 'Column'
WITH c WHERE d IS NOT NULL OR j IS NOT NULL OR x IS NOT NULL
RETURN c.namespace AS namespace, c.name AS name, c.column AS column

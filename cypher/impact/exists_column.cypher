// Answers: whether a column exists (in a dataset not soft-deleted), so that an unknown name is
// reported rather than an empty answer.
// Param $namespace: the column's dataset namespace
// Param $dataset: the column's dataset name
// Param $column: the column's name
// Returns: one row with found = true or false
// :param namespace => 'postgres://warehouse:5432'
// :param dataset => 'raw.users'
// :param column => 'email'
OPTIONAL MATCH (c:Column {namespace: $namespace, dataset: $dataset, name: $column})
// a column of a soft-deleted dataset is not found, as the dataset is not (docs/graph-model.md)
RETURN c IS NOT NULL
       AND NOT EXISTS { MATCH (d:Dataset {namespace: $namespace, name: $dataset}) WHERE d.deleted IS NOT NULL } AS found

// Answers: whether a column exists, so that an unknown name is reported rather than an empty answer.
// Param $namespace: the column's dataset namespace
// Param $dataset: the column's dataset name
// Param $column: the column's name
// Returns: one row with found = true or false
// :param namespace => 'postgres://warehouse:5432'
// :param dataset => 'raw.users'
// :param column => 'email'
OPTIONAL MATCH (c:Column {namespace: $namespace, dataset: $dataset, name: $column})
RETURN c IS NOT NULL AS found

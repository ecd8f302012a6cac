// Answers: whether a dataset exists (and is not soft-deleted), so that an unknown name is reported
// rather than an empty answer.
// Param $namespace: the dataset's namespace
// Param $name: the dataset's name
// Returns: one row with found = true or false
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'raw.users'
OPTIONAL MATCH (d:Dataset {namespace: $namespace, name: $name})
RETURN d IS NOT NULL AND d.deleted IS NULL AS found

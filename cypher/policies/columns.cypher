// Answers: the columns a policy rule selects by the patterns of their namespace, dataset and
// column names (Java regular expressions made from the rule's globs; null matches anything).
// Param $namespace: a pattern of the namespace, or null
// Param $dataset: a pattern of the dataset's name, or null
// Param $column: a pattern of the column's name, or null
// Param $limit: the most columns to answer
// Returns: namespace, dataset, column
// :param namespace => null
// :param dataset => 'raw\\..*'
// :param column => 'email'
// :param limit => 1000
MATCH (c:Column)
WHERE ($namespace IS NULL OR c.namespace =~ $namespace)
  AND ($dataset IS NULL OR c.dataset =~ $dataset)
  AND ($column IS NULL OR c.name =~ $column)
RETURN c.namespace AS namespace, c.dataset AS dataset, c.name AS column
ORDER BY namespace, dataset, column
LIMIT $limit

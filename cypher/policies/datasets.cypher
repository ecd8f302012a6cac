// Answers: the datasets a policy rule selects by the patterns of their namespace and name (Java
// regular expressions made from the rule's globs; null matches anything).
// Param $namespace: a pattern of the namespace, or null
// Param $dataset: a pattern of the dataset's name, or null
// Param $limit: the most datasets to answer
// Returns: namespace, name, tags (a producer's tags facet and the API's)
// :param namespace => null
// :param dataset => 'raw\\..*'
// :param limit => 1000
MATCH (d:Dataset)
WHERE ($namespace IS NULL OR d.namespace =~ $namespace)
  AND ($dataset IS NULL OR d.name =~ $dataset)
RETURN d.namespace AS namespace, d.name AS name,
       coalesce(d.tags, []) + [(d)-[:TAGGED]->(t:Tag) | t.name] AS tags
ORDER BY namespace, name
LIMIT $limit

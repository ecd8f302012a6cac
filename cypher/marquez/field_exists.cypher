// Answers: does a dataset have this field (a column any event named)? Checked before a field's
// tag is logged, so that a tag on an unknown field is a 404 and leaves nothing in the log.
// Param $namespace: the dataset's namespace
// Param $dataset: the dataset's name
// Param $field: the field's name
// Returns: found
// :param namespace => 'food_delivery'
// :param dataset => 'public.customers'
// :param field => 'email'
OPTIONAL MATCH (c:Column {namespace: $namespace, dataset: $dataset, name: $field})
RETURN c IS NOT NULL AS found
LIMIT 1

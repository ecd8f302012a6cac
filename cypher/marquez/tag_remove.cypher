// Answers: removes a tag the API set on a dataset, one of its fields, or a job (Marquez's
// DELETE .../tags/{tag}); a producer's tag stays as long as the producer reports it.
// Param $kind: 'dataset', 'field' or 'job'
// Param $namespace: the namespace
// Param $name: the dataset's or job's name
// Param $field: the field's name (for 'field'), else null
// Param $tag: the tag
// Returns: removed (how many tag links were removed)
// :param kind => 'field'
// :param namespace => 'food_delivery'
// :param name => 'public.customers'
// :param field => 'email'
// :param tag => 'PII'
CALL () {
  MATCH (n:Dataset {namespace: $namespace, name: $name}) WHERE $kind = 'dataset' RETURN n
  UNION
  MATCH (n:Column {namespace: $namespace, dataset: $name, name: $field}) WHERE $kind = 'field' RETURN n
  UNION
  MATCH (n:Job {namespace: $namespace, name: $name}) WHERE $kind = 'job' RETURN n
}
MATCH (n)-[e:TAGGED]->(:Tag {name: $tag})
DELETE e
RETURN count(e) AS removed

// Answers: tags a dataset, one of its fields, or a job through the API (Marquez's POST .../tags/{tag}),
// kept beside the producers' tags with who set it and when; creates the tag if it is new.
// Param $kind: 'dataset', 'field' or 'job'
// Param $namespace: the namespace
// Param $name: the dataset's or job's name
// Param $field: the field's name (for 'field'), else null
// Param $tag: the tag
// Param $by: who set it ('api', or the token's name)
// Param $at: when the API took the write (ISO 8601): a replay of the event log sets the same times
// Returns: tagged (1, or 0 when the dataset, field or job is unknown)
// :param kind => 'field'
// :param namespace => 'food_delivery'
// :param name => 'public.customers'
// :param field => 'email'
// :param tag => 'PII'
// :param by => 'api'
// :param at => '2026-11-27T09:00:00Z'
CALL () {
  MATCH (n:Dataset {namespace: $namespace, name: $name}) WHERE $kind = 'dataset' RETURN n
  UNION
  MATCH (n:Column {namespace: $namespace, dataset: $name, name: $field}) WHERE $kind = 'field' RETURN n
  UNION
  MATCH (n:Job {namespace: $namespace, name: $name}) WHERE $kind = 'job' RETURN n
}
MERGE (t:Tag {name: $tag})
ON CREATE SET t.createdAt = datetime($at)
MERGE (n)-[e:TAGGED]->(t)
ON CREATE SET e.at = datetime($at), e.by = $by
RETURN count(n) AS tagged

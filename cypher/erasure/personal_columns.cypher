// Answers: the personal columns of the tables an erasure starts from: those carrying a tag (from a
// producer's tags facet naming the field, or set through the API), matched by its whole name, its
// key or its value in any case ('pii' matches PII, pii:true, classification:PII).
// Param $tables: list of {namespace, dataset}
// Param $tag: the tag, lower case
// Returns: namespace, dataset, column, tag (as stored)
// :param tables => [{namespace: 'postgres://warehouse:5432', dataset: 'raw.users'}]
// :param tag => 'pii'
UNWIND $tables AS t
MATCH (d:Dataset {namespace: t.namespace, name: t.dataset})
USING INDEX SEEK d:Dataset(namespace, name)
CALL (d) {
  UNWIND coalesce(d.fieldTags, []) AS tagged
  WITH split(tagged, '\u001f') AS parts
  RETURN parts[0] AS column, parts[1] AS tag
  UNION
  MATCH (d)-[:HAS_COLUMN]->(c:Column)-[:TAGGED]->(g:Tag)
  RETURN c.name AS column, g.name AS tag
}
WITH d, column, tag
WHERE toLower(tag) = $tag OR toLower(tag) STARTS WITH $tag + ':' OR toLower(tag) ENDS WITH ':' + $tag
RETURN DISTINCT d.namespace AS namespace, d.name AS dataset, column, tag
ORDER BY namespace, dataset, column

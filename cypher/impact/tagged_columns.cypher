// Answers: every column carrying a tag: from a producer's tags facet (an entry naming the field)
// or set through the API (Marquez's field tags), with who set it and when. A tag matches by its
// whole name, its key or its value, in any case: 'pii' matches PII, pii:true, classification:PII.
// Param $tag: the tag, lower case
// Returns: namespace, dataset, column, tag (as stored), by ('producer' or 'api'), at
// :param tag => 'pii'
CALL () {
  MATCH (d:Dataset) WHERE d.fieldTags IS NOT NULL
  UNWIND d.fieldTags AS tagged
  WITH d, split(tagged, '\u001f') AS parts
  RETURN d.namespace AS namespace, d.name AS dataset, parts[0] AS column, parts[1] AS tag,
         'producer' AS by, left(d.`@fieldTags`, 27) AS at
  UNION
  MATCH (c:Column)-[e:TAGGED]->(t:Tag)
  RETURN c.namespace AS namespace, c.dataset AS dataset, c.name AS column, t.name AS tag,
         coalesce(e.by, 'api') AS by, toString(e.at) AS at
}
WITH * WHERE toLower(tag) = $tag OR toLower(tag) STARTS WITH $tag + ':' OR toLower(tag) ENDS WITH ':' + $tag
RETURN namespace, dataset, column, tag, by, at
ORDER BY namespace, dataset, column, by

// Answers: every tag: those created through the API (Tag nodes, with a description) and those
// datasets, their fields and jobs carry (the producers' tags facets).
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Param $configured: the tags the settings declare (LINEAGE_TAGS), each {name, description}: listed
// from the start, as Marquez lists the tags of its configuration on an empty store
// Returns: name, description (a description set through the API first, else the configured one)
// :param skip => 0
// :param limit => 100
// :param configured => [{name: 'PII', description: 'Personally identifiable information'}]
CALL () {
  MATCH (t:Tag) RETURN t.name AS name, t.description AS description, 2 AS rank
  UNION ALL
  UNWIND $configured AS c
  RETURN c.name AS name, c.description AS description, 1 AS rank
  UNION ALL
  MATCH (n) WHERE (n:Dataset OR n:Job) AND n.tags IS NOT NULL
  UNWIND n.tags AS name
  RETURN DISTINCT name, null AS description, 0 AS rank
  UNION ALL
  MATCH (d:Dataset) WHERE d.fieldTags IS NOT NULL
  UNWIND d.fieldTags AS tagged
  RETURN DISTINCT split(tagged, '\u001f')[1] AS name, null AS description, 0 AS rank
}
WITH name, description, rank ORDER BY rank DESC
WITH name, head(collect(description)) AS description
ORDER BY name
SKIP $skip LIMIT $limit
RETURN name, description

// Answers: every tag: those created through the API (Tag nodes, with a description) and those
// datasets, their fields and jobs carry (the producers' tags facets).
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: name, description
// :param skip => 0
// :param limit => 100
CALL () {
  MATCH (t:Tag) RETURN t.name AS name, t.description AS description
  UNION ALL
  MATCH (n) WHERE (n:Dataset OR n:Job) AND n.tags IS NOT NULL
  UNWIND n.tags AS name
  RETURN DISTINCT name, null AS description
  UNION ALL
  MATCH (d:Dataset) WHERE d.fieldTags IS NOT NULL
  UNWIND d.fieldTags AS tagged
  RETURN DISTINCT split(tagged, '\u001f')[1] AS name, null AS description
}
WITH name, max(description) AS description
ORDER BY name
SKIP $skip LIMIT $limit
RETURN name, description

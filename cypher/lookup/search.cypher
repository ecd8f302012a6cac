// Answers: datasets and jobs whose name or namespace contains a text (any case), closest first;
// not those deleted (a soft delete: `lineage delete`, Marquez's DELETE).
// Param $text: the text to look for
// Param $kind: 'dataset', 'job', or null for both
// Param $limit: how many to return
// Returns: kind, namespace, name
// :param text => 'users'
// :param kind => null
// :param limit => 20
CALL () {
  MATCH (d:Dataset)
  WHERE ($kind IS NULL OR $kind = 'dataset') AND d.deleted IS NULL
    AND (toLower(d.name) CONTAINS toLower($text) OR toLower(d.namespace) CONTAINS toLower($text))
  RETURN 'dataset' AS kind, d.namespace AS namespace, d.name AS name
  UNION ALL
  MATCH (j:Job)
  WHERE ($kind IS NULL OR $kind = 'job') AND j.deleted IS NULL
    AND (toLower(j.name) CONTAINS toLower($text) OR toLower(j.namespace) CONTAINS toLower($text))
  RETURN 'job' AS kind, j.namespace AS namespace, j.name AS name
}
RETURN kind, namespace, name
ORDER BY CASE WHEN toLower(name) = toLower($text) THEN 0
              WHEN toLower(name) ENDS WITH toLower($text) THEN 1 ELSE 2 END,
         size(name), namespace, name
LIMIT $limit

// Answers: the datasets that carry data-quality metrics (a dataQualityMetrics facet: per column,
// nullCount, distinctCount ...), all or some, with their columns' tags, for the quality rules.
// Param $datasets: only these datasets (a list of {namespace, name}), or null for all
// Returns: namespace, name, rowCount (the metrics' row count, else the dataset's), columnMetrics (JSON text), fieldTags (a producer's 'field<U+001F>tag's), apiTags (the API's [column, tag] pairs)
// :param datasets => null
CALL () {
  WITH * WHERE $datasets IS NULL
  MATCH (d:Dataset) WHERE d.columnMetrics IS NOT NULL OR d.metricsRowCount IS NOT NULL
  RETURN d
  UNION
  UNWIND coalesce($datasets, []) AS one
  MATCH (d:Dataset {namespace: one.namespace, name: one.name})
  WHERE d.columnMetrics IS NOT NULL OR d.metricsRowCount IS NOT NULL
  RETURN d
}
RETURN d.namespace AS namespace, d.name AS name, coalesce(d.metricsRowCount, d.rowCount) AS rowCount,
       d.columnMetrics AS columnMetrics, coalesce(d.fieldTags, []) AS fieldTags,
       [(d)-[:HAS_COLUMN]->(c:Column)-[:TAGGED]->(t:Tag) | [c.name, t.name]] AS apiTags
ORDER BY namespace, name

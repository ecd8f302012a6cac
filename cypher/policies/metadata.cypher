// Answers: for each dataset a policy rule selects (by name patterns, Java regular expressions
// made from the rule's globs, and by tag), what it has of the metadata the answers need: an owner
// (ownership facet), a description, a schema, a producer (a job writes it), and whether it is
// derived (a writer of it reads something) and has current column lineage into its columns.
// A tag matches by its whole name, its key or its value, in any case, whether a producer's tags
// facet or Marquez's API set it.
// Param $namespace: a pattern of the namespace, or null
// Param $dataset: a pattern of the dataset's name, or null
// Param $tag: a tag, lower case, or null
// Param $datasets: only these datasets (a list of {namespace, name}), or null for all
// Param $limit: the most datasets to answer
// Returns: namespace, name, owner, description, schema, producer, derived, columnLineage
// :param namespace => null
// :param dataset => 'marts\\..*'
// :param tag => null
// :param datasets => null
// :param limit => 1000
CALL () {
  WITH * WHERE $datasets IS NULL
  MATCH (d:Dataset) RETURN d
  UNION
  UNWIND coalesce($datasets, []) AS one
  MATCH (d:Dataset {namespace: one.namespace, name: one.name}) RETURN d
}
WITH d
WHERE ($namespace IS NULL OR d.namespace =~ $namespace)
  AND ($dataset IS NULL OR d.name =~ $dataset)
  AND ($tag IS NULL
       OR any(t IN coalesce(d.tags, []) WHERE toLower(t) = $tag OR toLower(t) STARTS WITH $tag + ':'
              OR toLower(t) ENDS WITH ':' + $tag)
       OR EXISTS { (d)-[:TAGGED]->(t:Tag) WHERE toLower(t.name) = $tag
                   OR toLower(t.name) STARTS WITH $tag + ':' OR toLower(t.name) ENDS WITH ':' + $tag })
RETURN d.namespace AS namespace, d.name AS name,
       size(coalesce(d.owners, [])) > 0 AS owner,
       coalesce(trim(d.description), '') <> '' AS description,
       size(coalesce(d.schemaColumns, [])) > 0 AS schema,
       EXISTS { (:Job)-[:WRITES]->(d) } AS producer,
       // column lineage is expected of a derived dataset only (a writer of it reads something),
       // as lineage health asks it (cypher/health/datasets.cypher; docs/health.md)
       EXISTS { (j:Job)-[w:WRITES]->(d) WHERE w.retired IS NULL
                AND EXISTS { (j)-[r:READS]->(:Dataset) WHERE r.retired IS NULL } } AS derived,
       EXISTS { (d)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(:Column)
                WHERE e.alias IS NULL AND e.retired IS NULL } AS columnLineage
ORDER BY namespace, name
LIMIT $limit

// Answers: which nodes to ask the questions of when warming Neo4j after a restart: the dataset
// with the most datasets derived directly from it (a hub: the largest answers), one of its columns
// that another column derives from, that column, and a dataset derived from the hub (something
// with an upstream); ties go to the first by namespace and name.
// Returns: namespace, name, column (null when no column of it has lineage), derived (a dataset
// derived from it: {namespace, name}, null when none), derivedColumn ({namespace, dataset, name},
// a column derived from column; null when none)
MATCH (d:Dataset)
WITH d, COUNT { (d)<-[:DERIVED_FROM]-(:Dataset) } AS fanOut
ORDER BY fanOut DESC, d.namespace, d.name LIMIT 1
OPTIONAL CALL (d) {
  MATCH (d)-[:HAS_COLUMN]->(c:Column)<-[:DERIVED_FROM]-(x:Column)
  RETURN c.name AS column, {namespace: x.namespace, dataset: x.dataset, name: x.name} AS derivedColumn
  LIMIT 1
}
RETURN d.namespace AS namespace, d.name AS name, column, derivedColumn,
       COLLECT { MATCH (d)<-[:DERIVED_FROM]-(x:Dataset)
                 RETURN {namespace: x.namespace, name: x.name} LIMIT 1 }[0] AS derived

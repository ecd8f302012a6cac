// Answers: which nodes to ask the questions of when warming Neo4j after a restart: the $hubs
// datasets with the most datasets derived directly from them (the largest answers; ties go to the
// first by namespace and name); of the widest, one of its columns that another column derives
// from, that column, and a dataset derived from it (something with an upstream).
// Param $hubs: how many of the widest datasets to return
// Returns: namespace, name (the widest; null when no dataset has anything derived from it), column (null when no column of
// it has lineage), derivedColumn ({namespace, dataset, name}: a column derived from column; null
// when none), derived ({namespace, name}: a dataset derived from it; null when none), hubs (the
// $hubs widest, widest first: [{namespace, name}])
// :param hubs => 10
MATCH (d:Dataset)
WITH d, COUNT { (d)<-[:DERIVED_FROM]-(:Dataset) } AS fanOut
WHERE fanOut > 0
ORDER BY fanOut DESC, d.namespace, d.name LIMIT $hubs
WITH collect(d) AS widest
WITH widest, widest[0] AS d
OPTIONAL CALL (d) {
  MATCH (d)-[:HAS_COLUMN]->(c:Column)<-[:DERIVED_FROM]-(x:Column)
  RETURN c.name AS column, {namespace: x.namespace, dataset: x.dataset, name: x.name} AS derivedColumn
  LIMIT 1
}
RETURN d.namespace AS namespace, d.name AS name, column, derivedColumn,
       COLLECT { MATCH (d)<-[:DERIVED_FROM]-(x:Dataset)
                 RETURN {namespace: x.namespace, name: x.name} LIMIT 1 }[0] AS derived,
       COLLECT { MATCH (j:Job)-[:READS]->(d)
                 RETURN {namespace: j.namespace, name: j.name} LIMIT 1 }[0] AS job,
       [h IN widest | {namespace: h.namespace, name: h.name}] AS hubs

// Answers: makes a table's names one identity for the walks: for each dataset of the batch that
// has a symlink (either way), DERIVED_FROM {alias: true} edges both ways between it and each
// other name, and between their same-named columns (a column of one name is a column of every
// name: created where missing, DIRECT IDENTITY), so that lineage entering by one name continues
// from the others. Only adds; idempotent, so the result is the same in any order. The walks do
// not count alias edges as steps (docs/graph-model.md, "Symlinks").
// Param $datasets: the datasets whose names or columns may be new [{namespace, name}]
// Returns: nothing
// :param datasets => [{namespace: 'file', name: '/warehouse/orders'}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $datasets AS key
MATCH (d:Dataset {namespace: key.namespace, name: key.name})
USING INDEX SEEK d:Dataset(namespace, name)
MATCH (d)-[s:SYMLINK]-(a:Dataset)
WITH d, a, min(s.firstSeen) AS since
MERGE (d)-[x:DERIVED_FROM {alias: true}]->(a)
SET x.firstSeen = CASE WHEN x.firstSeen IS NULL OR since < x.firstSeen THEN since ELSE x.firstSeen END
MERGE (a)-[y:DERIVED_FROM {alias: true}]->(d)
SET y.firstSeen = x.firstSeen
WITH d, a, x.firstSeen AS since
CALL (d, a, since) {
  UNWIND [[d, a], [a, d]] AS ends
  WITH ends[0] AS from, ends[1] AS to, since
  MATCH (from)-[:HAS_COLUMN]->(c:Column)
  MERGE (other:Column {namespace: to.namespace, dataset: to.name, name: c.name})
  MERGE (to)-[:HAS_COLUMN]->(other)
  MERGE (c)-[e:DERIVED_FROM {alias: true}]->(other)
    ON CREATE SET e.type = 'DIRECT', e.subtype = 'IDENTITY', e.masking = false
  MERGE (other)-[f:DERIVED_FROM {alias: true}]->(c)
    ON CREATE SET f.type = 'DIRECT', f.subtype = 'IDENTITY', f.masking = false
  SET e.firstSeen = since, f.firstSeen = since
}

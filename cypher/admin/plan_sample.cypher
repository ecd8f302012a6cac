// Answers: which nodes the plan keeper asks the questions of (impact/warm.py): the first dataset
// found with a dataset derived from it that has nothing derived from it in turn, and the same for
// columns. Unlike the warm-up's sample (admin/warm_sample) it looks for small answers, not the
// widest: a plan is the same whatever node it is asked of, and the keeper asks in the API's process
// (on the 10,000-dataset graph, a source's round took 0.9-1.2 s, 0.3 s of it the API's CPU).
// Returns: namespace, name (a dataset with something derived from it; null when there is none),
// derived ({namespace, name}: a dataset derived from it), column ({namespace, dataset, name}: a
// column with a column derived from it; null when none), derivedColumn ({namespace, dataset, name})
OPTIONAL CALL () {
  MATCH (d:Dataset)<-[:DERIVED_FROM]-(x:Dataset)
  WHERE NOT EXISTS { (x)<-[:DERIVED_FROM]-() }
  RETURN d, x LIMIT 1
}
OPTIONAL CALL () {
  MATCH (c:Column)<-[:DERIVED_FROM]-(y:Column)
  WHERE NOT EXISTS { (y)<-[:DERIVED_FROM]-() }
  RETURN c, y LIMIT 1
}
RETURN d.namespace AS namespace, d.name AS name,
       CASE WHEN x IS NULL THEN null ELSE {namespace: x.namespace, name: x.name} END AS derived,
       CASE WHEN c IS NULL THEN null ELSE {namespace: c.namespace, dataset: c.dataset, name: c.name} END AS column,
       CASE WHEN y IS NULL THEN null ELSE {namespace: y.namespace, dataset: y.dataset, name: y.name} END AS derivedColumn,
       COLLECT { MATCH (j:Job)-[:READS]->(d) RETURN {namespace: j.namespace, name: j.name} LIMIT 1 }[0] AS job

// Answers: which nodes the plan keeper asks the questions of (impact/warm.py): any dataset with a
// dataset derived from it, and any column with a column derived from it, the first found. Unlike
// the warm-up's sample (admin/warm_sample) it does not look for the widest: it is asked often, and
// a plan is the same whatever node it is asked of.
// Returns: namespace, name (a dataset with something derived from it; null when there is none),
// derived ({namespace, name}: a dataset derived from it), column ({namespace, dataset, name}: a
// column with a column derived from it; null when none), derivedColumn ({namespace, dataset, name})
OPTIONAL CALL () {
  MATCH (d:Dataset)<-[:DERIVED_FROM]-(x:Dataset)
  RETURN d, x LIMIT 1
}
OPTIONAL CALL () {
  MATCH (c:Column)<-[:DERIVED_FROM]-(y:Column)
  RETURN c, y LIMIT 1
}
RETURN d.namespace AS namespace, d.name AS name,
       CASE WHEN x IS NULL THEN null ELSE {namespace: x.namespace, name: x.name} END AS derived,
       CASE WHEN c IS NULL THEN null ELSE {namespace: c.namespace, dataset: c.dataset, name: c.name} END AS column,
       CASE WHEN y IS NULL THEN null ELSE {namespace: y.namespace, dataset: y.dataset, name: y.name} END AS derivedColumn

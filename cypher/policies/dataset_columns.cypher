// Answers: the columns of some datasets a policy rule may select, each with its tags (a
// producer's tags facet entries that name the field, and the API's field tags); a field a tags
// facet names that is no column node is answered too, with node false.
// Param $datasets: the datasets, a list of {namespace, name}
// Returns: namespace, dataset, column, node (a Column node), tags
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'raw.users'}]
UNWIND $datasets AS d
MATCH (ds:Dataset {namespace: d.namespace, name: d.name})
CALL (ds) {
  MATCH (ds)-[:HAS_COLUMN]->(c:Column)
  RETURN c.name AS column, true AS node, [(c)-[:TAGGED]->(t:Tag) | t.name] AS tags
  UNION ALL
  UNWIND coalesce(ds.fieldTags, []) AS tagged
  RETURN split(tagged, '\u001f')[0] AS column, false AS node, [split(tagged, '\u001f')[1]] AS tags
}
WITH ds, column, any(x IN collect(node) WHERE x) AS node, collect(tags) AS tagLists
RETURN ds.namespace AS namespace, ds.name AS dataset, column, node,
       reduce(all = [], ts IN tagLists | all + ts) AS tags
ORDER BY namespace, dataset, column

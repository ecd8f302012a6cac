// Answers: some datasets' tags (a producer's tags facet and the API's), for the rules that select
// datasets by tag.
// Param $datasets: the datasets, a list of {namespace, name}
// Returns: namespace, name, tags
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'raw.users'}]
UNWIND $datasets AS d
MATCH (ds:Dataset {namespace: d.namespace, name: d.name})
RETURN ds.namespace AS namespace, ds.name AS name,
       coalesce(ds.tags, []) + [(ds)-[:TAGGED]->(t:Tag) | t.name] AS tags
ORDER BY namespace, name

// Answers: every other name of each given dataset (symlinks and declared aliases, also through a
// common alias), so that an answer that reached one table under two names by separate lineage
// paths lists it once.
// Param $datasets: [{namespace, name}]
// Returns: name, alias ('namespace:name' each; one row per pair)
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'raw.users'}]
UNWIND $datasets AS key
MATCH (d:Dataset {namespace: key.namespace, name: key.name})
USING INDEX SEEK d:Dataset(namespace, name)
MATCH (d)(()-[:DERIVED_FROM {alias: true}]->()){1,4}(a:Dataset)
WHERE a <> d
RETURN DISTINCT d.namespace + ':' + d.name AS name, a.namespace + ':' + a.name AS alias

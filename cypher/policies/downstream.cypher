// Answers: the lineage downstream of some datasets, as a graph: each node (a dataset, or a job
// of a hand-off) that derives from them within $depth hops of current lineage, the starts
// included, with its tags and the lineage edges to what it derives from directly.
// Param $datasets: the start datasets, a list of {namespace, name}
// Param $depth: the most hops walked (1 to 50)
// Returns: kind (dataset or job), namespace, name, tags (a producer's tags facet and the API's), sources (a list of {kind, namespace, name, job (namespace:name), run, alias})
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'raw.users'}]
// :param depth => 20
CYPHER statefulShortestPlanningMode=all_if_possible
UNWIND $datasets AS start
MATCH (src:Dataset {namespace: start.namespace, name: start.name})
MATCH p = ANY SHORTEST (src)(()<-[e:DERIVED_FROM WHERE e.retired IS NULL]-()){0,50}(n)
WHERE size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
WITH DISTINCT n
RETURN CASE WHEN n:Job THEN 'job' ELSE 'dataset' END AS kind, n.namespace AS namespace,
       n.name AS name,
       coalesce(n.tags, []) + [(n)-[:TAGGED]->(t:Tag) | t.name] AS tags,
       [(n)-[e:DERIVED_FROM WHERE e.retired IS NULL]->(m) |
        {kind: CASE WHEN m:Job THEN 'job' ELSE 'dataset' END, namespace: m.namespace,
         name: m.name, job: e.jobNamespace + ':' + e.jobName, run: e.runId,
         alias: coalesce(e.alias, false)}] AS sources
ORDER BY namespace, name

// Answers: the column lineage downstream of some columns, as a graph: each column that derives
// from them within $depth hops of current lineage, the starts included, with the lineage edges
// to the columns it derives from directly (each with its job, run, transformation and masking).
// Param $columns: the start columns, a list of {namespace, dataset, column}
// Param $depth: the most hops walked (1 to 50)
// Returns: namespace, dataset, column, sources (a list of {namespace, dataset, column, job (namespace:name), run, type, subtype, masking, alias})
// :param columns => [{namespace: 'postgres://warehouse:5432', dataset: 'raw.users', column: 'email'}]
// :param depth => 20
CYPHER statefulShortestPlanningMode=all_if_possible
UNWIND $columns AS start
MATCH (src:Column {namespace: start.namespace, dataset: start.dataset, name: start.column})
MATCH p = ANY SHORTEST (src)(()<-[e:DERIVED_FROM WHERE e.retired IS NULL]-(:Column)){0,50}(n)
WHERE size([r IN relationships(p) WHERE r.alias IS NULL]) <= $depth
WITH DISTINCT n
RETURN n.namespace AS namespace, n.dataset AS dataset, n.name AS column,
       [(n)-[e:DERIVED_FROM WHERE e.retired IS NULL]->(m:Column) |
        {namespace: m.namespace, dataset: m.dataset, column: m.name,
         job: e.jobNamespace + ':' + e.jobName, run: e.runId, type: e.type, subtype: e.subtype,
         masking: coalesce(e.masking, false), alias: coalesce(e.alias, false)}] AS sources
ORDER BY namespace, dataset, column

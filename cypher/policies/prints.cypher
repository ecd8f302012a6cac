// Answers: what the policy rules read of each dataset, as it is now, for the watch to tell a
// batch that changed a dataset's lineage from one that only restated it (impact.policy.prints):
// its properties and its columns' (times, stamps, facets as sent and per-run statistics left
// out), every edge of it and of its columns (a run's READ and WROTE left out) with the other
// end and the edge's properties (times and run ids left out), and for a job that writes it,
// whether that job reads anything current (what makes the dataset derived); apart, the figures a
// quality rule reads.
// Param $datasets: the datasets, a list of {namespace, name}
// Param $jobs: jobs whose datasets (each it reads or writes, retired or not) are printed too, a list of {namespace, name}
// Returns: namespace, name, props, edges, columns, stats
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'raw.users'}]
// :param jobs => []
CALL () {
  UNWIND $datasets AS one
  MATCH (d:Dataset {namespace: one.namespace, name: one.name})
  RETURN d
  UNION
  UNWIND $jobs AS one
  MATCH (:Job {namespace: one.namespace, name: one.name})-[:READS|WRITES]->(d:Dataset)
  RETURN d
}
WITH d, ['firstSeen', 'lastSeen', 'events', 'declarations', 'takenAt', 'schemaSince',
         'schemaLastSeen', 'rowCount', 'bytes', 'version', 'metricsRowCount', 'columnMetrics',
         'assertions', 'failedAssertions', 'lifecycleState', 'writtenFirstSeen',
         'writtenLastSeen', 'writtenTypes', 'runId', 'lastRunId', 'retiredAt'] AS passing,
        ['@', 'facet.', 'inputFacet.', 'outputFacet.', 'summary.'] AS prefixes
RETURN d.namespace AS namespace, d.name AS name,
       [k IN keys(d) WHERE NOT k IN passing AND NONE(p IN prefixes WHERE k STARTS WITH p)
        | [k, d[k]]] AS props,
       COLLECT {
         MATCH (d)-[r]-(o) WHERE NOT type(r) IN ['READ', 'WROTE', 'HAS_COLUMN']
         RETURN [type(r), startNode(r) = d, o.namespace, coalesce(o.dataset, ''), o.name,
                 [k IN keys(r) WHERE NOT k IN passing AND NONE(p IN prefixes WHERE k STARTS WITH p)
                  | [k, r[k]]],
                 CASE WHEN type(r) = 'WRITES'
                      THEN EXISTS { (o)-[x:READS]->(:Dataset) WHERE x.retired IS NULL } END]
       } AS edges,
       COLLECT {
         MATCH (d)-[:HAS_COLUMN]->(c:Column)
         RETURN [c.name,
                 [k IN keys(c) WHERE NOT k IN passing AND NONE(p IN prefixes WHERE k STARTS WITH p)
                  | [k, c[k]]],
                 COLLECT {
                   MATCH (c)-[r]-(o) WHERE type(r) <> 'HAS_COLUMN'
                   RETURN [type(r), startNode(r) = c, o.namespace, coalesce(o.dataset, ''), o.name,
                           [k IN keys(r) WHERE NOT k IN passing
                                          AND NONE(p IN prefixes WHERE k STARTS WITH p)
                            | [k, r[k]]]]
                 }]
       } AS columns,
       [d.rowCount, d.metricsRowCount, d.columnMetrics] AS stats

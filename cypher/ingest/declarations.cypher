// Answers: keeps the lineage facets' rules: a job that reports a lineage facet states its
// lineage (explicitLineage: no inputs x outputs are inferred for it, ingest/coarse_edges); a
// JobEvent's lineage (the job's declared lineage) and a DatasetEvent's (the dataset's derivation)
// replace the previous declaration: edges that only an older declaration of the same job or
// dataset stated are removed, those a run also stated stay (without their declaration). The
// newest declaration's stamp is kept as `@lineage`, and every node a declaration ever started an
// edge at in declaredTargets, so that an older declaration arriving late is retired too.
// Param $rows: one map per job or dataset {kind ('job' or 'dataset'), namespace, name, declared (the stamp of its newest declaration in the batch, null for a RunEvent's lineage), targets (what it declared edges from: 'D' or 'J', namespace, name, tab-separated), firstSeen, lastSeen}
// Returns: nothing
// :param rows => [{kind: 'job', namespace: 'airflow://prod', name: 'daily_etl', declared: '2026-03-25T10:00:00.000000Z|0123456789abcdef', targets: ['D\tpostgresql://warehouse:5432\toutput_table'], firstSeen: '2026-03-25T10:00:00Z', lastSeen: '2026-03-25T10:00:00Z'}]
// the plan made for this query is kept as the graph grows (docs/benchmarks.md, "Lessons kept")
CYPHER replan=skip
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE row.kind = 'job'
  MATCH (o:Job {namespace: row.namespace, name: row.name})
  SET o.explicitLineage = true
  RETURN o, row.namespace AS jobNamespace, row.name AS jobName
  UNION
  WITH row WHERE row.kind = 'dataset'
  MATCH (o:Dataset {namespace: row.namespace, name: row.name})
  RETURN o, '' AS jobNamespace, '' AS jobName
}
WITH row, o, jobNamespace, jobName WHERE row.declared IS NOT NULL
SET o.`@lineage` = CASE WHEN o.`@lineage` IS NULL OR row.declared > o.`@lineage`
                        THEN row.declared ELSE o.`@lineage` END,
    o.declaredTargets = COLLECT { UNWIND coalesce(o.declaredTargets, []) + row.targets AS t
                                  RETURN DISTINCT t ORDER BY t }
WITH o, jobNamespace, jobName
UNWIND o.declaredTargets AS target
WITH o, jobNamespace, jobName, split(target, '\t') AS t
CALL (t) {
  MATCH (n:Dataset {namespace: t[1], name: t[2]}) WHERE t[0] = 'D'
  RETURN n
  UNION
  MATCH (n:Job {namespace: t[1], name: t[2]}) WHERE t[0] = 'J'
  RETURN n
}
CALL (o, n, jobNamespace, jobName) {
  MATCH (n)-[e:DERIVED_FROM]->()
  WHERE e.jobNamespace = jobNamespace AND e.jobName = jobName AND e.declared < o.`@lineage`
  RETURN e
  UNION
  MATCH (n)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM|PRODUCED_BY]->()
  WHERE e.jobNamespace = jobNamespace AND e.jobName = jobName AND e.declared < o.`@lineage`
  RETURN e
}
WITH DISTINCT e, coalesce(e.declaredOnly, false) AS only
FOREACH (_ IN CASE WHEN only THEN [1] ELSE [] END | DELETE e)
FOREACH (_ IN CASE WHEN only THEN [] ELSE [1] END | REMOVE e.declared)

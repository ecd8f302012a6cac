// Answers: one dataset in full: properties, columns, the jobs that write and read it, the datasets
// it derives from and that derive from it (one hop), and the latest run that wrote it.
// Param $namespace: dataset namespace
// Param $name: dataset name
// Returns: props, columns, writers, readers, upstream, downstream, lastRun (or no row if unknown)
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'marts.orders_enriched'
MATCH (d:Dataset {namespace: $namespace, name: $name})
USING INDEX SEEK d:Dataset(namespace, name)
OPTIONAL CALL (d) {
  MATCH (r:Run)-[:OF]->(:Job)-[:WRITES]->(d) WHERE r.state IS NOT NULL
  RETURN r ORDER BY r.stateTime DESC LIMIT 1
}
RETURN properties(d) AS props,
       [(d)-[:HAS_COLUMN]->(c:Column) | {name: c.name, type: c.type, description: c.description,
                                         inSchema: coalesce(c.inSchema, false)}] AS columns,
       [(j:Job)-[:WRITES]->(d) | j.namespace + ':' + j.name] AS writers,
       [(j:Job)-[:READS]->(d) | j.namespace + ':' + j.name] AS readers,
       [(d)-[e:DERIVED_FROM]->(u:Dataset) | {dataset: u.namespace + ':' + u.name, job: e.jobName, coarse: e.coarse}] AS upstream,
       [(v:Dataset)-[e:DERIVED_FROM]->(d) | {dataset: v.namespace + ':' + v.name, job: e.jobName, coarse: e.coarse}] AS downstream,
       CASE WHEN r IS NULL THEN null ELSE {runId: r.runId, job: r.jobNamespace + ':' + r.jobName, state: r.state,
            start: r.startTime, end: coalesce(r.completeTime, r.failTime, r.abortTime),
            errorMessage: r.errorMessage} END AS lastRun

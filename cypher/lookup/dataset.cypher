// Answers: one dataset in full: properties, columns, the jobs that write and read it, the datasets
// it derives from and that derive from it (one hop), and the latest run that wrote it.
// Param $namespace: dataset namespace
// Param $name: dataset name
// Its columns are those of its latest written schema, in that schema's order; columns written
// before but not by that schema are listed as dropped, with when they were last written. A
// dataset no producer reported a schema for has the columns its readers reported.
// Returns: props, columns, dropped, aliases (its other names: symlinks), writers, readers, upstream, downstream (under any of its names), lastRun (or no row if unknown)
// :param namespace => 'postgres://warehouse:5432'
// :param name => 'marts.orders_enriched'
MATCH (d:Dataset {namespace: $namespace, name: $name})
USING INDEX SEEK d:Dataset(namespace, name)
// a table with several names (symlinks): its jobs, neighbours and runs under any of them
WITH d, [d] + COLLECT { MATCH (d)(()-[:DERIVED_FROM {alias: true}]->()){1,4}(a:Dataset)
                        WHERE a <> d RETURN DISTINCT a } AS names
OPTIONAL CALL (names) {
  UNWIND names AS m
  MATCH (r:Run)-[:OF]->(:Job)-[:WRITES]->(m) WHERE r.state IS NOT NULL
  RETURN r ORDER BY r.stateTime DESC LIMIT 1
}
CALL (d) {
  OPTIONAL MATCH (d)-[:HAS_COLUMN]->(c:Column)
  WITH c ORDER BY c.name
  RETURN collect(c) AS all
}
WITH d, names, r, all, CASE
       WHEN d.schemaColumns IS NOT NULL
         THEN [n IN d.schemaColumns | head([c IN all WHERE c.name = n])]
       WHEN d.schemaDigest IS NOT NULL  // loaded before schemaColumns was kept: by name
         THEN [c IN all WHERE c.schemaDigest = d.schemaDigest]
       ELSE all END AS current
RETURN properties(d) AS props,
       [c IN current WHERE c IS NOT NULL | {name: c.name, type: c.type, description: c.description,
                                            inSchema: coalesce(c.inSchema, false),
                                            // its tags: a producer's tags facet and the API's
                                            tags: [t IN coalesce(d.fieldTags, [])
                                                   WHERE split(t, '\u001f')[0] = c.name
                                                   | split(t, '\u001f')[1]]
                                                  + [(c)-[:TAGGED]->(t:Tag) | t.name]}] AS columns,
       [c IN all WHERE c.writtenLastSeen IS NOT NULL AND NOT c IN current
         | {name: c.name, type: c.type, lastWritten: c.writtenLastSeen}] AS dropped,
       [m IN tail(names) | m.namespace + ':' + m.name] AS aliases,
       COLLECT { UNWIND names AS m MATCH (j:Job)-[:WRITES]->(m)
                 RETURN DISTINCT j.namespace + ':' + j.name AS j ORDER BY j } AS writers,
       COLLECT { UNWIND names AS m MATCH (j:Job)-[:READS]->(m)
                 RETURN DISTINCT j.namespace + ':' + j.name AS j ORDER BY j } AS readers,
       COLLECT { UNWIND names AS m MATCH (m)-[e:DERIVED_FROM]->(u:Dataset) WHERE e.alias IS NULL
                 RETURN {dataset: u.namespace + ':' + u.name, job: e.jobName, coarse: e.coarse} AS u } AS upstream,
       COLLECT { UNWIND names AS m MATCH (v:Dataset)-[e:DERIVED_FROM]->(m) WHERE e.alias IS NULL
                 RETURN {dataset: v.namespace + ':' + v.name, job: e.jobName, coarse: e.coarse} AS v } AS downstream,
       CASE WHEN r IS NULL THEN null ELSE {runId: r.runId, job: r.jobNamespace + ':' + r.jobName, state: r.state,
            start: r.startTime, end: coalesce(r.completeTime, r.failTime, r.abortTime),
            errorMessage: r.errorMessage} END AS lastRun

// Answers: every dataset an event named (not soft-deleted, not a name known only from column
// lineage or a symlink) with what lineage health measures of it (docs/health.md).
// Returns: namespace, name, tags (the producers' and the API's), written (a run wrote it, under this name or another of the table's), writers and readers (jobs, current edges), derived (a writer of it reads something), hasSchema, hasOwner, hasColumnLineage (a column of it derives from another), successes (its latest successful writes, epoch ms, newest first, for freshness)
MATCH (d:Dataset) WHERE d.deleted IS NULL AND d.firstSeen IS NOT NULL
RETURN d.namespace AS namespace, d.name AS name,
       coalesce(d.tags, []) + [(d)-[:TAGGED]->(t:Tag) | t.name] AS tags,
       EXISTS { (:Run)-[:WROTE]->(d) }
         OR EXISTS { (d)-[:DERIVED_FROM {alias: true}]-(:Dataset)<-[:WROTE]-(:Run) } AS written,
       [(j:Job)-[w:WRITES]->(d) WHERE w.retired IS NULL AND j.deleted IS NULL
         | j.namespace + ':' + j.name] AS writers,
       [(j:Job)-[r:READS]->(d) WHERE r.retired IS NULL AND j.deleted IS NULL
         | j.namespace + ':' + j.name] AS readers,
       // written by a job that reads something: its columns come from others (column lineage
       // is expected of it; not of a table loaded from outside)
       EXISTS { (j:Job)-[w:WRITES]->(d) WHERE w.retired IS NULL
                AND EXISTS { (j)-[r:READS]->(:Dataset) WHERE r.retired IS NULL } } AS derived,
       d.schemaColumns IS NOT NULL OR d.schemaDigest IS NOT NULL AS hasSchema,
       size(coalesce(d.owners, [])) > 0 AS hasOwner,
       EXISTS { (d)-[:HAS_COLUMN]->(:Column)-[e:DERIVED_FROM]->(:Column) WHERE e.retired IS NULL } AS hasColumnLineage,
       // times as epoch milliseconds: 100,000 rows of driver DateTimes cost more to decode than
       // the whole query (docs/benchmarks.md, "Lineage health")
       COLLECT { MATCH (r:Run {state: 'COMPLETE'})-[:WROTE]->(d)
                 RETURN r.completeTime.epochMillis AS t ORDER BY t DESC LIMIT 10 } AS successes
ORDER BY namespace, name

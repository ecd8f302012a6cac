// Answers: datasets of a namespace as Marquez shows them, a page at a time (or one by name): the
// current columns with their tags, the sources, the facets and the latest write.
// Param $namespace: the namespace
// Param $name: one dataset's name, or null for all of the namespace
// Param $keys: instead of $namespace and $name, these datasets ({namespace, name} each, in any namespace), or null
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: props (the node's properties), fields (name, type, description, tags: the producer's, from the tags facet's entries for a field, and the API's), apiTags (tags set through the API), written (the latest run that wrote it: runId, time, completed), lastModifiedAt (the latest completed write), createdAt and updatedAt (its first and latest event times, or its readers'), columnInputs (each column's direct inputs with the transformation), total
// :param namespace => 'food_delivery'
// :param name => null
// :param keys => null
// :param skip => 0
// :param limit => 100
CALL () {
  // the namespace's datasets only when no keys are given: a row to start from, or none (a
  // predicate on $keys alone is checked per node, after reading every dataset)
  UNWIND CASE WHEN $keys IS NULL THEN [$namespace] ELSE [] END AS ns
  MATCH (d:Dataset {namespace: ns})
  WHERE $name IS NULL OR d.name = $name
  RETURN d
  UNION
  UNWIND coalesce($keys, []) AS k
  MATCH (d:Dataset {namespace: k.namespace, name: k.name})
  RETURN d
}
WITH d WHERE d.deleted IS NULL
WITH d ORDER BY d.namespace, d.name
WITH collect(d) AS found
UNWIND found[$skip..$skip + $limit] AS d
CALL (d) {
  OPTIONAL MATCH (d)-[:HAS_COLUMN]->(c:Column)
  WITH c ORDER BY c.name
  RETURN collect(c) AS all
}
WITH d, found, all, CASE
       WHEN d.schemaColumns IS NOT NULL
         THEN [n IN d.schemaColumns | head([c IN all WHERE c.name = n])]
       WHEN d.schemaDigest IS NOT NULL THEN [c IN all WHERE c.schemaDigest = d.schemaDigest]
       ELSE all END AS current
OPTIONAL CALL (d) {
  MATCH (r:Run)-[:WROTE]->(d)
  WITH r, coalesce(r.completeTime, r.failTime, r.abortTime, r.stateTime) AS at
  RETURN r.runId AS runId, at ORDER BY at DESC, runId DESC LIMIT 1
}
RETURN properties(d) AS props,
       [c IN current WHERE c IS NOT NULL | {name: c.name, type: c.type, description: c.description,
                                            tags: [t IN coalesce(d.fieldTags, []) WHERE t STARTS WITH c.name + '\u001f'
                                                  | substring(t, size(c.name) + 1)]
                                                + [(c)-[:TAGGED]->(t:Tag) | t.name]}] AS fields,
       [(d)-[:TAGGED]->(t:Tag) | t.name] AS apiTags,
       CASE WHEN runId IS NULL THEN null ELSE {runId: runId, time: at} END AS written,
       COLLECT { MATCH (r:Run {state: 'COMPLETE'})-[:WROTE]->(d)
                 RETURN r.completeTime AS t ORDER BY t DESC LIMIT 1 }[0] AS lastModifiedAt,
       // a dataset only column lineage names has no event times of its own: its readers' first;
       // a name known only from a symlinks facet: the times of the name that reported it
       coalesce(d.firstSeen, COLLECT { MATCH (:Job)-[e:READS]->(d) RETURN e.firstSeen AS t ORDER BY t LIMIT 1 }[0],
                COLLECT { MATCH (d)-[:SYMLINK]-(a:Dataset) RETURN a.firstSeen AS t ORDER BY t LIMIT 1 }[0]) AS createdAt,
       coalesce(d.lastSeen, COLLECT { MATCH (:Job)-[e:READS]->(d) RETURN e.lastSeen AS t ORDER BY t DESC LIMIT 1 }[0],
                COLLECT { MATCH (d)-[:SYMLINK]-(a:Dataset) RETURN a.lastSeen AS t ORDER BY t DESC LIMIT 1 }[0]) AS updatedAt,
       // each current column's direct inputs (columnLineage, as Marquez's DatasetResource fills it)
       COLLECT { MATCH (d)-[:HAS_COLUMN]->(c:Column)-[e:DERIVED_FROM]->(i:Column) WHERE e.retired IS NULL
                 RETURN {field: c.name, namespace: i.namespace, dataset: i.dataset, input: i.name,
                         type: e.type, subtype: e.subtype, masking: e.masking, description: e.description,
                         jobNamespace: e.jobNamespace, job: e.jobName} AS i } AS columnInputs,
       size(found) AS total

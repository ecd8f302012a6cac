// Answers: what an erasure plan says of each place the data reaches: its current name (a dataset
// renamed since: lifecycleStateChange RENAME), its other names (symlinks and declared aliases),
// the jobs that write it in current lineage, and whether it is soft-deleted.
// Param $datasets: list of {namespace, name}
// Returns: namespace, name, renamedToNamespace and renamedToName (its current name, when renamed; else null), otherNames ('namespace:name'), writers ('namespace:name' of the jobs that write it now), deleted
// :param datasets => [{namespace: 'postgres://warehouse:5432', name: 'ml.user_features'}]
UNWIND $datasets AS k
MATCH (d:Dataset {namespace: k.namespace, name: k.name})
USING INDEX SEEK d:Dataset(namespace, name)
RETURN d.namespace AS namespace, d.name AS name,
       CASE WHEN d.renamedTo IS NOT NULL THEN coalesce(d.renamedToNamespace, d.namespace) END AS renamedToNamespace,
       d.renamedTo AS renamedToName,
       COLLECT { MATCH (d)-[:SYMLINK]-{1,4}(a:Dataset) WHERE a <> d
                 RETURN DISTINCT a.namespace + ':' + a.name } AS otherNames,
       COLLECT { MATCH (j:Job)-[w:WRITES]->(d) WHERE w.retired IS NULL
                 RETURN DISTINCT j.namespace + ':' + j.name } AS writers,
       d.deleted IS NOT NULL AS deleted

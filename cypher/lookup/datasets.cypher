// Answers: datasets, optionally of one namespace, a page at a time, each with its columns and owners.
// Param $namespace: namespace to list, or null for all
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: namespace, name, description, owners, tags, columns, lastSeen, the total count, aliases (its other names: symlinks)
// :param namespace => null
// :param skip => 0
// :param limit => 50
// a table once: a name that only a symlink gives is listed under the name carrying the symlink,
// unless its own namespace is listed
MATCH (d:Dataset)
WHERE ($namespace IS NULL AND NOT (EXISTS { (d)<-[:SYMLINK]-() } AND NOT EXISTS { (d)-[:SYMLINK]->() }))
   OR d.namespace = $namespace
WITH d ORDER BY d.namespace, d.name
WITH collect(d) AS found
UNWIND found[$skip..$skip + $limit] AS d
RETURN d.namespace AS namespace, d.name AS name, d.description AS description,
       coalesce(d.owners, []) AS owners, coalesce(d.tags, []) AS tags,
       [(d)-[:HAS_COLUMN]->(c:Column) | {name: c.name, type: c.type}] AS columns,
       d.lastSeen AS lastSeen, size(found) AS total,
       COLLECT { MATCH (d)(()-[:DERIVED_FROM {alias: true}]->()){1,4}(a:Dataset) WHERE a <> d
                 RETURN DISTINCT a.namespace + ':' + a.name AS a ORDER BY a } AS aliases

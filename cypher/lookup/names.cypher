// Answers: the names of every dataset or every job, optionally only those matching a regular
// expression (Java syntax, whole name), for listing and for "did you mean"; not those deleted
// (a soft delete: `lineage delete`, Marquez's DELETE).
// Param $kind: 'dataset' or 'job'
// Param $pattern: a regular expression the whole name must match, or null for all
// Param $limit: how many to return
// Returns: namespace, name, aliases (a dataset's other names: symlinks), alias (true for a name
// that only a symlink gives: its table is listed under the name that carries the symlink)
// :param kind => 'dataset'
// :param pattern => '(?i).*users.*'
// :param limit => 1000
MATCH (n) WHERE (($kind = 'dataset' AND n:Dataset) OR ($kind = 'job' AND n:Job))
  AND ($pattern IS NULL OR n.name =~ $pattern) AND n.deleted IS NULL
RETURN n.namespace AS namespace, n.name AS name,
       COLLECT { MATCH (n)(()-[:DERIVED_FROM {alias: true}]->()){1,4}(a:Dataset) WHERE a <> n
                 RETURN DISTINCT a.namespace + ':' + a.name AS a ORDER BY a } AS aliases,
       EXISTS { (n)<-[:SYMLINK]-() } AND NOT EXISTS { (n)-[:SYMLINK]->() } AS alias
ORDER BY namespace, name
LIMIT $limit

// Answers: Marquez's search: datasets and jobs whose name holds a fragment (any case), with
// Marquez's filter, sort, namespace and before/after parameters.
// Param $q: the fragment
// Param $kind: 'DATASET', 'JOB', or null for both
// Param $namespace: keep one namespace, or null
// Param $after: keep those last updated on or after this date, or null
// Param $before: keep those last updated on or before this date, or null
// Param $byName: true to sort by name, false by last update (newest first)
// Param $limit: how many
// Returns: type, name, updatedAt, namespace, nodeId, total
// :param q => 'order'
// :param kind => null
// :param namespace => null
// :param after => null
// :param before => null
// :param byName => true
// :param limit => 10
CALL () {
  MATCH (d:Dataset) WHERE ($kind IS NULL OR $kind = 'DATASET') AND d.deleted IS NULL
    AND toLower(d.name) CONTAINS toLower($q)
  RETURN 'DATASET' AS type, d.name AS name, d.lastSeen AS updatedAt, d.namespace AS namespace,
         'dataset:' + d.namespace + ':' + d.name AS nodeId
  UNION ALL
  MATCH (j:Job) WHERE ($kind IS NULL OR $kind = 'JOB') AND j.deleted IS NULL
    AND toLower(j.name) CONTAINS toLower($q)
  RETURN 'JOB' AS type, j.name AS name, j.lastSeen AS updatedAt, j.namespace AS namespace,
         'job:' + j.namespace + ':' + j.name AS nodeId
}
WITH * WHERE ($namespace IS NULL OR namespace = $namespace)
  AND ($after IS NULL OR date(updatedAt) >= $after) AND ($before IS NULL OR date(updatedAt) <= $before)
WITH * ORDER BY CASE WHEN $byName THEN name END, updatedAt DESC, name
WITH collect({type: type, name: name, updatedAt: updatedAt, namespace: namespace, nodeId: nodeId}) AS found
UNWIND found[..$limit] AS f
RETURN f.type AS type, f.name AS name, f.updatedAt AS updatedAt, f.namespace AS namespace,
       f.nodeId AS nodeId, size(found) AS total

// Answers: namespaces as Marquez shows them: every namespace of a dataset or a job, and those
// created through the API (or one by name), with when first and last seen and its owner; not
// those deleted through the API, until something in them is reported again.
// Param $name: one namespace, or null for all
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: name, createdAt, updatedAt, ownerName, description, total
// :param name => null
// :param skip => 0
// :param limit => 100
CALL () {
  MATCH (n) WHERE (n:Dataset OR n:Job) AND n.deleted IS NULL
  RETURN n.namespace AS name, n.firstSeen AS since, n.lastSeen AS until
  UNION ALL
  MATCH (m:Namespace) WHERE m.deleted IS NULL RETURN m.name AS name, m.createdAt AS since, m.updatedAt AS until
}
WITH name, min(since) AS createdAt, max(until) AS updatedAt
WHERE $name IS NULL OR name = $name
ORDER BY name
WITH collect({name: name, createdAt: createdAt, updatedAt: updatedAt}) AS found
UNWIND found[$skip..$skip + $limit] AS f
OPTIONAL MATCH (m:Namespace {name: f.name})
RETURN f.name AS name, f.createdAt AS createdAt, f.updatedAt AS updatedAt,
       coalesce(m.ownerName, 'anonymous') AS ownerName, m.description AS description,
       size(found) AS total

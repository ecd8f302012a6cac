// Answers: namespaces as Marquez shows them: every namespace of a dataset or a job, and those
// created through the API (or one by name), with when first and last seen and its owner. A
// namespace deleted through the API stays listed with isHidden, as Marquez keeps it, until
// something in it is reported again or it is created again.
// Param $name: one namespace, or null for all
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: name, createdAt, updatedAt, ownerName, description, isHidden, total
// :param name => null
// :param skip => 0
// :param limit => 100
CALL () {
  MATCH (n) WHERE n:Dataset OR n:Job
  RETURN n.namespace AS name, n.firstSeen AS since, n.lastSeen AS until, n.deleted IS NULL AS shown
  UNION ALL
  MATCH (m:Namespace)
  RETURN m.name AS name, m.createdAt AS since, m.updatedAt AS until, m.deleted IS NULL AS shown
}
WITH name, min(since) AS createdAt, max(until) AS updatedAt, max(shown) AS shown
WHERE $name IS NULL OR name = $name
ORDER BY name
WITH collect({name: name, createdAt: createdAt, updatedAt: updatedAt, shown: shown}) AS found
UNWIND found[$skip..$skip + $limit] AS f
OPTIONAL MATCH (m:Namespace {name: f.name})
RETURN f.name AS name, f.createdAt AS createdAt, f.updatedAt AS updatedAt,
       coalesce(m.ownerName, 'anonymous') AS ownerName, m.description AS description,
       NOT f.shown AS isHidden, size(found) AS total

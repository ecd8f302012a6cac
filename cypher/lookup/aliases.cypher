// Answers: every pair of names of one table: producers' symlinks and aliases declared with
// `lineage alias` (type ALIAS), each with the name that carries it (the canonical one).
// Param $declaredOnly: true lists the declared aliases only
// Returns: namespace, name, aliasNamespace, aliasName, type, declared, firstSeen, lastSeen
// :param declaredOnly => false
MATCH (d:Dataset)-[s:SYMLINK]->(a:Dataset)
WHERE NOT $declaredOnly OR s.type = 'ALIAS'
RETURN d.namespace AS namespace, d.name AS name, a.namespace AS aliasNamespace, a.name AS aliasName,
       s.type AS type, s.type = 'ALIAS' AS declared, s.firstSeen AS firstSeen, s.lastSeen AS lastSeen
ORDER BY namespace, name, aliasNamespace, aliasName, type

// Answers: Marquez's sources: the data sources datasets report (the dataSource facet), and
// 'default' for datasets that report none, as Marquez names them.
// Param $name: one source, or null for all
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: name, connectionUrl, createdAt, updatedAt
// :param name => null
// :param skip => 0
// :param limit => 100
MATCH (d:Dataset)
WITH coalesce(d.dataSourceName, 'default') AS name, d
WHERE $name IS NULL OR name = $name
WITH name, max(d.dataSourceUri) AS connectionUrl, min(d.firstSeen) AS createdAt,
     max(d.lastSeen) AS updatedAt
ORDER BY name
SKIP $skip LIMIT $limit
RETURN name, connectionUrl, createdAt, updatedAt

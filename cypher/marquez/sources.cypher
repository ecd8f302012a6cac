// Answers: Marquez's sources: the data sources datasets report (the dataSource facet), 'default'
// for datasets that report none, as Marquez names them, and those created through Marquez's
// legacy write (PUT /sources/{name}).
// Param $name: one source, or null for all
// Param $skip: rows to skip (page offset)
// Param $limit: page size
// Returns: name, connectionUrl, type (as written through the API, else null), description, createdAt, updatedAt
// :param name => null
// :param skip => 0
// :param limit => 100
CALL () {
  // a dataset an event named (not one known only from column lineage or a symlink: it reports
  // no source, and has no times of its own)
  MATCH (d:Dataset) WHERE d.firstSeen IS NOT NULL
  RETURN coalesce(d.dataSourceName, 'default') AS name, d.dataSourceUri AS url, null AS type,
         null AS description, d.firstSeen AS since, d.lastSeen AS until
  UNION ALL
  MATCH (s:Source)
  RETURN s.name AS name, s.connectionUrl AS url, s.type AS type, s.description AS description,
         s.createdAt AS since, s.updatedAt AS until
}
WITH name, url, type, description, since, until
WHERE $name IS NULL OR name = $name
WITH name, max(url) AS connectionUrl, max(type) AS type, max(description) AS description,
     min(since) AS createdAt, max(until) AS updatedAt
ORDER BY name
SKIP $skip LIMIT $limit
RETURN name, connectionUrl, type, description, createdAt, updatedAt

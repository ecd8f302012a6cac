// Answers: creates or describes a data source through Marquez's legacy write (PUT /sources/{name}):
// its type, connection URL and description. Datasets name their source in their dataSource
// facet; a dataset written through Marquez's legacy API takes this URL into that facet.
// Param $name: the source's name
// Param $type: its type, as Marquez's SourceType (POSTGRESQL, MYSQL, KAFKA, ...)
// Param $connectionUrl: its connection URL (credentials already removed)
// Param $description: a description, or null
// Param $at: when the API took the write (ISO 8601): a replay of the event log sets the same times
// Returns: name
// :param name => 'analytics_db'
// :param type => 'POSTGRESQL'
// :param connectionUrl => 'postgres://db.example.com:5432/analytics'
// :param description => 'the analytics warehouse'
// :param at => '2026-11-27T09:00:00Z'
MERGE (s:Source {name: $name})
ON CREATE SET s.createdAt = datetime($at)
SET s.type = $type, s.connectionUrl = $connectionUrl, s.description = $description,
    s.updatedAt = datetime($at)
RETURN s.name AS name

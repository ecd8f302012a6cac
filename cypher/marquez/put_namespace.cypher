// Answers: creates or updates a namespace through the API (Marquez's PUT /namespaces/{namespace}):
// its owner and description; a namespace deleted before is shown again.
// Param $name: the namespace
// Param $ownerName: its owner
// Param $description: its description, or null
// Param $at: when the API took the write (ISO 8601): a replay of the event log sets the same times
// Returns: name
// :param name => 'food_delivery'
// :param ownerName => 'data-platform'
// :param description => 'Food delivery pipelines'
// :param at => '2026-11-27T09:00:00Z'
MERGE (m:Namespace {name: $name})
ON CREATE SET m.createdAt = datetime($at)
SET m.ownerName = $ownerName, m.description = $description, m.updatedAt = datetime($at)
REMOVE m.deleted
RETURN m.name AS name

// Answers: creates or updates a namespace through the API (Marquez's PUT /namespaces/{namespace}):
// its owner and description; a namespace deleted before is shown again.
// Param $name: the namespace
// Param $ownerName: its owner
// Param $description: its description, or null
// Returns: name
// :param name => 'food_delivery'
// :param ownerName => 'data-platform'
// :param description => 'Food delivery pipelines'
MERGE (m:Namespace {name: $name})
ON CREATE SET m.createdAt = datetime()
SET m.ownerName = $ownerName, m.description = $description, m.updatedAt = datetime()
REMOVE m.deleted
RETURN m.name AS name

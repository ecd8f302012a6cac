// Answers: creates or describes a tag (Marquez's PUT /tags/{tag}).
// Param $tag: the tag
// Param $description: its description, or null
// Returns: name, description
// :param tag => 'PII'
// :param description => 'Personal data (GDPR)'
MERGE (t:Tag {name: $tag})
ON CREATE SET t.createdAt = datetime()
SET t.description = $description
RETURN t.name AS name, t.description AS description

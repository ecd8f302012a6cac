// Answers: creates or describes a tag (Marquez's PUT /tags/{tag}).
// Param $tag: the tag
// Param $description: its description, or null
// Param $at: when the API took the write (ISO 8601): a replay of the event log sets the same times
// Returns: name, description
// :param tag => 'PII'
// :param description => 'Personal data (GDPR)'
// :param at => '2026-11-27T09:00:00Z'
MERGE (t:Tag {name: $tag})
ON CREATE SET t.createdAt = datetime($at)
SET t.description = $description
RETURN t.name AS name, t.description AS description

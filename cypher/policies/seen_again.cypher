// Answers: moves the last sighting of the open violations anchored at datasets a batch restated
// without changing their lineage (impact.policy.prints): checked again, each would be seen again.
// Param $anchors: the anchor datasets ('namespace:name')
// Param $at: when the batch was checked (ISO 8601)
// Returns: seen, how many violations
// :param anchors => ['postgres://warehouse:5432:raw.users']
// :param at => '2026-11-27T09:00:00Z'
UNWIND $anchors AS anchor
MATCH (v:PolicyViolation {anchor: anchor})
WHERE v.clearedAt IS NULL AND v.lastSeen < datetime($at)
SET v.lastSeen = datetime($at)
RETURN count(v) AS seen

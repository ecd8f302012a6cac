// Answers: marks violations of policy rules cleared: no longer seen when their rule was checked.
// Param $keys: the violations' keys
// Param $at: when (ISO 8601)
// Returns: key
// :param keys => []
// :param at => '2026-11-27T09:00:00Z'
UNWIND $keys AS k
MATCH (v:PolicyViolation {key: k})
WHERE v.clearedAt IS NULL
SET v.clearedAt = datetime($at)
RETURN v.key AS key

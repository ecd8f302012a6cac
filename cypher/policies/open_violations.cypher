// Answers: the violations of policy rules open now (not cleared), of some rules and anchors.
// Param $rules: rule ids, or null for every rule
// Param $anchors: anchor datasets ('namespace:name'), or null for every anchor
// Returns: key, rule, anchor, label, counts
// :param rules => null
// :param anchors => null
MATCH (v:PolicyViolation)
WHERE v.clearedAt IS NULL AND ($rules IS NULL OR v.rule IN $rules)
  AND ($anchors IS NULL OR v.anchor IN $anchors)
RETURN v.key AS key, v.rule AS rule, v.anchor AS anchor, v.label AS label, v.counts AS counts
ORDER BY key

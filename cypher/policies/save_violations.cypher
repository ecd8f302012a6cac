// Answers: records violations of policy rules as seen now: a new one (or one that had cleared)
// is first seen now, one still open is last seen now.
// Param $rows: the violations, each {key, rule, severity, kind, source, target, anchor, datasets, targetDataset, label, what, counts, waiver, steps (JSON text)}
// Param $at: when they were seen (ISO 8601)
// Returns: key, firstSeen
// :param rows => []
// :param at => '2026-11-27T09:00:00Z'
UNWIND $rows AS r
MERGE (v:PolicyViolation {key: r.key})
SET v.firstSeen = CASE WHEN v.firstSeen IS NULL OR v.clearedAt IS NOT NULL THEN datetime($at)
                       ELSE v.firstSeen END
SET v += r, v.lastSeen = datetime($at), v.clearedAt = null
RETURN v.key AS key, toString(v.firstSeen) AS firstSeen

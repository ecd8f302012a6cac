// Answers: the violations of policy rules lineage-graph keeps (impact.policy.watch), newest first: open
// ones, cleared ones or both, by rule, dataset (a source's or a target's) and severity.
// Param $rule: a rule id, or null
// Param $dataset: a dataset, 'namespace:name' or its name alone, or null
// Param $severity: error or warning, or null
// Param $state: open, cleared or all
// Param $limit: the most to answer
// Param $offset: how many to skip
// Returns: total (how many match), violations (each with key, rule, severity, kind, source, target, anchor, label, what, counts, waiver, steps (JSON text), firstSeen, lastSeen, clearedAt)
// :param rule => null
// :param dataset => null
// :param severity => null
// :param state => 'open'
// :param limit => 100
// :param offset => 0
MATCH (v:PolicyViolation)
WHERE ($rule IS NULL OR v.rule = $rule)
  AND ($severity IS NULL OR v.severity = $severity)
  AND ($dataset IS NULL OR any(d IN v.datasets WHERE d = $dataset OR d ENDS WITH ':' + $dataset))
  AND ($state = 'all' OR ($state = 'open') = (v.clearedAt IS NULL))
WITH v ORDER BY v.lastSeen DESC, v.key
WITH collect(v) AS found
RETURN size(found) AS total,
       [v IN found[$offset..$offset + $limit] |
        v {.key, .rule, .severity, .kind, .source, .target, .anchor, .label, .what, .counts,
           .waiver, .steps, firstSeen: toString(v.firstSeen), lastSeen: toString(v.lastSeen),
           clearedAt: toString(v.clearedAt)}] AS violations

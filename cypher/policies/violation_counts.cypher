// Answers: how many violations of each policy rule are open now and count (no waiver accepts
// them), by severity: what /metrics exposes.
// Returns: rule, severity, open
MATCH (v:PolicyViolation)
WHERE v.clearedAt IS NULL AND v.counts
RETURN v.rule AS rule, v.severity AS severity, count(*) AS open
ORDER BY rule, severity

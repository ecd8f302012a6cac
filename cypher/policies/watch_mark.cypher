// Answers: how far the policy watch has kept the violations current (impact.policy.kept): the
// digest of the rules it checks and the event log's position it has checked through; no row
// before a watch has marked.
// Returns: digest, through, checkedAt
MATCH (w:PolicyWatch {key: 'graph'})
RETURN w.digest AS digest, w.through AS through, w.checkedAt AS checkedAt

// Answers: how far the policy watch has kept the violations current (impact.policy.kept): the
// digest of the rules it checks, the event log's position it has checked through and the last
// bulk load when it began; no row before a watch has marked.
// Returns: digest, through, bulk, checkedAt
MATCH (w:PolicyWatch {key: 'graph'})
RETURN w.digest AS digest, w.through AS through, w.bulk AS bulk, w.checkedAt AS checkedAt

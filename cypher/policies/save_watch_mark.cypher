// Answers: records how far the policy watch has kept the violations current (impact.policy.kept):
// the digest of the rules it checks and the event log's position through which every batch it
// was offered has been checked.
// Param $digest: the policy file's digest (impact.policy.rules.Policies.digest)
// Param $through: the log's seq through which every batch was checked
// Param $at: when the check ended (ISO 8601)
// Returns: nothing
// :param digest => 'a3f1'
// :param through => 1200
// :param at => '2026-12-07T09:00:00Z'
MERGE (w:PolicyWatch {key: 'graph'})
SET w.digest = $digest, w.through = $through, w.checkedAt = datetime($at)

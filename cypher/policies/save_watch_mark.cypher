// Answers: records how far the policy watch has kept the violations current (impact.policy.kept):
// the digest of the rules it checks, the event log's position through which every batch it
// was offered has been checked, and the last bulk load when it began.
// Param $digest: the policy file's digest (impact.policy.rules.Policies.digest)
// Param $through: the log's seq through which every batch was checked
// Param $bulk: the id of the last bulk load the log recorded when the watch began (0: none)
// Param $at: when the check ended (ISO 8601)
// Returns: nothing
// :param digest => 'a3f1'
// :param through => 1200
// :param bulk => 0
// :param at => '2026-12-07T09:00:00Z'
MERGE (w:PolicyWatch {key: 'graph'})
SET w.digest = $digest, w.through = $through, w.bulk = $bulk, w.checkedAt = datetime($at)

// Answers: the erasure requests recorded, oldest first (for /metrics: each one's state).
// Param $max: at most this many
// Returns: ref, openedAt, deadline
// :param max => 1000
MATCH (x:ErasureRequest)
RETURN x.ref AS ref, x.openedAt AS openedAt, x.deadline AS deadline
ORDER BY openedAt LIMIT $max

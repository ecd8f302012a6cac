// Answers: keeps what the last retention run did (docs/graph-model.md, "Retention"), for
// `lineage status`, `/status` and `/metrics`.
// Param $state: {now, detailedSince, summarySince, ranAt, folded, removedEdges, removedNodes, took}
// Returns: nothing
// :param state => {now: datetime('2025-01-01T00:00:00Z'), detailedSince: datetime('2024-10-03T00:00:00Z'), summarySince: datetime('2024-01-02T00:00:00Z'), ranAt: datetime(), folded: 0, removedEdges: 0, removedNodes: 0, took: 0.1}
MERGE (k:Retention {key: 'graph'})
SET k += $state

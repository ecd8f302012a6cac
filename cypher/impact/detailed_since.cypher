// Answers: where the detailed window of retention began at its last run (lineage older than this
// is summary lineage: its runs are folded; docs/graph-model.md, "Retention").
// Returns: one row with detailedSince (null when retention never ran)
OPTIONAL MATCH (k:Retention {key: 'graph'})
RETURN k.detailedSince AS detailedSince

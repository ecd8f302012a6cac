// Answers: the graph's own time for retention (docs/graph-model.md, "Retention"): the latest event
// time it holds (the latest lastSeen of a job), and the retention state kept from the last run.
// Returns: now (null for a graph without jobs), state (the Retention node's properties, or null)
OPTIONAL MATCH (j:Job)
WITH max(j.lastSeen) AS now
OPTIONAL MATCH (k:Retention {key: 'graph'})
RETURN now, k {.*} AS state

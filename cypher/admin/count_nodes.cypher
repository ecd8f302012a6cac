// Answers: how many nodes the graph holds (replay rebuilds an empty graph only).
// Returns: nodes.
MATCH (n) RETURN count(n) AS nodes

// Answers: how large the graph is: its nodes and its relationships, both read from Neo4j's count
// store (constant time, whatever the size). The plan keeper (impact/warm.py) asks the questions
// again only when these have changed since it last did: Neo4j plans a query again when the counts
// its plan was made with have moved enough, and whoever asks next pays for it.
// Returns: nodes, relationships
CALL () { MATCH (n) RETURN count(n) AS nodes }
CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships }
RETURN nodes, relationships

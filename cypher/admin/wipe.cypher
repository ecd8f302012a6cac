// Answers: nothing; it deletes every node and relationship, 10,000 nodes per transaction (`lineage replay --wipe`).
// Run it on its own: CALL … IN TRANSACTIONS needs an implicit (auto-commit) transaction.
MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS

"""Retention: detailed lineage for a window (90 days by default), summary lineage for a longer
one (365 days), and what no run has stated for longer removed, current lineage never
(docs/graph-model.md, "Retention"). Time is the graph's own: the latest event time it holds.

``run.retain`` does it in small transactions; ``run.plan`` does the same in one transaction
that is rolled back, and reports what it would fold and remove."""

"""Policy rules: what lineage must keep (docs/policies.md).

``rules`` (the policy file), ``paths`` (the lineage a dataset-level rule walks), ``check`` (the
rules against the graph), ``violations`` (kept in Neo4j as ``:PolicyViolation`` nodes),
``watch`` (kept checked as the graph changes, on a worker), ``delta`` (what a proposed change
does to the rules), ``gate`` (may a job consume this dataset now). Other wings and the front
doors use ``rules``, ``check``, ``watch``, ``delta`` and ``gate``."""

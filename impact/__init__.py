"""Impact analysis: the questions lineage-graph answers, and the rules that watch them.

The questions sit at this level, one module each: ``blast_radius``, ``upstream``, ``root_cause``,
``where`` and ``tag_reach`` (GDPR reach), what they share (``answers``, ``flow``: networkx over
the subgraph a walk returned), finding things by name (``discover``, ``lookups``) and warming
Neo4j for them (``warm``). The features built on them are wings:

- ``change``: a proposed change (a change file, SQL, a dbt manifest) and the pre-deploy check;
- ``policy``: the rules lineage must keep, checked, watched, kept as violations, and gates;
- ``health``: lineage health (coverage, completeness, freshness), tiers and SLOs;
- ``marquez``: Marquez's read API over our graph;
- ``ml``: models in the answers, and a model version's provenance.

A wing may use the questions and ``graph``; ``policy`` also uses ``health`` (a gate's
freshness). The questions use three modules of wings: ``ml.models`` (the model versions an answer
names), ``health.freshness`` (root cause) and ``marquez.lineage`` (warmed with the rest). Nothing
here imports ``ingest`` or ``api``."""

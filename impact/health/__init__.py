"""Lineage health (docs/health.md): how much of the estate lineage covers, how complete
and how current it is.

``measure`` (the SLIs), ``tiers`` (how much a dataset matters), ``slo`` (targets per tier,
judged), ``freshness`` (when a dataset was last written, and whether it is late; also used by
``impact.policy.gate``)."""

"""Integration tests of the health wing: lineage health (impact.health): SLIs, SLOs, tiers, /metrics, Prometheus."""

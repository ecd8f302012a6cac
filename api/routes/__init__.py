"""The HTTP API's routes, one router per area: ingest, questions, lookups, Marquez-shaped
lineage, operations (health, readiness, metrics)."""

"""HTTP API (FastAPI) and the `lineage` command line."""

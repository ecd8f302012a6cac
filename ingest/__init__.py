"""OpenLineage ingest: read → validate → transform (pure) → load (batched UNWIND … MERGE)."""

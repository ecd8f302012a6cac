"""Marquez's read API over our graph (docs/marquez.md): pure shapes and their queries.

``models`` (Marquez's nouns built from our rows, no database), ``catalog`` (namespaces,
sources, datasets, jobs, runs, tags), ``versions`` (dataset and job versions), ``lineage`` (the
graph around a node in Marquez's shape), ``stats`` (run lineage and ``/stats``)."""

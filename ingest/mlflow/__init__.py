"""MLflow as a producer (docs/producers.md, "MLflow"): ``records`` (what a tracking server
records, over its REST API), ``events`` (those records as OpenLineage events), ``sync`` (``lineage
mlflow sync``)."""

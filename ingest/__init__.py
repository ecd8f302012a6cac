"""OpenLineage ingest: read → validate → transform (pure) → combine → load (batched UNWIND …
MERGE), at this level one module per step (``read``, ``validate``, ``transform``, ``combine``,
``load``, ``pipeline``) with what they use (``facets``, ``column_lineage``, ``rows`` …), and the
``worker`` that consumes the event log into Neo4j. Wings:

- ``log``: the durable event log (its protocol, SQLite, Kafka and its local broker, group commit);
- ``mlflow``: an MLflow tracking server's records as OpenLineage events;
- ``spark``: Spark with the OpenLineage listener, and big loads with PySpark.

Nothing here imports ``impact`` or ``api``."""

"""Local services and demos: ``processes`` (``lineage up``/``down``/``status``: the API and
workers, each its own process), ``mlflow_server``, ``producers`` (dbt, Airflow and MLflow in
environments of their own), ``demo`` and ``ml_demo``. The local Neo4j is ``graph.local_server``
and the local Kafka broker ``ingest.log.kafka_broker``, as their layers need them."""

"""The durable event log: every accepted event is appended here before it is acknowledged.

``protocol`` (what every log offers), ``sqlite`` (the embedded log, the default), ``kafka`` (a
Kafka topic, docs/kafka.md) and ``kafka_broker`` (a local broker for first use and the tests),
``group_commit`` (the appends of concurrent requests in one commit)."""

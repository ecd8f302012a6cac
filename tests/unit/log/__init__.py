"""Unit tests of the log wing: the event logs (ingest.log): SQLite, Kafka, the protocol, group commit."""

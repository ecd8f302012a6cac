"""``lineage kafka``: the local Kafka broker the Kafka event log runs on by default (start, stop,
status) and the topics (docs/kafka.md)."""

from __future__ import annotations

import typer

from api.cli.app import app
from api.cli.common import get_settings, out, progress

kafka_app = typer.Typer(
    help="A local Kafka broker (from Maven Central, KRaft, on loopback) for LINEAGE_LOG=kafka "
         "(docs/kafka.md). With your own cluster (LINEAGE_LOG=kafka://HOST:PORT/TOPIC) nothing "
         "is started.", no_args_is_help=True)
app.add_typer(kafka_app, name="kafka", rich_help_panel="Run the services")


def ensure_topics() -> str:
    """Create the log's topic and its dead-letter topic if missing; the topic's address."""
    from api.services.retention import topic_retention_ms
    from ingest.log.kafka import KafkaAddress, create_topics

    settings = get_settings()
    address = KafkaAddress.parse(settings.log if settings.log != "sqlite" else "kafka",
                                 settings.kafka_port)
    create_topics(address, settings.kafka_partitions,
                  topic_retention_ms(settings) if settings.retention_interval else None)
    return f"{address.bootstrap}/{address.topic}"


@kafka_app.command("start")
def start_cmd() -> None:
    """Start the local broker (assembled with Maven on first use) and create the topics."""
    from ingest.log.kafka_broker import LocalBroker

    broker = LocalBroker(get_settings())
    with progress("starting Kafka…") as say:
        broker.start(say=say)
        topic = ensure_topics()
    out.print(f"Kafka {broker.status().state} on {broker.bootstrap}; topic {topic} (data in "
              f"{broker.home})", highlight=False)


@kafka_app.command("stop")
def stop_cmd() -> None:
    """Stop the local broker."""
    from ingest.log.kafka_broker import LocalBroker

    out.print("stopped" if LocalBroker(get_settings()).stop() else "it was not running")


@kafka_app.command("status")
def status_cmd() -> None:
    """Whether the local broker runs, and where."""
    from ingest.log.kafka_broker import LocalBroker

    status = LocalBroker(get_settings()).status()
    out.print(f"Kafka {status.state}: {status.address} ({status.detail})", highlight=False)

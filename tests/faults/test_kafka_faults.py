"""Crash recovery on the Kafka log, scripted and bounded in time, on loopback only.

A producer puts LINEAGE_KAFKA_FAULT_EVENTS (default 2,000) events on a topic of a real local broker,
re-sending a batch until the broker acknowledged it, as OpenLineage's Kafka transport would; two
real `lineage worker` processes of one consumer group load them into the test process's Neo4j. During the
load we kill -9 a worker, then the broker, then Neo4j, and start each again, and poison messages
(nested 100,000 levels, a lone surrogate, not UTF-8, not JSON) go on the topic among the events.
Afterwards the graph must equal the graph of a clean load of the same events, every produced event
must be in it, and the dead letters must be exactly the poison messages.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("confluent_kafka", reason="the kafka extra is not installed")

from graph.db import Graph  # noqa: E402
from graph.local_server import LocalServer  # noqa: E402
from graph.schema import apply_schema  # noqa: E402
from graph.settings import Settings  # noqa: E402
from ingest.log.kafka import KafkaAddress, KafkaLog, create_topics, group_lag  # noqa: E402
from ingest.log.kafka_broker import LocalBroker  # noqa: E402
from ingest.log.sqlite import LogError  # noqa: E402
from ingest.pipeline import Ingester, IngestReport  # noqa: E402
from ingest.read import RawItem  # noqa: E402
from tests.conftest import server_settings, wipe  # noqa: E402
from tests.faults.conftest import services_env  # noqa: E402
from tests.faults.test_crash_recovery import Proc, _events, _graph_state  # noqa: E402
from tests.helpers import free_port, rows  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.faults]
BATCH = 50
EVENTS = int(os.environ.get("LINEAGE_KAFKA_FAULT_EVENTS", "2000"))
POISON = [b"[" * 100_000 + b"]" * 100_000,
          b'{"eventType": "COMPLETE", "job": {"namespace": "x", "name": "\\ud800"}}',
          b'{"eventTime": "\xff\xfe"}',
          b"not json at all"]


def test_kill_9_of_a_worker_the_broker_and_neo4j_loses_nothing(server: LocalServer,
                                                                session_graph: Graph,
                                                                tmp_path: Path) -> None:
    graph = session_graph
    settings = Settings(state_dir=tmp_path / "state", kafka_port=free_port(),
                        kafka_controller_port=free_port())
    shared = LocalBroker(server_settings())
    shared._assemble(lambda line: None)
    (settings.state_dir / "kafka").mkdir(parents=True)
    (settings.state_dir / "kafka" / "lib").symlink_to(shared.home / "lib")
    broker = LocalBroker(settings)
    broker.start()
    address = KafkaAddress(broker.bootstrap, f"faults-{uuid.uuid4().hex[:8]}")
    create_topics(address, 4)
    env = services_env(server, tmp_path / "unused.db", free_port()) | {
        "LINEAGE_LOG": f"kafka://{address.bootstrap}/{address.topic}",
        # the killed worker's partitions go to the others after 6 s, not librdkafka's 45
        "LINEAGE_KAFKA_SESSION_TIMEOUT": "6"}
    workers = [Proc(["worker"], env, tmp_path / f"worker-{i}.log") for i in range(2)]
    events = _events(EVENTS)
    batches = [events[i:i + BATCH] for i in range(0, len(events), BATCH)]
    acked = 0
    deadline = time.monotonic() + 900

    def produce() -> None:
        nonlocal acked
        from confluent_kafka import Producer

        log = KafkaLog(address, client_id="faults-producer")
        poison = Producer({"bootstrap.servers": address.bootstrap, "message.max.bytes": 10_000_000})
        every = max(1, len(batches) // (len(POISON) + 1))
        for n, batch in enumerate(batches):
            if n % every == every - 1 and n // every < len(POISON):
                poison.produce(address.topic, value=POISON[n // every], key=f"poison-{n}".encode())
                assert poison.flush(60) == 0, "a poison message was not acknowledged"
            while time.monotonic() < deadline:  # re-sent until acknowledged, like a producer
                try:
                    log.append(batch)
                    acked += 1
                    break
                except LogError:
                    time.sleep(0.5)
        log.close()

    def loaded() -> int:
        return int(rows(graph, "MATCH (r:Run) RETURN count(r) AS n")[0]["n"])

    def wait_loaded(fraction: float) -> None:
        while loaded() < fraction * len(events) and time.monotonic() < deadline:
            time.sleep(0.1)

    try:
        apply_schema(graph)
        wipe(graph)
        for w in workers:
            w.start()
        producer = threading.Thread(target=produce)
        producer.start()
        wait_loaded(0.2)
        workers[0].kill9()
        time.sleep(0.5)
        workers[0].start()
        wait_loaded(0.4)
        os.kill(int(broker.pid_file.read_text()), signal.SIGKILL)
        time.sleep(3)  # the producer retries, the workers hold their positions
        broker.start()
        wait_loaded(0.6)
        os.kill(int(server.pid_file.read_text()), signal.SIGKILL)
        time.sleep(1)
        assert server.status().state == "crashed"
        time.sleep(2)
        server.start()
        producer.join(timeout=max(1.0, deadline - time.monotonic()))
        assert acked == len(batches), "the producer gave up before every batch was acknowledged"
        while time.monotonic() < deadline:
            try:
                if group_lag(address) == 0:
                    break
            except Exception:  # noqa: BLE001 - the broker answering again
                pass
            time.sleep(0.5)
        assert group_lag(address) == 0, f"{group_lag(address)} events never committed"
        time.sleep(1)
        after_faults = _graph_state(graph)
        assert {e["run"]["runId"] for e in events} <= {r for r, _ in after_faults[2]}
        # a broker or Neo4j away is no fault of an event: only the poison messages are dead letters
        # (a poison message dead-lettered again after a kill is one dead letter)
        letters = KafkaLog(address).dead_letters()
        assert len(letters) == len(POISON), [(d.reason[:200], str(d.event)[:80]) for d in letters]
        assert KafkaLog(address).dead_letter_count() == len(POISON)

        wipe(graph)
        Ingester(graph, batch_size=5000).ingest([RawItem(f"e{i}", obj=e) for i, e in enumerate(events)],
                                                 IngestReport())
        assert after_faults == _graph_state(graph)
    finally:
        for w in workers:
            w.stop()
        broker.stop()

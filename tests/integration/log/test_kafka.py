"""The event log on Kafka: a real broker (Apache Kafka from Maven Central, KRaft, on loopback,
started by ingest.log.kafka_broker), the API producing to the topic, two workers in one consumer group
loading Neo4j, OpenLineage's own Kafka transport, and bad messages on the topic dead-lettered."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("confluent_kafka", reason="the kafka extra is not installed")

from api.app import create_app  # noqa: E402
from graph.db import Graph  # noqa: E402
from graph.settings import Settings  # noqa: E402
from ingest.log.kafka import KafkaAddress, KafkaLog, create_topics, group_lag, message_key  # noqa: E402
from ingest.log.kafka_broker import LocalBroker  # noqa: E402
from ingest.worker import Worker  # noqa: E402
from tests.conftest import server_settings, wipe  # noqa: E402
from tests.helpers import canonical_dump, free_port, ingest_events, serving  # noqa: E402

pytestmark = pytest.mark.integration
SHOP = Path(__file__).resolve().parents[3] / "examples" / "events" / "shop.ndjson"


@dataclass
class Broker:
    bootstrap: str
    settings: Settings


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    shared = LocalBroker(server_settings())
    shared._assemble(lambda line: None)  # the jars, once, in the test state directory
    home = tmp_path_factory.mktemp("kafka")
    settings = Settings(state_dir=home, kafka_port=free_port(), kafka_controller_port=free_port(),
                        kafka_partitions=4)
    (home / "kafka").mkdir()
    (home / "kafka" / "lib").symlink_to(shared.home / "lib")
    local = LocalBroker(settings)
    local.start()
    try:
        yield Broker(local.bootstrap, settings)
    finally:
        local.stop()


def _address(broker: Broker) -> KafkaAddress:
    address = KafkaAddress(broker.bootstrap, f"lineage-{uuid.uuid4().hex[:8]}")
    create_topics(address, 4)
    return address


@contextlib.contextmanager
def _workers(graph: Graph, address: KafkaAddress, count: int) -> Iterator[list[KafkaLog]]:
    stop = threading.Event()
    logs = [KafkaLog(address, client_id=f"worker-{i}") for i in range(count)]
    threads = [threading.Thread(target=Worker(graph, log).run, args=(stop, 0.05), daemon=True)
               for log in logs]
    for t in threads:
        t.start()
    try:
        yield logs
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        for log in logs:
            log.close()


def _wait_loaded(address: KafkaAddress, timeout: float = 120.0) -> None:
    started = time.monotonic()
    while group_lag(address) > 0:
        assert time.monotonic() - started < timeout, f"{group_lag(address)} events not loaded"
        time.sleep(0.2)


@contextlib.contextmanager
def _api(graph: Graph, address: KafkaAddress, settings: Settings | None = None) -> Iterator[str]:
    with serving(create_app(settings or Settings(), graph, KafkaLog(address, client_id="api"))) as url:
        yield url


def _post(url: str, body: bytes, content_type: str = "application/x-ndjson") -> dict[str, Any]:
    request = urllib.request.Request(f"{url}/api/v1/lineage", data=body, method="POST",
                                     headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=60) as answer:
        assert answer.status == 201
        result: dict[str, Any] = json.loads(answer.read())
        return result


def _topic_values(address: KafkaAddress) -> list[bytes]:
    """Every message value on the topic, partition by partition."""
    from confluent_kafka import Consumer, TopicPartition

    reader = Consumer({"bootstrap.servers": address.bootstrap, "group.id": f"read-{uuid.uuid4()}"})
    values = []
    try:
        for part in range(4):
            low, high = reader.get_watermark_offsets(TopicPartition(address.topic, part), timeout=10)
            if high > low:
                reader.assign([TopicPartition(address.topic, part, low)])
                values += [m.value() or b"" for m in reader.consume(high - low, timeout=10)]
    finally:
        reader.close()
    return values


def test_http_to_kafka_to_two_workers_builds_the_http_paths_graph(graph: Graph, broker: Broker) -> None:
    events = [json.loads(line) for line in SHOP.read_text("utf-8").splitlines() if line.strip()]
    ingest_events(graph, events)
    expected = canonical_dump(graph)
    wipe(graph)
    address = _address(broker)
    with _api(graph, address) as url, _workers(graph, address, 2):
        answer = _post(url, SHOP.read_bytes())
        assert answer["accepted"] == len(events)
        _wait_loaded(address)
        time.sleep(0.5)  # the last batch's commit follows its Neo4j commit
    assert canonical_dump(graph) == expected
    # `lineage replay` reads the topic from its earliest offsets
    from ingest.pipeline import Ingester, IngestReport
    from ingest.replay import replay

    wipe(graph)
    report = IngestReport()
    replay(graph, KafkaLog(address), Ingester(graph), report)
    assert report.read == len(events) and not report.rejected
    assert canonical_dump(graph) == expected


def test_the_commands_that_load_directly_keep_their_events_in_the_topic(
        graph: Graph, broker: Broker, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With the log on Kafka, `lineage ingest` and `lineage delete` write the topic (not the
    SQLite file), so that a replay from the topic rebuilds what they did and an export holds
    them; a purge is refused."""
    from typer.testing import CliRunner

    from api.cli import app
    from graph.settings import get_settings
    from tests.helpers import point_cli_at_test_server

    events = [json.loads(line) for line in SHOP.read_text("utf-8").splitlines() if line.strip()]
    wipe(graph)
    address = _address(broker)
    point_cli_at_test_server(monkeypatch)
    monkeypatch.setenv("LINEAGE_LOG", f"kafka://{address.bootstrap}/{address.topic}")
    get_settings.cache_clear()
    runner = CliRunner()
    loaded = runner.invoke(app, ["ingest", str(SHOP)])
    assert loaded.exit_code == 0, loaded.output
    assert len(_topic_values(address)) == len(events)
    job = events[0]["job"]
    hidden = runner.invoke(app, ["delete", "job", job["namespace"], job["name"]])
    assert hidden.exit_code == 0 and "hid job" in hidden.output, hidden.output
    assert len(_topic_values(address)) == len(events) + 1  # the soft delete, a command
    direct = canonical_dump(graph)
    rebuilt = runner.invoke(app, ["replay", "--wipe"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert f"replayed {len(events)} events" in rebuilt.output and "1 metadata commands" in rebuilt.output
    assert canonical_dump(graph) == direct  # the deletion in its place among the events
    exported = runner.invoke(app, ["export", str(tmp_path / "lake")])
    assert exported.exit_code == 0, exported.output
    assert f"wrote {len(events)} events" in exported.output and "1 metadata commands" in exported.output
    purge = runner.invoke(app, ["delete", "job", job["namespace"], job["name"], "--purge", "--yes"])
    assert purge.exit_code == 2 and "Kafka topic keeps its entries" in " ".join(purge.output.split())
    get_settings.cache_clear()


def test_an_erasure_request_over_kafka_is_applied_by_the_group_and_replayed_from_the_topic(
        graph: Graph, broker: Broker, tmp_path: Path) -> None:
    """An erasure request opened over HTTP with the log on Kafka is a command on the topic that
    a worker of the group applies in its place (the API answers once it is applied); the topic
    holds neither the subject's reference nor anything of the key in clear, only its salted
    hash, and a replay from the topic rebuilds the request as it was."""
    from api.services.erasure import subject_hash

    events = [json.loads(line) for line in SHOP.read_text("utf-8").splitlines() if line.strip()]
    wipe(graph)
    address = _address(broker)
    settings = Settings(state_dir=tmp_path / "state", erasure_salt="a kafka salt")
    subject = "customer-4711@example.com"
    warehouse = "postgres://warehouse:5432"
    body = {"keys": [{"namespace": warehouse, "dataset": "raw.users", "column": "id"}],
            "subjectRef": subject}
    with _api(graph, address, settings) as url, _workers(graph, address, 2):
        _post(url, SHOP.read_bytes())
        _wait_loaded(address)
        request = urllib.request.Request(
            f"{url}/api/v1/erasure/requests", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as answer:
            assert answer.status == 201
            opened = json.loads(answer.read())
        assert opened["created"] is True and opened["places"] == 3
        status_request = urllib.request.Request(
            f"{url}/api/v1/erasure/status", data=json.dumps({"subjectRef": subject}).encode(),
            method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(status_request, timeout=60) as answer:
            status = json.loads(answer.read())
        assert status["state"] == "open"
        assert {p["dataset"] for p in status["places"]} == {
            f"{warehouse}:raw.users", f"{warehouse}:staging.users_clean",
            f"{warehouse}:ml.user_features"}
        _wait_loaded(address)
        time.sleep(0.5)  # the last batch's commit follows its Neo4j commit
    values = _topic_values(address)
    assert len(values) == len(events) + 1  # the events and the request, a command
    assert not any(subject.encode() in v for v in values)
    assert sum(subject_hash(settings, subject).encode() in v for v in values) == 1
    opened_graph = canonical_dump(graph)

    from ingest.pipeline import Ingester, IngestReport
    from ingest.replay import replay

    wipe(graph)
    report = IngestReport()
    replay(graph, KafkaLog(address), Ingester(graph), report)
    assert canonical_dump(graph) == opened_graph


def test_the_group_is_seen_from_outside_by_metrics_and_status(graph: Graph, broker: Broker,
                                                              capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    """The API's /metrics and `lineage status` say the consumer group's lag, who holds which
    partition and what it committed: the broker's view, not one worker process's."""
    from api.cli.stack import _kafka_state, print_up
    from ingest.log.kafka import describe_group

    events = [json.loads(line) for line in SHOP.read_text("utf-8").splitlines() if line.strip()]
    wipe(graph)
    address = _address(broker)
    KafkaLog(address).append(events)
    waiting = describe_group(address)
    assert waiting.lag == len(events) and waiting.committed == 0
    assert waiting.oldest_wait(time.time() + 5) >= 5  # produced before now
    settings = Settings(state_dir=broker.settings.state_dir,
                        log=f"kafka://{address.bootstrap}/{address.topic}")
    before = _kafka_state(settings, {})
    assert before["workerLag"] == len(events) and before["members"] == {"(none)": [0, 1, 2, 3]}

    with _api(graph, address) as url:
        worker = KafkaLog(address)  # this process's client id, as `lineage worker` has
        stop = threading.Event()
        thread = threading.Thread(target=Worker(graph, worker).run, args=(stop, 0.05), daemon=True)
        thread.start()
        try:
            _wait_loaded(address)
            state: dict[str, Any] = {"neo4j": {"state": "running", "bolt": "b", "browser": "h"},
                                     "worker": {"running": True, "pid": os.getpid(), "log": "w.log"}}
            state["log"] = _kafka_state(settings, state)
            with urllib.request.urlopen(f"{url}/metrics", timeout=30) as answer:
                metrics = answer.read().decode()
        finally:
            stop.set()
            thread.join(timeout=30)
            worker.close()
    assert state["worker"]["partitions"] == [0, 1, 2, 3] and state["worker"]["lag"] == 0
    assert state["log"]["events"] == len(events) and state["log"]["workerLag"] == 0
    assert state["log"]["group"] == "STABLE" and state["log"]["deadLetters"] == 0
    state["ok"] = True
    print_up(settings, state)
    shown = " ".join(capsys.readouterr().out.split())  # the table wraps to the terminal
    assert "partitions 0,1,2,3, lag 0" in shown and "0 dead letters; group STABLE" in shown
    assert f"lineage_worker_events_total {len(events)}" in metrics
    assert "lineage_worker_lag_events 0" in metrics and "lineage_kafka_group_members 1" in metrics
    assert f"lineage_log_events {len(events)}" in metrics and "lineage_kafka_up 1" in metrics
    assert 'lineage_kafka_partition_lag_events{partition="3",worker="lineage-graph-' in metrics
    # `lineage status` on the local broker says the broker, and a topic never created as such
    from api.cli.stack import up_state

    local = up_state(Settings(state_dir=broker.settings.state_dir, log="kafka",
                              kafka_port=broker.settings.kafka_port))
    assert local["kafka"]["state"] == "running" and not local["ok"]
    assert "openlineage" in local["log"]["error"] and "no such topic" in local["log"]["error"]


def test_the_api_keys_events_as_the_clients_do(broker: Broker) -> None:
    from confluent_kafka import Consumer, TopicPartition

    address = _address(broker)
    parent = {"run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "air", "name": "dag"},
              "root": {"run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "air", "name": "root"}}}
    child = {"eventType": "START", "eventTime": "2026-11-28T00:00:00Z", "producer": "p",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": str(uuid.uuid4()), "facets": {"parent": parent}},
             "job": {"namespace": "spark", "name": "task"}}
    plain = {**child, "run": {"runId": str(uuid.uuid4())}}
    dataset = {"eventTime": "2026-11-28T00:00:00Z", "producer": "p",
               "dataset": {"namespace": "pg", "name": "t"}}
    assert message_key(child) == "run:air/root"
    assert message_key(plain) == "run:spark/task"
    assert message_key(dataset) == "dataset:pg/t"
    assert message_key({"job": {"namespace": "j", "name": "n"}, "eventTime": "x"}) == "job:j/n"
    log = KafkaLog(address)
    offsets = log.append([child, plain, dataset])
    assert len(offsets) == 3
    log.close()
    reader = Consumer({"bootstrap.servers": address.bootstrap, "group.id": "keys-check"})
    keys = set()
    for part in range(4):
        reader.assign([TopicPartition(address.topic, part, 0)])
        for m in reader.consume(10, timeout=2):
            keys.add((m.key() or b"").decode())
    reader.close()
    assert keys == {"run:air/root", "run:spark/task", "dataset:pg/t"}


def test_the_openlineage_clients_kafka_transport_feeds_the_graph(graph: Graph, broker: Broker) -> None:
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
    from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

    address = _address(broker)
    transport = KafkaTransport(KafkaConfig(topic=address.topic, flush=True,
                                           config={"bootstrap.servers": address.bootstrap}))
    client = OpenLineageClient(transport=transport)
    run = Run(runId=str(uuid.uuid4()))
    job = Job(namespace="client", name="copy_orders")
    for state in (RunState.START, RunState.COMPLETE):
        client.emit(RunEvent(eventType=state, eventTime="2026-11-28T01:00:00Z", run=run, job=job,
                             producer="https://example.com/test",
                             inputs=[InputDataset(namespace="pg", name="raw.orders")],
                             outputs=[OutputDataset(namespace="pg", name="mart.orders")]))
    with _workers(graph, address, 1):
        _wait_loaded(address)
        time.sleep(0.5)
    through_kafka = canonical_dump(graph)
    sent = [json.loads(line) for line in _topic_values(address)]
    wipe(graph)
    ingest_events(graph, sent)  # the same events as the HTTP path loads them
    assert canonical_dump(graph) == through_kafka
    found = graph.driver.execute_query(
        "MATCH (:Dataset {name: 'mart.orders'})-[:DERIVED_FROM]->(s:Dataset) RETURN s.name AS n")
    assert [r["n"] for r in found.records] == ["raw.orders"]
    ended = graph.driver.execute_query("MATCH (r:Run {runId: $id}) RETURN r.state AS s", id=run.runId)
    assert ended.records[0]["s"] == "COMPLETE"


def test_bad_messages_are_dead_lettered_with_a_reason_and_never_stop_a_worker(
        graph: Graph, broker: Broker) -> None:
    from confluent_kafka import Producer

    address = _address(broker)
    producer = Producer({"bootstrap.servers": address.bootstrap, "message.max.bytes": 10_000_000})
    good = {"eventType": "COMPLETE", "eventTime": "2026-11-28T02:00:00Z", "producer": "p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "ok", "name": "after"},
            "outputs": [{"namespace": "ok", "name": "loaded"}]}
    bad = [b"{not json", b"[1, 2]", json.dumps({"hello": "world"}).encode(),
           b'{"eventTime": "x", "pad": "' + b"x" * (9 * 2**20) + b'"}']
    for value in [*bad, json.dumps(good).encode()]:
        producer.produce(address.topic, value=value, key=b"same-partition")
    assert producer.flush(30) == 0
    with _workers(graph, address, 1) as (log,):
        _wait_loaded(address)
        time.sleep(0.5)
        letters = log.dead_letters()
        assert log.dead_letter_count() == 4
    reasons = sorted(d.reason for d in letters)
    assert len(letters) == 4, reasons
    assert any(r.startswith("not JSON") for r in reasons)
    assert any("not a JSON object" in r for r in reasons)
    assert any(r.startswith("too large") for r in reasons)
    assert any("hello" not in r and r for r in reasons)
    loaded = graph.driver.execute_query("MATCH (d:Dataset {namespace: 'ok', name: 'loaded'}) RETURN d")
    assert len(loaded.records) == 1  # the event after the bad ones


def test_the_spark_listeners_kafka_transport_feeds_the_graph(graph: Graph, broker: Broker,
                                                            tmp_path: Path) -> None:
    pytest.importorskip("pyspark", reason="the spark extra is not installed")
    from api.local.demo import run_pipeline
    from impact.blast_radius import dataset_blast_radius

    address = _address(broker)
    # the listener jar is cached in the test state directory, Kafka's client jars under the broker
    settings = Settings(state_dir=server_settings().state_dir, kafka_port=broker.settings.kafka_port,
                        log=f"kafka://{address.bootstrap}/{address.topic}")
    wh = tmp_path / "warehouse"
    with _workers(graph, address, 2):
        code, _, output = run_pipeline(settings, "http://127.0.0.1:9", wh, users=200, orders=800)
        assert code == 0, output[-3000:]
        _wait_loaded(address)
        time.sleep(0.5)
    reached = {i.name for i in dataset_blast_radius(graph, "file", f"{wh}/raw/users").impacted}
    assert {f"{wh}/staging/users_clean", f"{wh}/dashboards/revenue", f"{wh}/ml/user_features"} <= reached


def test_unreadable_messages_are_dead_lettered_with_their_bytes_and_nothing_after_is_lost(
        graph: Graph, broker: Broker) -> None:
    """A message nested 100,000 levels, one holding a lone surrogate and one not UTF-8, among
    good events on one partition: each bad one is dead-lettered with its original bytes, every
    good event after it loads, and the group's offsets end past all of them."""
    from confluent_kafka import Producer

    address = _address(broker)
    producer = Producer({"bootstrap.servers": address.bootstrap, "message.max.bytes": 10_000_000})

    def good(i: int) -> bytes:
        return json.dumps({
            "eventType": "COMPLETE", "eventTime": "2026-11-28T02:00:00Z", "producer": "p",
            "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": "ok", "name": f"job_{i}"},
            "outputs": [{"namespace": "ok", "name": f"out_{i}"}]}).encode()

    nested = b"[" * 100_000 + b"]" * 100_000
    surrogate = good(99).replace(b'"job_99"', b'"job_\\ud800"')
    not_utf8 = b'{"eventTime": "\xff\xfe"}'
    bad = [nested, surrogate, not_utf8]
    values = [good(0), nested, good(1), surrogate, good(2), not_utf8, *(good(i) for i in range(3, 9))]
    for value in values:
        producer.produce(address.topic, value=value, key=b"same-partition")
    assert producer.flush(30) == 0
    with _workers(graph, address, 1) as (log,):
        _wait_loaded(address)
        time.sleep(0.5)
        assert log.dead_letter_count() == 3
    jobs = graph.driver.execute_query(
        "MATCH (j:Job {namespace: 'ok'}) RETURN j.name AS name ORDER BY name").records
    assert [r["name"] for r in jobs] == [f"job_{i}" for i in range(9)]
    assert sorted(_topic_values(KafkaAddress(address.bootstrap, address.dead_letters))) == sorted(bad)


def test_a_message_dead_lettered_again_after_its_worker_stopped_is_one_dead_letter(
        broker: Broker) -> None:
    """A worker that dead-letters a message and stops before committing its offset leaves it to
    the next owner of the partition, which dead-letters it again: the topic keeps two copies of
    one source message, and the listing and the count say one."""
    address = _address(broker)
    KafkaLog(address).append([{"eventType": "COMPLETE", "job": {"namespace": "ok", "name": "bad"}}])

    def dead_letter_without_commit() -> None:
        log = KafkaLog(address, client_id="worker")
        entries: list[Any] = []
        while not entries:
            entries = log.read(0, 10)
        log.add_dead_letter(entries[0].seq, entries[0].event, "no runId")
        log.close()  # stopped: the offset is not committed

    dead_letter_without_commit()
    dead_letter_without_commit()
    assert len(_topic_values(KafkaAddress(address.bootstrap, address.dead_letters))) == 2
    counter = KafkaLog(address)
    assert [d.reason for d in counter.dead_letters()] == ["no runId"]
    assert counter.dead_letter_count() == 1
    KafkaLog(address).append([{"eventType": "COMPLETE", "job": {"namespace": "ok", "name": "bad2"}}])
    log = KafkaLog(address, client_id="worker")
    entries = [e for e in log.read(0, 10) if e.event["job"]["name"] == "bad2"]
    while not entries:
        entries = [e for e in log.read(0, 10) if e.event["job"]["name"] == "bad2"]
    log.add_dead_letter(entries[0].seq, entries[0].event, "no runId either")
    log.close()
    assert counter.dead_letter_count() == 2  # read on from where it stopped


def test_an_entry_whose_partition_moved_to_another_worker_is_its_dead_letter_alone(
        broker: Broker) -> None:
    """A worker that read messages and lost their partitions to a worker joining the group does
    not dead-letter them: their new owner reads them again and does. Each poison message is one
    dead letter on the topic, and none of them names no source."""
    address = _address(broker)
    KafkaLog(address).append([{"eventType": "COMPLETE", "job": {"namespace": "ok", "name": f"bad{i}"}}
                              for i in range(8)])
    first = KafkaLog(address, client_id="worker-a")
    taken: list[Any] = []
    deadline = time.monotonic() + 60
    while len(taken) < 8 and time.monotonic() < deadline:
        taken += first.read(taken[-1].seq if taken else 0, 10)
    assert len(taken) == 8
    second = KafkaLog(address, client_id="worker-b")
    moved: list[Any] = []
    quiet_since = time.monotonic()
    while time.monotonic() < deadline and (not moved or time.monotonic() - quiet_since < 3):
        first.read(taken[-1].seq, 10)  # the first worker polls: it gives partitions up
        more = second.read(moved[-1].seq if moved else 0, 10)
        if more:
            moved += more
            quiet_since = time.monotonic()
    assert moved, "the joining worker was given no partition"
    for entry in taken:  # the batch the first worker read before the rebalance, all poison
        first.add_dead_letter(entry.seq, entry.event, "no runId (first worker)")
    first.commit("neo4j", taken[-1].seq)
    for entry in moved:
        second.add_dead_letter(entry.seq, entry.event, "no runId (second worker)")
    second.commit("neo4j", moved[-1].seq)
    first.close()
    second.close()
    letters = KafkaLog(address).dead_letters()
    assert len(_topic_values(KafkaAddress(address.bootstrap, address.dead_letters))) == 8
    assert sorted(d.event["job"]["name"] for d in letters) == [f"bad{i}" for i in range(8)]
    by_second = sorted(d.event["job"]["name"] for d in letters if "second" in d.reason)
    assert by_second == sorted(e.event["job"]["name"] for e in moved)


def test_listing_events_by_time_on_a_kafka_log_is_a_clear_501(graph: Graph) -> None:
    """A topic lists and counts no events by time: Marquez's event listings and event stats say
    so (501), never a 500 nor a count of 0."""
    from fastapi.testclient import TestClient

    from api.app import create_app

    log = KafkaLog(KafkaAddress("127.0.0.1:1", "lineage-nowhere"))
    with TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                    client=("127.0.0.1", 40001)) as api:
        for path in ("/api/v1/events/lineage", "/api/v1/events", "/api/v1/events/some_namespace",
                     "/api/v1/stats/lineage-events?period=DAY"):
            r = api.get(path)
            assert r.status_code == 501 and "Kafka" in r.json()["detail"], (path, r.text)


def _retention_ms(address: KafkaAddress) -> str:
    import importlib

    kafka_admin: Any = importlib.import_module("confluent_kafka.admin")  # typed loosely
    admin = kafka_admin.AdminClient({"bootstrap.servers": address.bootstrap})
    topic = kafka_admin.ConfigResource(kafka_admin.ResourceType.TOPIC, address.topic)
    return str(admin.describe_configs([topic])[topic].result(timeout=30)["retention.ms"].value)


def test_retention_archives_what_the_group_loaded_and_replay_reads_the_archive_then_the_topic(
        graph: Graph, broker: Broker, tmp_path: Path) -> None:
    """A topic lets messages go by its retention.ms, which retention sets to the detailed window
    and a day; before that, the messages the group loaded go to the archive, each once, and a
    replay reads the archive and then the topic from where the archive ends (docs/graph-model.md,
    "Retention")."""
    from api.services.retention import keep_windows
    from ingest.log.archive import archive_topic, archived
    from ingest.pipeline import Ingester, IngestReport
    from ingest.replay import replay

    events = [json.loads(line) for line in SHOP.read_text("utf-8").splitlines() if line.strip()]
    ingest_events(graph, events)
    expected = canonical_dump(graph)
    wipe(graph)
    address = _address(broker)
    half = len(events) // 2
    KafkaLog(address, client_id="api").append(events[:half])
    with _workers(graph, address, 1):
        _wait_loaded(address)
        time.sleep(0.5)  # the last batch's commit follows its Neo4j commit
    KafkaLog(address, client_id="api").append(events[half:])  # not loaded: never archived yet

    archive = tmp_path / "archive"
    soon = datetime.now(UTC) + timedelta(seconds=5)
    assert archive_topic(KafkaLog(address), archive, soon).entries == half
    assert archive_topic(KafkaLog(address), archive, soon).entries == 0  # each message once
    assert archived(archive) == half

    # a retention run sets the topic's retention.ms, and archives nothing younger than 90 days
    settings = Settings(state_dir=tmp_path / "state", archive=archive, log=f"kafka://{address.bootstrap}/{address.topic}")
    kept = keep_windows(graph, KafkaLog(address), settings)
    assert kept.log is not None and kept.log.entries == 0
    assert _retention_ms(address) == str(91 * 86_400_000)

    wipe(graph)
    report = IngestReport()
    done = replay(graph, KafkaLog(address), Ingester(graph), report, archive_dir=archive)
    assert done.archived == half and report.read == len(events) and not report.rejected
    assert canonical_dump(graph) == expected

"""The Kafka log's pure parts: where it is, how events are keyed, what a message that is not an
event becomes (the integration test runs a real broker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.log.kafka import KafkaAddress, KafkaLog, message_key
from ingest.log.protocol import RAW, UNREADABLE, Checked, Entry
from ingest.log.sqlite import LogError, SQLiteLog
from ingest.read import from_log


@pytest.mark.parametrize(("value", "bootstrap", "topic"), [
    ("kafka", "127.0.0.1:9092", "openlineage"),
    ("kafka://", "127.0.0.1:9092", "openlineage"),
    ("kafka://b1:9092,b2:9092/lineage", "b1:9092,b2:9092", "lineage"),
    ("kafka://broker:9093", "broker:9093", "openlineage"),
])
def test_addresses(value: str, bootstrap: str, topic: str) -> None:
    address = KafkaAddress.parse(value)
    assert (address.bootstrap, address.topic) == (bootstrap, topic)
    assert address.dead_letters == f"{topic}.dead-letters"


@pytest.mark.parametrize("value", ["kafka://broker/a/b", "http://broker:9092/t", "sqlite3"])
def test_bad_addresses_say_what_is_expected(value: str) -> None:
    with pytest.raises(LogError, match="kafka://HOST:PORT|no '/'"):
        KafkaAddress.parse(value)


def _run(facets: dict[str, object] | None = None) -> dict[str, object]:
    return {"eventTime": "2026-11-28T00:00:00Z", "run": {"runId": "r", "facets": facets or {}},
            "job": {"namespace": "spark", "name": "task"}}


def test_run_events_are_keyed_by_their_root_job_then_parent_then_job() -> None:
    parent = {"job": {"namespace": "air", "name": "dag.task"},
              "root": {"job": {"namespace": "air", "name": "dag"}}}
    assert message_key(_run({"parent": parent})) == "run:air/dag"
    assert message_key(_run({"parent": {"job": parent["job"]}})) == "run:air/dag.task"
    assert message_key(_run()) == "run:spark/task"


def test_static_events_and_commands_are_keyed_by_their_subject() -> None:
    assert message_key({"eventTime": "t", "job": {"namespace": "j", "name": "n"}}) == "job:j/n"
    assert message_key({"eventTime": "t", "dataset": {"namespace": "d", "name": "t"}}) == "dataset:d/t"
    assert message_key({"command": "tag", "namespace": "shop"}) == "command:shop"


def test_a_message_that_is_not_an_event_reaches_the_worker_as_a_rejection() -> None:
    for value, reason in ((b"{nope", "not JSON"), (b"[1]", "not a JSON object"),
                          (b'{"a": NaN}', "not JSON")):
        event = KafkaLog._decode(value)
        assert event[UNREADABLE].startswith(reason)
        item = from_log(Entry(7, 0.0, event, Checked.RECEIVED))
        assert item.error and item.error.startswith(reason) and item.obj is None
        assert event[RAW] == value.decode()


def test_a_bad_log_address_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from api.cli import app
    from graph.settings import get_settings

    monkeypatch.setenv("LINEAGE_LOG", "sqlite")  # `lineage up` sets it: restored after the test
    monkeypatch.setenv("LINEAGE_WORKERS", "1")
    try:
        done = CliRunner().invoke(app, ["up", "--log", "kafka://broker/a/b"])
    finally:
        get_settings.cache_clear()
    assert done.exit_code == 2 and "no '/'" in done.output


def test_bulk_loads_are_recorded_in_the_ledger_beside_the_topic(tmp_path: Path) -> None:
    """A topic keeps events only: the Spark bulk loads `lineage replay --wipe` must not drop
    unknowingly are recorded in the local SQLite file (no broker is needed for that)."""
    address = KafkaAddress.parse("kafka://127.0.0.1:1/lineage")
    without = KafkaLog(address)
    assert without.bulk_loads() == []
    with pytest.raises(LogError, match="no ledger"):
        without.record_bulk_load("/lake/events", 10)
    log = KafkaLog(address, ledger=lambda: SQLiteLog(tmp_path / "events.db"))
    assert log.bulk_loads() == []
    log.record_bulk_load("/lake/events", 10)
    again = KafkaLog(address, ledger=lambda: SQLiteLog(tmp_path / "events.db"))  # another process
    assert [(b.source, b.events) for b in again.bulk_loads()] == [("/lake/events", 10)]
    again.forget_bulk_loads()
    assert log.bulk_loads() == []


def test_a_broker_away_is_said_once_in_a_while_not_every_retry() -> None:
    """librdkafka says each failed reconnection again every few hundred milliseconds while a
    broker is away: the log gets each thing once per 30 s, then how often it was said since."""
    import logging

    from ingest.log.kafka import Repeats

    now = [0.0]
    records: list[str] = []
    logger = logging.getLogger("test.kafka.repeats")
    logger.propagate = False
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    logger.addFilter(Repeats(every=30.0, clock=lambda: now[0]))
    failed = "FAIL [rdkafka#consumer-2] [thrd:127.0.0.1:9092/bootstrap]: Connect to ipv4#127.0.0.1:9092 failed"
    for i in range(120):  # a minute of retries, every half second
        now[0] = i * 0.5
        logger.error("%s (after %d ms in state CONNECT)", failed, i)
        if i % 20 == 0:
            logger.warning("the group rebalanced")
    assert [r for r in records if r.startswith("FAIL")] == [
        f"{failed} (after 0 ms in state CONNECT)",
        f"{failed} (after 60 ms in state CONNECT) (and 59 times more in 30 s)"]
    assert sum(r.startswith("the group") for r in records) == 2  # said at 0 s and 30 s

"""The event log's protocol split by who uses it: every log offers the writer, the consumer, the
dead letters and replay; what a log cannot do it lacks (no fake), and nothing outside the logs asks
which kind of log it has."""

from __future__ import annotations

import ast
import time
from pathlib import Path

from ingest.log.kafka import KafkaAddress, KafkaLog
from ingest.log.protocol import (
    Backlog,
    EventLog,
    History,
    RetriedInPlace,
    SoleConsumer,
    WorkerFigures,
)
from ingest.log.sqlite import SQLiteLog

ROOT = Path(__file__).resolve().parents[3]
OPTIONAL = (History, SoleConsumer, RetriedInPlace, WorkerFigures)


def _members(protocol: type) -> set[str]:
    return {name for klass in protocol.__mro__ if klass.__module__ == "ingest.log.protocol"
            for name, value in vars(klass).items() if callable(value) and not name.startswith("_")}


def test_both_logs_offer_every_method_every_log_offers() -> None:
    wanted = _members(EventLog)
    assert {"append", "read", "lag", "add_dead_letter", "scan", "close"} <= wanted
    for log_class in (SQLiteLog, KafkaLog):
        assert wanted <= set(dir(log_class)), (log_class, wanted - set(dir(log_class)))


def test_a_kafka_log_lacks_what_a_topic_cannot_do_and_the_sqlite_log_has_it(tmp_path: Path) -> None:
    kafka = KafkaLog(KafkaAddress("127.0.0.1:1", "nowhere"))
    sqlite = SQLiteLog(tmp_path / "events.db")
    try:
        for protocol in OPTIONAL:
            assert isinstance(sqlite, protocol), protocol
            assert not isinstance(kafka, protocol), protocol
            assert not _members(protocol) & set(dir(KafkaLog)), protocol
    finally:
        sqlite.close()


def test_nothing_outside_the_logs_asks_which_kind_of_log_it_has() -> None:
    asked = []
    for path in ROOT.glob("[aig]*/**/*.py"):
        if "ingest/log/" in path.as_posix() or "build/" in path.relative_to(ROOT).as_posix():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance"
                    and len(node.args) == 2
                    and ast.unparse(node.args[1]) in ("KafkaLog", "SQLiteLog")):
                asked.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not asked


def test_the_sqlite_log_says_its_backlog_and_the_age_of_its_oldest_entry(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    try:
        assert log.lag("neo4j").events == 0 and log.lag("neo4j").oldest_seconds == 0.0
        log.append([{"n": 1}, {"n": 2}, {"n": 3}])
        time.sleep(0.05)
        lag = log.lag("neo4j")
        assert lag.events == 3 and 0.05 <= lag.oldest_seconds < 60 and lag.partitions is None
        assert lag.last == 3  # the log's end, learnt with the backlog (/metrics asks once)
        log.commit("neo4j", 2)
        assert log.lag("neo4j").events == 1
        log.remove([3])  # the entry past the position gone (a purge): nothing waits
        assert log.lag("neo4j") == Backlog(0, 0.0, last=2)
    finally:
        log.close()

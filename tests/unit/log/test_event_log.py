"""The embedded event log (SQLite): listing by time and job namespace, a log an earlier version
wrote, the worker's position moved only from where it stood, recorded bulk loads, and one
consumer per log."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ingest import commands
from ingest.log.sqlite import LogError, SQLiteLog
from ingest.replay import OrderMatters, commands_after_events

EVENT = {"eventType": "START", "eventTime": "2024-06-01T00:00:00Z",
         "run": {"runId": "3f1a2c1e-0000-4000-8000-000000000001"},
         "job": {"namespace": "ns1", "name": "j"}, "producer": "p"}


def test_events_are_listed_by_time_and_job_namespace(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    log.append([EVENT, EVENT | {"job": {"namespace": "ns2", "name": "j"}}])
    window = (0.0, 4e9, False, 10, 0)
    assert log.between(*window, "ns1")[1] == 1 and log.between(*window, "ns2")[1] == 1
    assert log.between(*window, "nowhere") == ([], 0)
    assert log.between(*window)[1] == 2
    plan = log._conn().execute(
        "EXPLAIN QUERY PLAN SELECT count(*) FROM events WHERE event_time >= 0 "
        "AND event_time < 1 AND job_namespace = 'x'").fetchall()
    assert "events_namespace_time" in str(plan)  # not a scan of every body


def test_a_log_an_earlier_version_wrote_gains_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "events.db"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                    "received REAL NOT NULL, body TEXT NOT NULL)")
        old.execute("INSERT INTO events (received, body) VALUES (1, ?)",
                    ('{"eventTime": "2024-06-01T00:00:00Z", "job": {"namespace": "ns1"}, '
                     '"run": {"runId": "3f1a2c1e-0000-4000-8000-000000000001"}}',))
    log = SQLiteLog(path)
    assert log.between(0.0, 4e9, False, 10, 0, "ns1")[1] == 1
    assert [e.kind for e in log.read(0, 10)] == ["event"]


def test_marquezs_windows_hold_run_events_only_in_new_and_earlier_logs(tmp_path: Path) -> None:
    """Marquez lists and counts run events only: a JobEvent or a DatasetEvent is in the log, not
    in its windows, whether it came now or was logged by an earlier version (with a time)."""
    job_event = {"eventTime": "2024-06-01T00:00:00Z", "job": {"namespace": "ns1", "name": "j"},
                 "producer": "p", "eventType": "COMPLETE"}
    dataset_event = {"eventTime": "2024-06-01T00:00:00Z", "producer": "p",
                     "dataset": {"namespace": "ns1", "name": "d"}}
    log = SQLiteLog(tmp_path / "events.db")
    log.append([EVENT, job_event, dataset_event])
    assert log.between(0.0, 4e9, False, 10, 0) == ([EVENT], 1)
    assert log.types_between(0.0, 4e9) == {"START": 1}
    assert log.count() == 3
    with sqlite3.connect(tmp_path / "events.db") as earlier:  # as an earlier version left it
        earlier.execute("UPDATE events SET event_time = 1717200000 WHERE seq = 2")
        earlier.execute("PRAGMA user_version = 0")
    log.close()
    assert SQLiteLog(tmp_path / "events.db").between(0.0, 4e9, False, 10, 0)[1] == 1


def test_the_position_moves_only_from_where_it_stood(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    assert log.advance("neo4j", 0, 5) and log.position("neo4j") == 5
    assert not log.advance("neo4j", 3, 9) and log.position("neo4j") == 5
    log.commit("neo4j", 12)
    assert not log.advance("neo4j", 5, 8) and log.position("neo4j") == 12


def test_bulk_loads_are_recorded_and_forgotten(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    log.record_bulk_load("/lake/2024", 120)
    [load] = log.bulk_loads()
    assert (load.source, load.events) == ("/lake/2024", 120)
    log.forget_bulk_loads()
    assert log.bulk_loads() == []


def test_one_consumer_per_log(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    # flock locks are per open file: a second claim, even in this process, is refused
    with log.claim("neo4j"), pytest.raises(LogError, match="one worker per log"), \
            log.claim("neo4j"):
        pass
    with log.claim("neo4j"):
        pass


def test_opening_the_log_again_in_a_process_keeps_its_connections_locks(tmp_path: Path) -> None:
    """A second SQLiteLog on one file, in one process, must not drop the first connection's
    POSIX locks (closing any descriptor of the file does): another process could then change
    the journal or delete the WAL under the live connection, which corrupts the log."""
    import subprocess
    import sys

    path = tmp_path / "events.db"
    first = SQLiteLog(path)
    first.append([EVENT])
    assert first.last_seq() == 1
    SQLiteLog(path)  # e.g. the CLI's and a helper's handle in one process
    probe = subprocess.run([sys.executable, "-c", (
        "import sqlite3, sys\n"
        f"c = sqlite3.connect({str(path)!r}, timeout=0.1, isolation_level=None)\n"
        "try:\n"
        "    print(c.execute('PRAGMA journal_mode=DELETE').fetchone()[0])\n"
        "except sqlite3.OperationalError as e:\n"
        "    print(e)\n")], capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "database is locked"


def test_commands_are_entries_in_order_and_not_events(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    log.append([EVENT])
    tag = commands.command("put_tag", {"tag": "PII", "description": "token=abc123secret"}).body()
    seq = log.append_command(tag)
    log.append([EVENT | {"eventType": "COMPLETE"}])
    entries = log.read(0, 10)
    assert [(e.seq, e.kind) for e in entries] == [(1, "event"), (seq, "command"), (3, "event")]
    assert entries[1].event == tag and "abc123secret" not in str(tag)
    assert log.between(0.0, 4e9, False, 10, 0)[1] == 2  # Marquez's listing: events only
    assert log.types_between(0.0, 4e9) == {"START": 1, "COMPLETE": 1}


def test_a_bulk_replay_takes_commands_only_after_every_event(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    log.append([EVENT])
    delete = commands.command("soft_delete", {"kind": "job", "namespace": "ns1", "name": "j"}).body()
    log.append_command(delete)
    assert [e.event for e in commands_after_events(log)] == [delete]
    log.append([EVENT | {"eventType": "COMPLETE"}])
    with pytest.raises(OrderMatters, match="seq 2"):
        commands_after_events(log)


def test_only_known_commands_are_made_or_applied() -> None:
    with pytest.raises(commands.UnknownCommand):
        commands.command("drop_everything", {})
    assert not commands.is_command({"command": "put_tag", "params": [], "at": "x"})


def test_a_command_reads_back_from_its_body_as_it_was_made() -> None:
    made = commands.command("tag_add", {"kind": "dataset", "namespace": "ns", "name": "t",
                                        "field": None, "tag": "PII", "by": "api"})
    assert commands.Command.of(made.body()) == made
    with pytest.raises(commands.UnknownCommand, match="drop_everything"):
        commands.Command.of({"command": "drop_everything", "params": {}, "at": made.at})
    with pytest.raises(commands.UnknownCommand):
        commands.Command.of({"eventType": "START"})

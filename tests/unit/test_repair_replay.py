"""The rerun plan's replay of runs in time (impact.repair.replay), on hand-made runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from impact.repair.replay import Access, RunFacts, replay

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def _at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _run(run_id: str, job: str, start: int, end: int, reads: list[str], writes: list[str],
         state: str = "COMPLETE", versions: dict[str, str] | None = None) -> RunFacts:
    v = versions or {}
    return RunFacts(run_id, job, state, _at(start), _at(end),
                    tuple(Access("ns", d, v.get(d)) for d in reads),
                    tuple(Access("ns", d, v.get(d)) for d in writes))


def test_a_run_that_only_completed_reads_before_it_writes() -> None:
    """A producer that sends only COMPLETE: the run starts and ends at once; it reads, then
    writes, so what it wrote from bad data is bad for the next run."""
    origin = _run("o", "a", 0, 1, [], ["x"])
    runs = {"b": _run("b", "b", 5, 5, ["x"], ["y"]), "c": _run("c", "c", 9, 9, ["y"], ["z"])}
    done = replay(runs, [origin], {}, {})
    assert set(done.bad_reads) == {"b", "c"} and set(done.bad_since) == {"ns:x", "ns:y", "ns:z"}


def test_a_failed_run_that_read_bad_data_leaves_its_outputs_stale() -> None:
    origin = _run("o", "a", 0, 1, [], ["x"])
    runs = {"b": _run("b", "b", 2, 3, ["x"], [], state="FAIL"),
            "c": _run("c", "c", 4, 5, ["y"], ["z"])}
    done = replay(runs, [origin], {}, {"b": [Access("ns", "y", None)]})
    assert set(done.bad_reads) == {"b", "c"} and done.bad_since["ns:y"] == _at(3)


def test_a_clean_write_ends_bad_data_but_a_bad_version_stays_bad() -> None:
    origin = _run("o", "a", 0, 1, [], ["x"], versions={"x": "v2"})
    runs = {"fix": _run("fix", "a", 2, 3, [], ["x"], versions={"x": "v3"}),
            "late": _run("late", "b", 4, 5, ["x"], ["y"], versions={"x": "v3"}),
            "pinned": _run("pinned", "c", 6, 7, ["x"], ["w"], versions={"x": "v2"})}
    done = replay(runs, [origin], {}, {})
    assert set(done.bad_reads) == {"pinned"}


def test_a_read_before_the_bad_write_is_clean() -> None:
    origin = _run("o", "a", 0, 10, [], ["x"])
    runs = {"early": _run("early", "b", 5, 6, ["x"], ["y"])}
    assert not replay(runs, [origin], {}, {}).bad_reads

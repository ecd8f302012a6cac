"""The benches' own logic that a wrong number would hide behind."""

import argparse

import pytest

from bench.generate import JOB_NS, NS, events, spec_complete, tables
from bench.peer import _depths, _renamed


def test_renamed_events_are_new_runs_of_new_jobs_on_new_datasets() -> None:
    # bench.peer's arrays row posts renamed copies and counts them queryable once their runs have
    # ended: copies that kept the runs' ids found the originals' runs already ended
    evs = [spec_complete(e) for e in events(tables(30, seed=3), seed=3, starts=True)]
    copies = _renamed(evs, "arrays")

    ids = {e["run"]["runId"] for e in evs}
    new_ids = {e["run"]["runId"] for e in copies}
    assert len(new_ids) == len(ids) and not new_ids & ids
    # a START and its COMPLETE still share one run, and a child still names its (renamed) parent
    pairs = {(a["run"]["runId"], b["run"]["runId"]) for a, b in zip(evs, copies, strict=True)}
    assert len(pairs) == len(ids)
    parents = {a["run"]["facets"]["parent"]["run"]["runId"]: b["run"]["facets"]["parent"]["run"]["runId"]
               for a, b in zip(evs, copies, strict=True)}
    assert all(old != new for old, new in parents.items())
    assert _renamed(evs, "arrays") == copies  # the same copies every time
    assert {e["job"]["namespace"] for e in copies} == {f"{JOB_NS}-arrays"}
    assert all(o["namespace"] == "warehouse://arrays:5432" for e in copies for o in e["outputs"])
    assert not any(NS in str(e) for e in copies)


def test_depths_are_read_from_a_comma_separated_list() -> None:
    assert _depths("10") == (10,)
    assert _depths("2, 5,10,") == (2, 5, 10)
    for bad in ("", "0,2", "x", "2;5"):
        with pytest.raises(argparse.ArgumentTypeError):
            _depths(bad)

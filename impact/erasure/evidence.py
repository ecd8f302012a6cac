"""Evidence of an erasure: for each place of a request's plan, whether it is done, what it waits
for, and whether it is overdue (docs/graph-model.md, "Erasure").

A place is **done** at the end of the first completed run that wrote it after the request was
opened and after every place before it (``after``) was done: a rebuilt table read its sources
only once they were clean, and a table deleted by key is reported cleaned by a run of its
producer (or a deletion job that reports the table as its output). A model version is retrained
when a completed run wrote the model after every place was done. A request is **overdue** when a
place is still pending past its deadline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import native_time


@dataclass(frozen=True)
class PlaceStatus:
    step: int
    dataset: str
    action: str  # of the plan: delete by key, unverified, rebuild, retrain (a model)
    state: str  # done, pending
    done_at: datetime | None
    run_id: str | None  # the run that did it
    job: str | None
    waits_for: tuple[str, ...]  # the places before it not done yet, or what it needs
    overdue: bool


@dataclass(frozen=True)
class ErasureStatus:
    ref: str  # the salted hash of the subject's reference
    opened_at: datetime
    deadline: datetime
    keys: tuple[str, ...]
    places: tuple[PlaceStatus, ...]
    checked_at: datetime

    @property
    def state(self) -> str:
        """done, overdue or open."""
        if all(p.state == "done" for p in self.places):
            return "done"
        return "overdue" if self.checked_at > self.deadline else "open"


def erasure_status(graph: Graph, ref: str, now: datetime | None = None) -> ErasureStatus:
    """The status of the request recorded under ``ref`` (the salted hash), as of ``now``."""
    rows = graph.read("erasure/request", ref=ref)
    if not rows:
        raise NotFound("erasure request", "with that subject reference")
    r = rows[0]
    opened, deadline = native_time(r["openedAt"]), native_time(r["deadline"])
    assert opened is not None and deadline is not None
    now = (now or datetime.now(UTC)).astimezone(UTC)
    places: list[dict[str, Any]] = json.loads(r["places"])
    models: list[dict[str, Any]] = json.loads(r["models"])
    wanted = {p["dataset"] for p in places} | {f"{m['namespace']}:{m['name']}" for m in models}
    writes = {f"{w['namespace']}:{w['name']}": w["writes"] for w in graph.read(
        "erasure/evidence", since=opened.astimezone(UTC), datasets=[
            {"namespace": ns, "name": name} for ns, name in
            (_split(d, places, models) for d in sorted(wanted))])}
    done: dict[str, datetime] = {}
    found = []
    for p in sorted(places, key=lambda p: p["step"]):
        before = [a for a in p["after"] if a in {q["dataset"] for q in places}]
        waiting = tuple(a for a in before if a not in done)
        ready = max([opened, *(done[a] for a in before if a in done)])
        run = None if waiting else _first_after(writes.get(p["dataset"], []), ready)
        if run is not None:
            done[p["dataset"]] = run["end"]
        found.append(PlaceStatus(
            p["step"], p["dataset"], p["action"], "done" if run else "pending",
            run["end"] if run else None, run["runId"] if run else None,
            run["job"] if run else None,
            waiting or (() if run else (_needs(p),)), not run and now > deadline))
    every = max(done.values(), default=opened) if len(done) == len(places) else None
    for i, m in enumerate(models, len(places) + 1):
        key = f"{m['namespace']}:{m['name']}"
        run = _first_after(writes.get(key, []), every) if every else None
        found.append(PlaceStatus(
            i, f"{key} version {m['version']}", "retrain", "done" if run else "pending",
            run["end"] if run else None, run["runId"] if run else None,
            run["job"] if run else None,
            () if run else ("every place cleaned, then a new version trained",),
            not run and now > deadline))
    return ErasureStatus(ref, opened, deadline, tuple(r["keys"]), tuple(found), now)


def _split(dataset: str, places: list[dict[str, Any]], models: list[dict[str, Any]]
           ) -> tuple[str, str]:
    """A place's namespace and name, as the plan recorded them."""
    for p in places:
        if p["dataset"] == dataset:
            return p["namespace"], p["name"]
    for m in models:
        if f"{m['namespace']}:{m['name']}" == dataset:
            return m["namespace"], m["name"]
    raise KeyError(dataset)


def _first_after(writes: list[dict[str, Any]], t: datetime) -> dict[str, Any] | None:
    for w in writes:
        end = native_time(w["end"])
        if end is not None and end > t:
            return {**w, "end": end}
    return None


def _needs(place: dict[str, Any]) -> str:
    if place["action"] == "delete by key":
        return "the subject's rows deleted, reported by a completed run that writes it"
    if place["action"] == "rebuild":
        return "a completed run of " + (", ".join(place["producers"]) or "its producer")
    return "a human to check it, then a completed run that writes it"


def request_states(graph: Graph, now: datetime | None = None, most: int = 1000) -> dict[str, int]:
    """How many requests are open, overdue and done (``/metrics``), judging each one's evidence."""
    found = {"open": 0, "overdue": 0, "done": 0}
    for r in graph.read("erasure/requests", max=most):
        found[erasure_status(graph, r["ref"], now).state] += 1
    return found

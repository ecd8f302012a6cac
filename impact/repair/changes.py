"""What changed: between a job's (or a dataset's writers') last good run and now, or in a window,
everything upstream that changed, nearest first, each with its evidence and the runs that stated
it (docs/graph-model.md, "What changed").

The subject's **baseline** is its latest completed run that started before its latest run (for
a failing job, its last good run; for a healthy one, the run before the latest), or the run or
time given as ``since``. Upstream of it (over the lineage current then), for each dataset: columns
added, dropped or retyped in its written schema; for each job that writes one: the inputs,
outputs and column lineage its latest run in the window states that its baseline (its last
completed run by the window's start) did not, and the reverse; its job facets (SQL, source
code, job type) and run facets (execution parameters) that differ; its failed runs; datasets
late by their cadence and datasets whose assertions fail.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import clamp_depth, native_time
from impact.health.freshness import assess, human

KINDS = ("failed run", "schema", "lineage", "job facet", "run facet", "assertions", "late")
"""The kinds of change, in the order they rank at the same distance."""

RUN_INSTANCE_FACETS = frozenset({
    "parent", "parentRun", "nominalTime", "errorMessage", "spark.exception", "externalQuery",
    "spark.logicalPlan", "spark_unknown"})
"""Run facets that describe one run, not how the job runs: never compared."""

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}|$)")
# the last key of a path that names one run's instance: an id (applicationId, jobId, run_id) or a
# time (startTime, created_at, timestamp)
_INSTANCE_KEY = re.compile(r"(^|[._\]])(id|ID)$|[a-z](Id|ID|_id)$|(Time|_time|At|_at|Date|_date|timestamp)$")
_MAX_RUNS = 200  # a subject's runs read to find its baseline
_DIFF_LINES = 12  # lines of a long value's diff kept as evidence


@dataclass(frozen=True)
class Change:
    """One change: what, where (the dataset or job it is on, and how far upstream), when, and
    the runs that stated it."""

    kind: str  # one of KINDS
    distance: int  # 0: the subject (a dataset, or a job and its outputs); 1: what it reads ...
    on: str  # the dataset or job it is on: 'namespace:name'
    what: str  # one line
    time: datetime | None
    runs: tuple[str, ...]
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Changes:
    subject: str  # "job NS:NAME" or "dataset NS:NAME"
    since: datetime | None  # the window's start (exclusive); None: from the beginning
    until: datetime | None  # its end; None: now
    baseline: str | None  # the run compared with: "RUN_ID (STATE, started T)"
    latest: str | None  # the subject's latest run in the window, the same way
    changes: tuple[Change, ...]
    examined: int  # datasets and jobs looked at


def changes(graph: Graph, kind: str, namespace: str, name: str,
            since: datetime | str | None = None, until: datetime | None = None,
            depth: int | None = None) -> Changes:
    """What changed upstream of the job or dataset ``namespace:name`` (``kind``: 'job' or
    'dataset') since ``since`` (a run id or a time; default: the subject's baseline) until
    ``until`` (default: now)."""
    if kind not in ("job", "dataset"):
        raise ValueError(f"kind must be 'job' or 'dataset', not {kind!r}")
    until = until.astimezone(UTC) if until else None
    [subject] = graph.read("repair/changes_subject", kind=kind, namespace=namespace, name=name,
                           max=_MAX_RUNS)
    if not subject["found"]:
        raise NotFound(kind, f"{namespace}:{name}", name)
    runs = [r for r in subject["runs"] if until is None or _at(r["start"]) <= until]
    start, baseline = _window(graph, runs, since)
    latest = next((r for r in runs if start is None or _at(r["start"]) > start), None)
    if kind == "dataset":
        starts = [{"namespace": namespace, "name": name, "distance": 0, "walk": True}]
    else:
        starts = ([{**o, "distance": 0, "walk": False} for o in subject["outputs"]]
                  + [{**i, "distance": 1, "walk": True} for i in subject["inputs"]])
    scope = graph.read("repair/changes_scope", starts=starts, since=start, until=until,
                       depth=clamp_depth(depth))
    distance = {s: 0 for s in subject["jobs"]}
    for d in scope:
        for w in d["writers"]:
            distance.setdefault(w, d["distance"])
            distance[w] = min(distance[w], d["distance"])
    jobs = graph.read("repair/changes_jobs", since=start, until=until, jobs=[
        {"namespace": j.split(":", 1)[0], "name": j.split(":", 1)[1]} for j in sorted(distance)]
        ) if distance else []
    # late by the cadence as of the subject's latest run (or the window's end): what it read
    reference = until or (_at(latest["start"]) if latest else None) or datetime.now(UTC)
    found: list[Change] = []
    for d in scope:
        found += _schema(d, start, until)
        found += _health(d, start, until, reference)
    for j in jobs:
        found += _job(j, distance[j["job"]])
    found.sort(key=lambda c: (c.distance, KINDS.index(c.kind), -_epoch(c.time), c.on, c.what))
    return Changes(f"{kind} {namespace}:{name}", start, until, _run_text(baseline),
                   _run_text(latest), tuple(found), len(scope) + len(jobs))


def _window(graph: Graph, runs: list[dict[str, Any]], since: datetime | str | None
            ) -> tuple[datetime | None, dict[str, Any] | None]:
    """The window's start and the run it compares with."""
    if isinstance(since, datetime):
        start = since.astimezone(UTC)
        return start, next((r for r in runs if r["state"] == "COMPLETE"
                            and _at(r["start"]) <= start), None)
    if isinstance(since, str):
        rows = graph.read("lookup/run", runId=since)
        if not rows:
            raise NotFound("run", since)
        p = rows[0]["props"]
        raw = p.get("startTime") or p.get("runningTime") or p.get("stateTime")
        began = native_time(raw)
        return (began.astimezone(UTC) if began else None), {
            "runId": p["runId"], "state": p.get("state"), "start": raw}
    # the latest completed run that started before the latest run
    baseline = next((r for r in runs[1:] if r["state"] == "COMPLETE"), None)
    return (native_time(baseline["start"]) if baseline else None), baseline


def _run_text(run: dict[str, Any] | None) -> str | None:
    if run is None:
        return None
    started = native_time(run["start"])
    return f"{run['runId']} ({run['state']}, started {started:%Y-%m-%d %H:%M:%S})" if started \
        else f"{run['runId']} ({run['state']})"


def _at(value: Any) -> datetime:
    """A time the queries always return (a run's start, a write's times)."""
    return native_time(value) or datetime.min.replace(tzinfo=UTC)


def _epoch(t: datetime | None) -> float:
    return t.timestamp() if t is not None else 0.0


def _inside(t: datetime | None, start: datetime | None, until: datetime | None) -> bool:
    return t is not None and (start is None or t > start) and (until is None or t <= until)


# --- schema -------------------------------------------------------------------------------


def _schema(d: dict[str, Any], start: datetime | None, until: datetime | None) -> list[Change]:
    """Columns added, dropped and retyped in the dataset's written schema within the window."""
    key = f"{d['namespace']}:{d['name']}"
    writes = sorted(d["writes"], key=lambda w: _at(w["firstSeen"]))
    born = native_time(d["born"])
    out: list[Change] = []
    for c in sorted(d["columns"], key=lambda c: c["name"]):
        first, last = native_time(c["firstWritten"]), native_time(c["lastWritten"])
        if born is not None and first is not None and first > born and _inside(first, start, until):
            run = _writer_at(writes, first)
            out.append(_column_change(d, key, f"column {c['name']} added ({c['type'] or 'no type'})",
                                      first, run, {"column": c["name"], "change": "added",
                                                   "type": c["type"]}))
        if not c["current"] and last is not None:
            after = next((w for w in writes if _after(w, last)), None)
            when = native_time(after["lastSeen"]) if after else None
            if after is not None and _inside(when, start, until):
                out.append(_column_change(
                    d, key, f"column {c['name']} dropped (last written {last:%Y-%m-%d %H:%M})",
                    when, after, {"column": c["name"], "change": "dropped",
                                  "lastWritten": last, "type": c["type"]}))
        typed = [(datetime.fromisoformat(e[:27]), e[28:]) for e in c["types"]]
        for (_, was), (at, now) in zip(typed, typed[1:], strict=False):
            if _inside(at, start, until):
                out.append(_column_change(
                    d, key, f"column {c['name']} retyped {was} -> {now}", at, _writer_at(writes, at),
                    {"column": c["name"], "change": "retyped", "from": was, "to": now,
                     "current": c["type"]}))
    return out


def _after(write: dict[str, Any], t: datetime) -> bool:
    seen = native_time(write["lastSeen"])
    return seen is not None and seen > t


def _writer_at(writes: list[dict[str, Any]], t: datetime) -> dict[str, Any] | None:
    """The write whose events span ``t`` (the run whose event carried the schema), else the
    latest that began before it."""
    spanning = [w for w in writes if _at(w["firstSeen"]) <= t <= _at(w["lastSeen"])]
    if spanning:
        return spanning[-1]
    earlier = [w for w in writes if _at(w["firstSeen"]) <= t]
    return earlier[-1] if earlier else None


def _column_change(d: dict[str, Any], key: str, what: str, t: datetime | None,
                   run: dict[str, Any] | None, evidence: dict[str, Any]) -> Change:
    if run is not None:
        evidence = {**evidence, "job": run["job"], "state": run["state"]}
    return Change("schema", d["distance"], key, what, t, (run["runId"],) if run else (), evidence)


# --- late datasets and failing assertions ---------------------------------------------------


def _health(d: dict[str, Any], start: datetime | None, until: datetime | None,
            reference: datetime) -> list[Change]:
    key = f"{d['namespace']}:{d['name']}"
    out: list[Change] = []
    asserted = native_time(d["assertedAt"])
    if d["failedAssertions"] and _inside(asserted, start, until):
        out.append(Change("assertions", d["distance"], key,
                          "assertions failing: " + ", ".join(d["failedAssertions"]), asserted, (),
                          {"failed": list(d["failedAssertions"])}))
    successes = [t for t in (native_time(s) for s in d["successes"]) if t is not None]
    last, cadence, due, late = assess(successes, reference)
    if late and last is not None and due is not None and cadence is not None:
        out.append(Change("late", d["distance"], key,
                          f"late: last written {last:%Y-%m-%d %H:%M}, due {due:%Y-%m-%d %H:%M} "
                          f"by its cadence ({human(cadence)})", due, (),
                          {"lastSuccess": last, "cadence": str(cadence), "due": due}))
    return out


# --- what a job's runs state ----------------------------------------------------------------


def _job(j: dict[str, Any], distance: int) -> list[Change]:
    """A job's failed runs in the window, and what its latest run states that its baseline did
    not (and the reverse): inputs, outputs, column lineage, job facets, run facets."""
    key = j["job"]
    latest, base, prior = j["compared"]
    out: list[Change] = []
    failed = [r for r in j["window"] if r["state"] in ("FAIL", "ABORT")]
    if failed:
        r = failed[0]
        t = native_time(r["end"])
        error = f": {r['error'].splitlines()[0][:200]}" if r.get("error") else ""
        more = f" ({len(failed)} failed runs in the window)" if len(failed) > 1 else ""
        out.append(Change("failed run", distance, key,
                          f"run {r['runId']} {r['state'].lower()}ed at {t:%Y-%m-%d %H:%M}{error}{more}"
                          if t else f"run {r['runId']} {r['state']}{error}{more}",
                          t, tuple(f["runId"] for f in failed),
                          {"state": r["state"], "error": r.get("error")}))
    if latest is None:
        return out
    t = native_time(latest["start"])
    runs = (latest["runId"],)
    if base is None:
        out.append(Change("lineage", distance, key, "first run (no completed run before the window)",
                          t, runs, {"change": "new job"}))
        return out
    both = (latest["runId"], base["runId"])
    out += _sides(key, distance, t, runs, "input", latest["reads"], base["reads"])
    out += _sides(key, distance, t, runs, "output", latest["writes"], base["writes"])
    out += _column_lineage(key, distance, t, latest, base, j["edges"])
    out += _facets(key, distance, t, both, "job facet", "jobFacet.", latest, base, prior)
    out += _facets(key, distance, t, both, "run facet", "facet.", latest, base, prior,
                   skip=RUN_INSTANCE_FACETS)
    return out


def _sides(key: str, distance: int, t: datetime | None, runs: tuple[str, ...], side: str,
           now: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[Change]:
    """New and lost inputs (outputs): a run that reported none says nothing of them."""
    if not now:
        return []
    names_now = {f"{d['namespace']}:{d['name']}" for d in now}
    names_before = {f"{d['namespace']}:{d['name']}" for d in before}
    out = [Change("lineage", distance, key, f"new {side} {n}", t, runs,
                  {"change": f"new {side}", "dataset": n}) for n in sorted(names_now - names_before)]
    out += [Change("lineage", distance, key, f"lost {side} {n} (its baseline run had it)", t, runs,
                   {"change": f"lost {side}", "dataset": n})
            for n in sorted(names_before - names_now)]
    return out


def _column_lineage(key: str, distance: int, t: datetime | None, latest: dict[str, Any],
                    base: dict[str, Any], edges: list[dict[str, Any]]) -> list[Change]:
    """Per output column: the sources the latest run's column lineage states that the
    baseline's does not, and the reverse (a run states an edge when they share a lineage)."""
    stated_now = {f"{w['namespace']}:{w['name']}": set(w["lineage"]) for w in latest["writes"]}
    stated_before = {f"{w['namespace']}:{w['name']}": set(w["lineage"]) for w in base["writes"]}
    per_column: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for e in edges:
        lineages = set(e["lineages"])
        now = bool(lineages & stated_now.get(e["output"], set()))
        before = bool(lineages & stated_before.get(e["output"], set()))
        if now == before or not stated_before.get(e["output"]):
            continue
        added, gone = per_column.setdefault((e["output"], e["column"]), (set(), set()))
        (added if now else gone).add(_source(e))
    out = []
    for (output, column), (added, gone) in sorted(per_column.items()):
        parts = ([f"now from {', '.join(sorted(added))}"] if added else []) + (
            [f"no longer from {', '.join(sorted(gone))}"] if gone else [])
        out.append(Change("lineage", distance, key,
                          f"column {output.split(':', 1)[1]}.{column}: {'; '.join(parts)}", t,
                          (latest["runId"], base["runId"]),
                          {"change": "column lineage", "output": output, "column": column,
                           "added": sorted(added), "removed": sorted(gone)}))
    return out


def _source(e: dict[str, Any]) -> str:
    how = f"{e['type']} {e['subtype']}" + (", masked" if e["masking"] else "")
    return f"{e['inNamespace']}:{e['inDataset']}.{e['inColumn']} ({how})"


def _facets(key: str, distance: int, t: datetime | None, runs: tuple[str, ...], kind: str,
            prefix: str, latest: dict[str, Any], base: dict[str, Any], prior: dict[str, Any] | None,
            skip: frozenset[str] = frozenset()) -> list[Change]:
    """Facets whose values differ between the baseline and the latest run, value by value;
    a value that also differed between the baseline and the run before it varies by run (a run
    id, a time) and is no change; with no run before the baseline, values that look like ids or
    times are taken to vary."""
    now, before = _facets_of(latest, prefix, skip), _facets_of(base, prefix, skip)
    if not now or not before:  # a run recorded without them says nothing of them
        return []
    earlier = _facets_of(prior, prefix, skip) if prior is not None else None
    out = []
    for name in sorted(set(now) | set(before)):
        a, b = before.get(name), now.get(name)
        if a == b:
            continue
        old, new = _leaves(a), _leaves(b)
        varying = _leaves(earlier.get(name)) if earlier is not None else None
        diffs = []
        for path in sorted(set(old) | set(new)):
            x, y = old.get(path), new.get(path)
            if x == y:
                continue
            if varying is not None and varying.get(path) != x:
                continue  # it differed between the two runs before too
            if varying is None and _instance(path, x, y):
                continue
            diffs.append(_diff(path, x, y))
        if not diffs:
            continue
        paths = ", ".join(d["path"] or name for d in diffs[:4]) + (" ..." if len(diffs) > 4 else "")
        what = (f"{kind} {name} added" if a is None else f"{kind} {name} removed" if b is None
                else f"{kind} {name} changed: {paths}")
        out.append(Change(kind, distance, key, what, t, runs, {"facet": name, "changes": diffs}))
    return out


def _facets_of(run: dict[str, Any] | None, prefix: str, skip: frozenset[str]) -> dict[str, Any]:
    if run is None:
        return {}
    return {k[len(prefix):]: v for k, v in run["facets"]
            if k.startswith(prefix) and v is not None and k[len(prefix):] not in skip}


def _leaves(text: str | None) -> dict[str, Any]:
    """A facet's values by path ('query', 'engine.version', 'args[0]'), the facet's own
    ``_producer``/``_schemaURL`` left out."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"": text}
    found: dict[str, Any] = {}

    def walk(v: Any, path: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if not (path == "" and k.startswith("_") and k != "_truncated"):
                    walk(x, f"{path}.{k}" if path else k)
        elif isinstance(v, list) and v and all(isinstance(x, (dict, list)) for x in v):
            for i, x in enumerate(v):
                walk(x, f"{path}[{i}]")
        else:
            found[path] = v
    walk(value, "")
    return found


def _instance(path: str, before: Any, after: Any) -> bool:
    """A value that names one run's instance: under a key that names an id or a time, or a UUID
    or a time on both sides."""
    if _INSTANCE_KEY.search(path):
        return True
    return all(isinstance(v, str) and bool(_UUID.match(v) or _TIME.match(v)) for v in (before, after))


def _diff(path: str, before: Any, after: Any) -> dict[str, Any]:
    """One value's change; a long text also as the lines of a unified diff."""
    d: dict[str, Any] = {"path": path, "before": _short(before), "after": _short(after)}
    if isinstance(before, str) and isinstance(after, str) and (
            "\n" in before or "\n" in after or max(len(before), len(after)) > 80):
        lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), "baseline",
                                          "latest", lineterm="", n=1))
        d["diff"] = lines[:_DIFF_LINES] + (["..."] if len(lines) > _DIFF_LINES else [])
    return d


def _short(v: Any) -> Any:
    if isinstance(v, str) and len(v) > 200:
        return v[:200] + "..."
    return v


def describe(c: Change) -> Iterable[str]:
    """A change's evidence as lines (for text and Markdown)."""
    for d in c.evidence.get("changes") or []:
        if d.get("diff"):
            yield from d["diff"]
        else:
            yield f"{d['path'] or c.evidence.get('facet')}: {d['before']!r} -> {d['after']!r}"

"""Pure transform: one validated OpenLineage event in, plain rows for the loader out.

No I/O here. Every row carries the event time (``time``, UTC) so the loader can keep first and
last seen, and decide which of two events is newer whatever order they arrive in.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

import orjson

from ingest.column_lineage import Compact, column_lineage
from ingest.explicit_lineage import explicit_lineage
from ingest.facets import capped_json, facet_props, field_tags, flatten, lift, live, owners, tags
from ingest.rows import COLUMN_EDGE_PARTS, KINDS, Rows
from ingest.times import parse_time
from ingest.validate import ValidEvent

# A run that reported FAIL or ABORT stays failed when a COMPLETE follows: the Spark listener sends
# FAIL (job end, with the exception) and then COMPLETE (SQL execution end) for one failed query.
STATE_RANK = {"OTHER": 0, "START": 1, "RUNNING": 2, "COMPLETE": 3, "FAIL": 4, "ABORT": 4}
_STACK_MAX = 8192


def stamp(t: datetime, digest: str) -> str:
    """Which of two values of one property is the latest: the event time (UTC, to the
    microsecond, so text order is time order), then the event's digest to break ties the same
    way whatever the arrival order."""
    return f"{t.astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ}|{digest[:16]}"


def transform(event: ValidEvent, facet_max_bytes: int = 16_384,
              received: float | None = None) -> Rows:
    """Rows for one event: nodes, edges and lifted properties. ``received``: when the event log
    took the event, if known; a dataset or job soft-deleted after it stays hidden (see
    cypher/ingest/datasets)."""
    rows = Rows()
    raw, t = event.raw, event.time
    event_stamp = stamp(t, event.digest)
    job_ref: tuple[str, str] | None = None
    if event.kind in ("RunEvent", "JobEvent"):
        job = raw["job"]
        job_ref = (job["namespace"], job["name"])
        rows.jobs.append(_job_row(job, t, facet_max_bytes,
                                  event.digest if event.kind == "JobEvent" else None))
    if event.kind == "RunEvent":
        assert event.run_id is not None and job_ref is not None
        rows.runs.append(_run_row(event, job_ref, facet_max_bytes))
        # the job's facets as this run saw them (SQL, source code, job type): what changed
        # between two runs of a job (docs/graph-model.md, "What changed")
        rows.runs[-1]["props"].update(
            {f"job{k[0].upper()}{k[1:]}": v for k, v in rows.jobs[-1]["props"].items()
             if k.startswith("facet.")})
        _parent(raw["run"].get("facets"), event.run_id, job_ref, t, rows)
    if event.kind == "DatasetEvent":
        ds = raw["dataset"]
        _dataset(ds, t, facet_max_bytes, rows, digest=event.digest, written=True)
        # a declaration of the dataset: one of its versions (docs/marquez.md, "Versions"), with
        # the source, description and tags it declared
        rows.datasets[0]["declarations"] = [declaration(event_stamp, rows.datasets[0]["props"])]
    # the lineage facet, when present, is the event's whole lineage (docs/graph-model.md)
    explicit = explicit_lineage(raw, event.kind, job_ref, event.run_id, t, event_stamp, rows)
    if event.kind == "DatasetEvent" and not explicit:
        column_lineage(raw["dataset"], ("", ""), None, t, rows.column_edges, rows.dataset_edges)
    # a job's column lineage from columnLineage facets: kept whole on its version (lineages)
    compact: list[Compact] | None = [] if job_ref is not None and not explicit else None
    for side in ("inputs", "outputs"):
        for ds in raw.get(side) or []:
            version = _dataset(ds, t, facet_max_bytes, rows, written=side == "outputs")
            io = {"namespace": ds["namespace"], "name": ds["name"], "time": t}
            if event.run_id is not None:
                target = rows.reads if side == "inputs" else rows.writes
                target.append({**io, "runId": event.run_id, "version": version,
                               **_io_stats(ds, side)})
                if side == "outputs":
                    trained = trained_on(ds)
                    if trained is not None:
                        target[-1]["trainedOn"] = trained
            if job_ref is not None:
                target = rows.job_reads if side == "inputs" else rows.job_writes
                target.append({**io, "jobNamespace": job_ref[0], "jobName": job_ref[1]})
            if side == "outputs" and not explicit:
                column_lineage(ds, job_ref or ("", ""), event.run_id, t, rows.column_edges,
                               rows.dataset_edges, compact)
    if job_ref is not None:
        _named_inputs(rows, job_ref, event.run_id, t)
    # a job's declared lineage (JobEvent) is written edge by edge, never as a version: a new
    # declaration replaces the old (ingest/declarations)
    parts = compact or [(*edge_key(e), e["masking"], e["description"])
                        for e in rows.column_edges if e.get("declared") is None]
    if job_ref is not None and parts:
        # a lineage is a set of edges: the same facet with its fields in another order (the event
        # log stores events with sorted keys) is the same lineage, with the same digest
        parts.sort(key=_edge_order)
        digest = _digest(parts)
        rows.lineages.append({
            "jobNamespace": job_ref[0], "jobName": job_ref[1], "runId": event.run_id, "time": t,
            "digest": digest, "edges": tuple(p[:8] for p in parts),
            "compact": compact or None})
        _mark_stated(rows, digest, {(p[0], p[1]) for p in parts})
    # every row is stamped with its event: combine orders rows by it, and the loader keeps, per
    # property, the value of the latest stamp (docs/graph-model.md, "The latest value")
    for kind in KINDS:
        for row in getattr(rows, kind.name):
            row["evt"] = event_stamp
    if received is not None:
        for row in rows.datasets + rows.jobs:
            row["received"] = received
    return rows


def _mark_stated(rows: Rows, digest: str, outputs: set[tuple[str, str]]) -> None:
    """Which lineage each column edge belongs to (``lineages``) and which outputs the run stated
    column lineage for (``lineage`` on its write): the run's statement is the whole truth of
    those outputs' column lineage (docs/graph-model.md, "Current and retired lineage")."""
    for e in rows.column_edges:
        if e.get("declared") is None:
            e["lineages"] = [digest]
    for w in rows.writes:
        if (w["namespace"], w["name"]) in outputs:
            w["lineage"] = [digest]


def _named_inputs(rows: Rows, job: tuple[str, str], run_id: str | None, t: datetime) -> None:
    """An input named only inside column lineage or a lineage facet (dbt's sources) is read by
    the job too, and by the run (its lineage is the run's)."""
    inputs = {(r["namespace"], r["name"]) for r in rows.job_reads
              if (r["jobNamespace"], r["jobName"]) == job}
    for e in rows.dataset_edges:
        if (e["inNamespace"], e["inName"]) not in inputs:
            inputs.add((e["inNamespace"], e["inName"]))
            io = {"namespace": e["inNamespace"], "name": e["inName"], "time": t}
            rows.job_reads.append({**io, "jobNamespace": job[0], "jobName": job[1]})
            if run_id is not None:
                rows.reads.append({**io, "runId": run_id, "version": None, "rowCount": None,
                                   "bytes": None})


edge_key: Callable[[dict[str, Any]], tuple[str, ...]] = itemgetter(*COLUMN_EDGE_PARTS[:8])
"""What identifies a column edge of a job (the job aside)."""


def _edge_order(part: tuple[Any, ...]) -> tuple[Any, ...]:
    """A lineage's edges in a fixed order (a description may be None)."""
    return (*part[:9], "" if part[9] is None else str(part[9]))


def _digest(parts: list[Any]) -> str:
    """A digest of a list of plain tuples, the same in every process. Order counts: a schema's
    columns are in order, a lineage's edges are sorted first.

    Taken over their JSON (orjson: faster than ``repr``, which was a measured share of the
    worker's preparation: docs/benchmarks.md, "Measurements behind the code"); what JSON cannot
    hold goes through ``repr``, always the same way for the same parts. A store written before
    digests were taken over JSON holds digests of ``repr``: each schema and lineage is written in
    full once, then touched again."""
    try:
        text = orjson.dumps(parts)
    except orjson.JSONEncodeError:
        text = repr(parts).encode()
    return hashlib.blake2b(text, digest_size=12).hexdigest()


def _job_row(job: dict[str, Any], t: datetime, cap: int, digest: str | None) -> dict[str, Any]:
    facets = job.get("facets")
    props = facet_props(facets, cap)
    lift(facets, "documentation", props, lambda f: {"description": f["description"]},
         ("description",))
    lift(facets, "sql", props, lambda f: {"sql": f["query"]}, ("sql",))
    lift(facets, "jobType", props, lambda f: {
        "jobType": f.get("jobType"), "processingType": f.get("processingType"),
        "integration": f.get("integration")}, ("jobType", "processingType", "integration"))
    lift(facets, "ownership", props, lambda f: {"owners": owners(f)}, ("owners",))
    lift(facets, "tags", props, lambda f: {"tags": tags(f)}, ("tags",))
    return {"namespace": job["namespace"], "name": job["name"], "time": t, "props": props,
            "digests": [digest] if digest else []}


def _run_row(event: ValidEvent, job_ref: tuple[str, str], cap: int) -> dict[str, Any]:
    facets = event.raw["run"].get("facets")
    props = facet_props(facets, cap)
    lift(facets, "nominalTime", props, lambda f: {
        "nominalStartTime": _maybe_time(f.get("nominalStartTime")),
        "nominalEndTime": _maybe_time(f.get("nominalEndTime"))},
        ("nominalStartTime", "nominalEndTime"))
    lift(facets, "spark.exception", props, lambda f: {  # the Spark listener's error facet
        "errorMessage": (f.get("message") or (f.get("stackTrace") or "").split("\n", 1)[0]) or None,
        "errorLanguage": "java",
        "stackTrace": (f.get("stackTrace") or "")[:_STACK_MAX] or None},
        ("errorMessage", "errorLanguage", "stackTrace"))
    lift(facets, "errorMessage", props, lambda f: {
        "errorMessage": f["message"], "errorLanguage": f.get("programmingLanguage"),
        "stackTrace": (f.get("stackTrace") or "")[:_STACK_MAX] or None},
        ("errorMessage", "errorLanguage", "stackTrace"))
    lift(facets, "tags", props, lambda f: {"tags": tags(f)}, ("tags",))
    state = event.event_type or "OTHER"
    key = state.lower()
    return {
        "runId": event.run_id, "jobNamespace": job_ref[0], "jobName": job_ref[1],
        "state": state, "rank": STATE_RANK[state], "time": event.time,
        "stateTimes": {f"{key}Time": event.time},
        "stateTimesRaw": {f"{key}TimeOriginal": event.time_raw},
        "props": props, "digests": [event.digest],
    }  # fmt: skip


def _parent(facets: dict[str, Any] | None, run_id: str, job: tuple[str, str], t: datetime,
            rows: Rows) -> None:
    # Airflow's older integrations named the facet parentRun; when both are sent, parentRun is
    # read (as Marquez reads it)
    parent = live(facets, "parentRun") or live(facets, "parent")
    if parent is None:
        return
    namespace, name = parent["job"]["namespace"], parent["job"]["name"]
    if name == job[1] and "." in name:  # the older integration named the task as its own parent
        name = name.rsplit(".", 1)[0]
    root = parent.get("root") or {}
    rows.parents.append({
        "runId": run_id, "parentRunId": parent_run_id(namespace, parent["job"]["name"],
                                                      str(parent["run"]["runId"])),
        "parentJobNamespace": namespace, "parentJobName": name,
        "rootRunId": str((root.get("run") or {}).get("runId") or "").lower() or None,
        "time": t,
    })  # fmt: skip


def parent_run_id(namespace: str, job_name: str, run_id: str) -> str:
    """The id of a parent run: its UUID, or for a run id that is not one (Airflow's older
    integration sent the DAG run's own id, ``scheduled__2022-04-25T00:20:00+00:00``) the UUID
    named by the namespace, the DAG (the job name up to its last '.') and that id, as Marquez
    makes it (a name-based UUID in the URL namespace), so that both stores agree."""
    try:
        return str(uuid.UUID(run_id))
    except ValueError:
        dag = job_name.rsplit(".", 1)[0]
        return str(uuid.uuid3(uuid.NAMESPACE_URL, f"{namespace}.{dag}.{run_id}"))


DECLARED = ("dataSourceName", "description", "tags")  # what a declared version keeps of its own


def declaration(event_stamp: str, props: dict[str, Any]) -> str:
    """A DatasetEvent's entry among its dataset's ``declarations``: its stamp, then (after a
    unit separator) what it declared of the dataset's source, description and tags, as canonical
    JSON. The stamp first: the entries sort by time."""
    declared = {k: props[k] for k in DECLARED if props.get(k) is not None}
    if not declared:
        return event_stamp
    return event_stamp + "\u001f" + orjson.dumps(declared, option=orjson.OPT_SORT_KEYS).decode()


def _dataset(ds: dict[str, Any], t: datetime, cap: int, rows: Rows,
             digest: str | None = None, written: bool = True) -> str | None:
    """Append the dataset's node, columns, aliases and rename; return its version if given."""
    facets = ds.get("facets")
    props = facet_props(facets, cap)
    props.update({f"input{k[0].upper()}{k[1:]}": v for k, v in facet_props(
        ds.get("inputFacets"), cap).items() if v is not None})
    props.update({f"output{k[0].upper()}{k[1:]}": v for k, v in facet_props(
        ds.get("outputFacets"), cap).items() if v is not None})
    lift(facets, "documentation", props, lambda f: {"description": f["description"]},
         ("description",))
    lift(facets, "ownership", props, lambda f: {"owners": owners(f)}, ("owners",))
    lift(facets, "tags", props, lambda f: {"tags": tags(f), "fieldTags": field_tags(f)},
         ("tags", "fieldTags"))
    lift(facets, "dataSource", props, lambda f: {
        "dataSourceName": f.get("name"),
        "dataSourceUri": f.get("uri")},
        ("dataSourceName", "dataSourceUri"))
    lift(facets, "lifecycleStateChange", props,
         lambda f: {"lifecycleState": f["lifecycleStateChange"]}, ("lifecycleState",))
    for holder in (facets, ds.get("inputFacets")):
        lift(holder, "dataQualityAssertions", props, _assertions, ("assertions", "failedAssertions"))
    for holder, key in ((ds.get("outputFacets"), "outputStatistics"),
                        (ds.get("inputFacets"), "dataQualityMetrics")):
        lift(holder, key, props, lambda f: {"rowCount": f.get("rowCount"),
                                            "bytes": f.get("bytes", f.get("size"))},
             ("rowCount", "bytes"))
    for holder in (facets, ds.get("inputFacets")):
        lift(holder, "dataQualityMetrics", props, _column_metrics, ("columnMetrics", "metricsRowCount"))
    lift(facets, "datasetType", props, lambda f: {
        "datasetType": str(f.get("datasetType") or "").upper() or None,
        "datasetSubType": f.get("subType")}, ("datasetType", "datasetSubType"))
    version = (live(facets, "version") or {}).get("datasetVersion")
    if version is not None:
        props["version"] = str(version)
    ns, name = ds["namespace"], ds["name"]
    rows.datasets.append({"namespace": ns, "name": name, "time": t, "props": props,
                          "digests": [digest] if digest else []})
    schema = live(facets, "schema")
    flat = flatten((schema or {}).get("fields") or [])
    if written and flat:
        # written: the schema came from the dataset's producer (an output or a DatasetEvent), not
        # from a reader, whose schema may be pruned to the columns it read. Its columns stay on
        # its version (ingest.version_members.column_rows makes the rows of those written).
        rows.schemas.append({"namespace": ns, "dataset": name, "time": t, "digest": _digest(flat),
                             "columns": tuple(c[0] for c in flat), "flat": flat})
    elif not written:
        for col_name, col_type, description in flat:
            rows.columns.append({"namespace": ns, "dataset": name, "name": col_name,
                                 "type": col_type, "description": description, "time": t,
                                 "written": False})
    for alias in (live(facets, "symlinks") or {}).get("identifiers") or []:
        rows.symlinks.append({"namespace": ns, "name": name, "aliasNamespace": alias["namespace"],
                              "aliasName": alias["name"], "type": alias.get("type") or "",
                              "time": t})
    change = live(facets, "lifecycleStateChange") or {}
    previous = change.get("previousIdentifier")
    if str(change.get("lifecycleStateChange", "")).upper() == "RENAME" and previous:
        rows.renames.append({"namespace": ns, "name": name, "oldNamespace": previous["namespace"],
                             "oldName": previous["name"], "time": t})
    return None if version is None else str(version)


def trained_on(ds: dict[str, Any]) -> list[str] | None:
    """What a written model version was trained on (docs/graph-model.md, "Models"): the input
    columns its column lineage names, as ``namespace:dataset.column``, sorted; None when the output
    is not a model or states no column lineage (its training columns are unknown)."""
    facets = ds.get("facets")
    kind = (live(facets, "datasetType") or {}).get("datasetType")
    if not isinstance(kind, str) or kind.upper() != "MODEL":
        return None
    lineage = live(facets, "columnLineage")
    if lineage is None:
        return None
    found = {f"{i['namespace']}:{i['name']}.{i['field']}"
             for spec in (lineage.get("fields") or {}).values() if isinstance(spec, dict)
             for i in spec.get("inputFields") or []
             if isinstance(i, dict) and all(isinstance(i.get(k), str) for k in ("namespace", "name",
                                                                                 "field"))}
    return sorted(found)


def _io_stats(ds: dict[str, Any], side: str) -> dict[str, Any]:
    if side == "outputs":
        stats = live(ds.get("outputFacets"), "outputStatistics") or {}
        return {"rowCount": stats.get("rowCount"), "bytes": stats.get("size")}
    metrics = live(ds.get("inputFacets"), "dataQualityMetrics") or {}
    return {"rowCount": metrics.get("rowCount"), "bytes": metrics.get("bytes")}


def _column_metrics(facet: dict[str, Any]) -> dict[str, Any]:
    """A data-quality metrics facet's column metrics (nullCount, distinctCount ... per column), as
    JSON, with the row count they were measured on."""
    metrics = facet.get("columnMetrics")
    return {"columnMetrics": capped_json(metrics, 16_384) if metrics else None,
            "metricsRowCount": facet.get("rowCount")}


def _assertions(facet: dict[str, Any]) -> dict[str, Any]:
    items = facet.get("assertions") or []
    failed = [f"{a['assertion']}" + (f"({a['column']})" if a.get("column") else "")
              for a in items if not a.get("success")]
    return {"assertions": capped_json(items, 4096), "failedAssertions": failed}


def _maybe_time(value: Any) -> datetime | None:
    try:
        return parse_time(value)
    except ValueError:
        return None

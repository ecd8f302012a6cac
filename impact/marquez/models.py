"""Marquez's models, built from our graph's rows: pure functions, no database.

Each function turns the row of one named query (``cypher/marquez``) into the JSON object Marquez's
API answers (its Java resources and ``marquez.service.models`` are the reference): field names,
enums (``COMPLETED``, not ``COMPLETE``), ``null`` where Marquez has nothing, times as ISO-8601 UTC
with a ``Z``. Versions are derived, since we keep no version table: docs/marquez.md says how.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, NamedTuple

# OpenLineage's eventType as the run state Marquez reports (Marquez's OpenLineageDao.getRunState).
RUN_STATES = {"START": "RUNNING", "RUNNING": "RUNNING", "COMPLETE": "COMPLETED",
              "FAIL": "FAILED", "ABORT": "ABORTED", "OTHER": "RUNNING"}
# Marquez's state as the states cypher/marquez/jobs.cypher filters on (NEW: see run_state)
STATES_OF = {"NEW": ["NEW"], "RUNNING": ["START", "RUNNING", "OTHER"], "COMPLETED": ["COMPLETE"],
             "FAILED": ["FAIL"], "ABORTED": ["ABORT"]}
_PRODUCER = "https://github.com/lineage-graph/lineage-graph"
ARGS_FACET = "marquezRunArgs"  # a run's args from Marquez's legacy run write (ingest.marquez_events)
JOB_FACET = "marquezJob"  # a legacy job PUT's outputs waiting for a run (ingest.marquez_events)
STREAM_FACET = "marquezStream"  # a legacy stream's schema location (ingest.marquez_events)
# the producer of the events Marquez's legacy writes become (ingest.marquez_events.PRODUCER)
LEGACY_PRODUCER = "https://github.com/lineage-graph/lineage-graph/blob/main/ingest/marquez_writes.py"
# The fields of a lineage node's ``data``: Marquez's DatasetData and JobData (their JSON-ignored
# uuids left out); marquez-java's DatasetNodeData and JobNodeData refuse a null where these
# models say non-null.
DATASET_DATA = ("id", "type", "name", "physicalName", "createdAt", "updatedAt", "namespace",
                "sourceName", "fields", "tags", "lastModifiedAt", "description",
                "lastLifecycleState")
JOB_DATA = ("id", "type", "name", "simpleName", "parentJobName", "parentJobUuid", "createdAt",
            "updatedAt", "namespace", "inputs", "outputs", "location", "description", "latestRun")


def iso(value: Any) -> str | None:
    """A Neo4j or Python datetime as Marquez writes it (UTC, ``Z``); None stays None."""
    if value is None:
        return None
    text: str = native(value).isoformat()  # type: ignore[union-attr]
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def name_uuid(*parts: str) -> str:
    """A version id: the name-based UUID (version 3, as Java's UUID.nameUUIDFromBytes) of parts."""
    digest = hashlib.md5("\x1f".join(parts).encode("utf-8"), usedforsecurity=False).digest()
    return str(uuid.UUID(bytes=digest, version=3))


def dataset_version(namespace: str, name: str, run_id: str) -> str:
    """The version a run wrote of a dataset: one version per write."""
    return name_uuid("dataset", namespace, name, run_id)


def declared_version(namespace: str, name: str, stamp: str) -> str:
    """The version a declaration (a DatasetEvent, by its stamp) made of a dataset."""
    return name_uuid("dataset", namespace, name, "declared", stamp)


def first_version(namespace: str, name: str) -> str:
    """The version of a dataset named before it was written or declared (its first sighting)."""
    return name_uuid("dataset", namespace, name, "first")


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def native(value: Any) -> datetime | None:
    """A Neo4j datetime as Python's; None stays None."""
    found: datetime | None = value.to_native() if hasattr(value, "to_native") else value
    return found


class Declaration(NamedTuple):
    """A DatasetEvent that named a dataset (ingest.transform.declaration): its stamp
    (``time|digest``), its time, and what it declared of the dataset's source, description and
    tags."""

    stamp: str
    time: datetime
    declared: dict[str, Any]


def declarations(props: dict[str, Any]) -> list[Declaration]:
    found = []
    for entry in props.get("declarations") or []:
        event_stamp, _, declared = entry.partition("\u001f")
        at = datetime.strptime(event_stamp.split("|", 1)[0], "%Y-%m-%dT%H:%M:%S.%fZ")
        found.append(Declaration(event_stamp, at.replace(tzinfo=UTC),
                                 json.loads(declared) if declared else {}))
    return found


def current_version(props: dict[str, Any], written: dict[str, Any] | None) -> str:
    """A dataset's newest version: its latest write's or declaration's, else its first
    sighting's (docs/marquez.md, "Versions")."""
    ns, name = props["namespace"], props["name"]
    made = [(d.time, declared_version(ns, name, d.stamp)) for d in declarations(props)]
    if written is not None:
        made.append((native(written["time"]) or EPOCH, dataset_version(ns, name, written["runId"])))
    return max(made)[1] if made else first_version(ns, name)


def job_version(namespace: str, name: str, inputs: Iterable[dict[str, str]],
                outputs: Iterable[dict[str, str]]) -> str:
    """A job's version: one per distinct set of inputs and outputs (Marquez also hashes the
    source location, which we keep only for the job's latest event)."""
    ins = sorted(f"{d['namespace']}:{d['name']}" for d in inputs)
    outs = sorted(f"{d['namespace']}:{d['name']}" for d in outputs)
    return name_uuid("job", namespace, name, *ins, "->", *outs)


# a dataset's input facets are served among its facets, its output facets not (as Marquez)
_FACET_PREFIXES = ("facet.", "inputFacet.")


def facets(props: dict[str, Any], legacy: bool = False) -> dict[str, Any]:
    """The facets kept as JSON on a node (``facet.<name>``, and a dataset's input facets,
    ``inputFacet.<name>``, which Marquez serves among the dataset's facets), parsed. Those of
    Marquez's legacy writes only with ``legacy``: Marquez's legacy writes make no facets (what they
    say is served as the fields, tags, description and source)."""
    found: dict[str, Any] = {}
    for prefix in _FACET_PREFIXES:  # a dataset facet first
        for key, value in props.items():
            if key.startswith(prefix) and isinstance(value, str) and key[len(prefix):] not in found:
                try:
                    parsed = json.loads(value)
                except ValueError:
                    continue
                if legacy or not (isinstance(parsed, dict)
                                  and parsed.get("_producer") == LEGACY_PRODUCER):
                    found[key[len(prefix):]] = parsed
    return found


def facet(schema: str, **fields: Any) -> dict[str, Any]:
    return {"_producer": _PRODUCER,
            "_schemaURL": f"https://openlineage.io/spec/facets/1-0-0/{schema}.json#/$defs/{schema}",
            **fields}


def dataset_type(props: dict[str, Any]) -> dict[str, Any]:
    """Marquez's dataset type: ``STREAM`` for a dataset whose ``datasetType`` facet says so (a
    legacy ``PUT`` of a stream sends it), with its ``schemaLocation``; else ``DB_TABLE``, as
    Marquez answers for every dataset OpenLineage events name."""
    if props.get("datasetType") != "STREAM":
        return {"type": "DB_TABLE"}
    stream = facets(props, legacy=True).get(STREAM_FACET) or {}
    location = stream.get("schemaLocation") if isinstance(stream, dict) else None
    return {"type": "STREAM", "schemaLocation": location if isinstance(location, str) else None}


def dataset(row: dict[str, Any]) -> dict[str, Any]:
    """Marquez's Dataset (DB_TABLE or STREAM) from a row of ``marquez/datasets``."""
    p = row["props"]
    ns, name = p["namespace"], p["name"]
    written = row.get("written")
    fields = [{"name": f["name"], "type": f.get("type"), "tags": sorted(set(f.get("tags") or [])),
               "description": f.get("description")} for f in row["fields"]]
    found = facets(p)
    if p.get("description") is not None:
        found.setdefault("documentation", facet("DocumentationDatasetFacet",
                                                 description=p["description"]))
    if fields:
        found.setdefault("schema", facet("SchemaDatasetFacet", fields=[
            {k: v for k, v in f.items() if k != "tags" and v is not None} for f in fields]))
    if p.get("dataSourceName") or p.get("dataSourceUri"):
        found.setdefault("dataSource", facet("DatasourceDatasetFacet", name=p.get("dataSourceName"),
                                              uri=p.get("dataSourceUri")))
    return {
        "id": {"namespace": ns, "name": name}, **dataset_type(p), "name": name,
        "physicalName": name, "createdAt": iso(row.get("createdAt", p.get("firstSeen"))),
        "updatedAt": iso(row.get("updatedAt", p.get("lastSeen"))), "namespace": ns,
        "sourceName": p.get("dataSourceName") or "default", "fields": fields,
        "tags": all_tags(p, row), "lastModifiedAt": iso(row.get("lastModifiedAt")),
        "lastLifecycleState": p.get("lifecycleState"), "description": p.get("description"),
        "currentVersion": current_version(p, written),
        "columnLineage": column_lineage(row.get("columnInputs") or []), "facets": found,
        "deleted": False,
    }


_DIRECT_ORDER = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


def strength(t: dict[str, Any]) -> tuple[Any, ...]:
    """How strongly a transformation carries a value, strongest first: DIRECT (IDENTITY,
    TRANSFORMATION, AGGREGATION, others), UNKNOWN, then INDIRECT; then by name, so that the
    order never depends on the order edges were loaded or found."""
    kind = {"DIRECT": 0, "UNKNOWN": 1}.get(t["type"], 2)
    return (kind, _DIRECT_ORDER.get(t["subtype"], 3) if kind == 0 else 0, t["subtype"] or "",
            t.get("jobNamespace") or "", t.get("job") or "", bool(t.get("masking")),
            t.get("description") or "")


def column_lineage(inputs: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """A dataset's ``columnLineage`` as Marquez fills it (ColumnLineageService's enrichment): for
    each of its fields derived from others, the fields it comes from directly, one entry per
    input field with its strongest transformation; None when no field has any."""
    by_field: dict[str, dict[tuple[str, str, str], list[dict[str, Any]]]] = {}
    for i in inputs:
        by_field.setdefault(i["field"], {}).setdefault(
            (i["namespace"], i["dataset"], i["input"]), []).append(i)
    if not by_field:
        return None
    return [{"name": name, "inputFields": [
        {"namespace": ns, "dataset": ds, "field": f,
         "transformationDescription": (best := min(ways, key=strength))["description"],
         "transformationType": best["subtype"]}
        for (ns, ds, f), ways in sorted(by_field[name].items())]} for name in sorted(by_field)]


def all_tags(props: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """A node's tags: the producer's (the tags facet) and those set through the API."""
    return sorted(set(props.get("tags") or []) | set(row.get("apiTags") or []))


def run_state(p: dict[str, Any]) -> str:
    """Marquez's state of a run: its events' (RUN_STATES), and NEW for a run made by Marquez's
    legacy run write that nothing has started since (its only event is that write's OTHER)."""
    if p.get("state") == "OTHER" and f"facet.{ARGS_FACET}" in p:
        return "NEW"
    return RUN_STATES.get(p.get("state") or "", "NEW")


def run(row: dict[str, Any], parent: dict[str, Any] | None = None) -> dict[str, Any]:
    """Marquez's Run from a row with ``props``, ``job``, ``inputs`` and ``outputs``."""
    p = row["props"]
    job = row["job"]
    times = [p.get(k) for k in ("startTime", "runningTime", "completeTime", "failTime",
                                "abortTime", "otherTime", "stateTime")]
    # created when first seen: a run's later OTHER events (a legacy PUT naming it) move no time back
    known = [t for t in [*times, p.get("firstSeen")] if t is not None]
    started = p.get("startTime") or p.get("runningTime")
    ended = p.get("completeTime") or p.get("failTime") or p.get("abortTime")
    duration = None
    if started is not None and ended is not None:
        duration = int((ended.to_native() - started.to_native()).total_seconds() * 1000)
    return {
        "id": p["runId"], "createdAt": iso(min(known, default=None)),
        "updatedAt": iso(p.get("stateTime")), "nominalStartTime": iso(p.get("nominalStartTime")),
        "nominalEndTime": iso(p.get("nominalEndTime")),
        "state": run_state(p), "startedAt": iso(started),
        "endedAt": iso(ended), "durationMs": duration,
        "args": (facets(p, legacy=True).get(ARGS_FACET) or {}).get("args") or {},
        "jobVersion": {**job, "version": job_version(job["namespace"], job["name"],
                                                     row["inputs"], row["outputs"])},
        "inputDatasetVersions": [_version_of(d, p["runId"], reading=True) for d in row["inputs"]],
        "outputDatasetVersions": [_version_of(d, p["runId"]) for d in row["outputs"]],
        "context": {}, "facets": run_facets(p, parent),
    }


def _version_of(d: dict[str, Any], run_id: str, reading: bool = False) -> dict[str, Any]:
    # a read names the version the producer reported, else the version the run found: that of
    # the latest other run that wrote it before (``producedBy``), else the one it read as such
    version = dataset_version(d["namespace"], d["name"], run_id)
    if reading and d.get("version"):
        version = name_uuid("reported", d["namespace"], d["name"], str(d["version"]))
    elif reading and d.get("producedBy"):
        version = dataset_version(d["namespace"], d["name"], d["producedBy"])
    elif reading:
        version = name_uuid("read", d["namespace"], d["name"], run_id)
    return {"datasetVersionId": {"namespace": d["namespace"], "name": d["name"],
                                 "version": version}, "facets": {}}


def run_facets(p: dict[str, Any], parent: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run's facets: those kept as JSON, and those we lifted into properties, rebuilt."""
    found = facets(p)
    found.pop(ARGS_FACET, None)  # answered as the run's args, as Marquez does
    if p.get("nominalStartTime") is not None:
        found.setdefault("nominalTime", facet(
            "NominalTimeRunFacet", nominalStartTime=iso(p["nominalStartTime"]),
            **({"nominalEndTime": iso(p["nominalEndTime"])} if p.get("nominalEndTime") else {})))
    if p.get("errorMessage") is not None:
        found.setdefault("errorMessage", facet(
            "ErrorMessageRunFacet", message=p["errorMessage"],
            programmingLanguage=p.get("errorLanguage") or "unknown",
            **({"stackTrace": p["stackTrace"]} if p.get("stackTrace") else {})))
    if parent:
        found.setdefault("parent", facet("ParentRunFacet", run={"runId": parent["runId"]},
                                          job={"namespace": parent["namespace"],
                                               "name": parent["name"]}))
    return found

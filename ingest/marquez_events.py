"""Marquez's legacy writes as the OpenLineage events they mean.

Marquez's API still takes writes from before OpenLineage: ``PUT`` of a dataset or a job, ``POST`` of
a job's run, and a run's ``start``, ``complete``, ``fail`` and ``abort``. Scripts written against
them keep working here: each write becomes an OpenLineage event, which goes through the event
log and the graph like any producer's event (so ``lineage replay`` keeps it).

- A dataset (``DbTableMeta``) is a ``DatasetEvent`` with the ``dataSource``, ``schema``,
  ``documentation`` and ``tags`` facets it describes (a ``StreamMeta`` also the ``datasetType``
  facet saying ``STREAM``, and its schema location in a ``marquezStream`` facet); with a
  ``runId``, a ``RunEvent`` of type OTHER of that run instead, the dataset as its output carrying
  the same facets (Marquez links the dataset's new version to the run).
- A job (``JobMeta``) is a ``JobEvent`` with its inputs and the ``jobType``,
  ``sourceCodeLocation``, ``documentation`` and ``sql`` facets. Its outputs come with a run, as in
  Marquez: with a ``runId`` they are the event's outputs; without, they wait in a ``marquezJob``
  job facet, and the job's runs name them.
- A new run (``RunMeta``) is a ``RunEvent`` of type OTHER (the run exists, nothing ran yet) with
  its ``nominalTime`` facet and its ``args`` in a ``marquezRunArgs`` run facet.
- A transition is the ``RunEvent`` of that type (START, COMPLETE, FAIL, ABORT) at ``at``.
Run events name the job's current inputs and outputs: a Marquez run reads and writes what its job
version does, and a COMPLETE that named none would retire the job's lineage
(docs/graph-model.md, "Current and retired lineage").

Pure functions: the caller looks up what they need (a source's URL, a run's job, a job's
datasets) and loads the event.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

# the producer these events name: kept as first published (stores hold it), though the module moved
PRODUCER = "https://github.com/lineage-graph/lineage-graph/blob/main/ingest/marquez_writes.py"
_SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/"
_FACETS = "https://openlineage.io/spec/facets/"
JOB_FACET = "marquezJob"
"""The job facet that holds the outputs a legacy ``PUT`` of a job without a run declared (its
runs name them; Marquez shows a job's outputs once a run has them)."""
STREAM_FACET = "marquezStream"
"""The dataset facet that holds a legacy stream's ``schemaLocation`` (OpenLineage has none)."""
ARGS_FACET = "marquezRunArgs"
"""The run facet that holds a legacy run's ``args`` (Marquez's Run answers them; the same name as
``impact.marquez.models.ARGS_FACET``)."""
_ARGS_SCHEMA = ("https://github.com/lineage-graph/lineage-graph/blob/main/docs/marquez.md"
                "#marquezrunargs")
_JOB_SCHEMA = ("https://github.com/lineage-graph/lineage-graph/blob/main/docs/marquez.md"
               "#marquezjob")
_STREAM_SCHEMA = ("https://github.com/lineage-graph/lineage-graph/blob/main/docs/marquez.md"
                  "#marquezstream")
TRANSITIONS = {"start": "START", "complete": "COMPLETE", "fail": "FAIL", "abort": "ABORT"}


def stamp(when: datetime | None = None) -> str:
    """An event time: ``when`` (now by default) in UTC, to the microsecond (as Marquez keeps a
    legacy write's times)."""
    return (when or datetime.now(UTC)).astimezone(UTC).isoformat(
        timespec="microseconds").replace("+00:00", "Z")


def _facet(schema: str, **fields: Any) -> dict[str, Any]:
    """A facet of the spec's ``schema`` ("VERSION/NAME"), with its producer and schema URL."""
    name = schema.split("/")[1]
    return {"_producer": PRODUCER, "_schemaURL": f"{_FACETS}{schema}.json#/$defs/{name}", **fields}


def dataset_facets(meta: dict[str, Any], source_name: str, source_url: str | None
                   ) -> dict[str, Any]:
    """The facets a ``DbTableMeta`` describes: its source, fields, description and tags (the
    dataset's and each field's)."""
    source = {"name": source_name, **({"uri": source_url} if source_url else {})}
    facets: dict[str, Any] = {"dataSource": _facet("1-0-1/DatasourceDatasetFacet", **source)}
    fields = meta.get("fields") or []
    if fields:
        facets["schema"] = _facet("1-2-0/SchemaDatasetFacet", fields=[
            {k: v for k, v in (("name", f["name"]), ("type", f.get("type")),
                               ("description", f.get("description"))) if v is not None}
            for f in fields])
    if meta.get("description"):
        facets["documentation"] = _facet("1-1-0/DocumentationDatasetFacet",
                                         description=meta["description"])
    tags = [{"key": t, "value": "true", "source": "MARQUEZ_API"} for t in meta.get("tags") or []]
    tags += [{"key": t, "value": "true", "source": "MARQUEZ_API", "field": f["name"]}
             for f in fields for t in f.get("tags") or []]
    if tags:
        facets["tags"] = _facet("1-0-0/TagsDatasetFacet", tags=tags)
    if meta.get("type") == "STREAM":
        facets["datasetType"] = _facet("1-0-1/DatasetTypeDatasetFacet", datasetType="STREAM")
        if meta.get("schemaLocation"):
            facets[STREAM_FACET] = {"_producer": PRODUCER, "_schemaURL": _STREAM_SCHEMA,
                                    "schemaLocation": meta["schemaLocation"]}
    return facets


def dataset_event(namespace: str, name: str, facets: dict[str, Any],
                  when: datetime | None = None) -> dict[str, Any]:
    """``PUT .../datasets/{name}`` without a run: a DatasetEvent."""
    return {"eventTime": stamp(when), "producer": PRODUCER, "schemaURL": _SPEC + "DatasetEvent",
            "dataset": {"namespace": namespace, "name": name, "facets": facets}}


def job_event(namespace: str, name: str, meta: dict[str, Any],
              when: datetime | None = None) -> dict[str, Any]:
    """``PUT .../jobs/{name}``: a JobEvent with the job's inputs, outputs and facets."""
    facets: dict[str, Any] = {"jobType": _facet(
        "2-0-4/JobTypeJobFacet", integration="MARQUEZ", jobType="JOB",
        processingType="STREAMING" if meta["type"] == "STREAM" else "BATCH")}
    if meta.get("location"):
        url = str(meta["location"])
        git = url.endswith(".git") or "/tree/" in url or "/blob/" in url
        facets["sourceCodeLocation"] = _facet("1-1-0/SourceCodeLocationJobFacet", url=url,
                                              type="git" if git else urlsplit(url).scheme or "url")
    if meta.get("description"):
        facets["documentation"] = _facet("1-1-0/DocumentationJobFacet",
                                         description=meta["description"])
    sql = (meta.get("context") or {}).get("sql")
    if sql:
        facets["sql"] = _facet("1-1-0/SQLJobFacet", query=sql)
    outputs = [_ident(d) for d in meta.get("outputs") or []]
    with_run = meta.get("runId") is not None
    facets[JOB_FACET] = {"_producer": PRODUCER, "_schemaURL": _JOB_SCHEMA,
                         "outputs": [] if with_run else outputs}
    return {"eventTime": stamp(when), "producer": PRODUCER, "schemaURL": _SPEC + "JobEvent",
            "job": {"namespace": namespace, "name": name, "facets": facets},
            "inputs": [_ident(d) for d in meta.get("inputs") or []],
            "outputs": outputs if with_run else []}


def run_event(event_type: str, run_id: str, job: dict[str, str], inputs: list[dict[str, Any]],
              outputs: list[dict[str, Any]], when: datetime | None = None,
              run_facets: dict[str, Any] | None = None) -> dict[str, Any]:
    """A RunEvent of ``job``'s run ``run_id`` (``inputs`` and ``outputs`` as the event names
    them: namespace, name, and facets if any)."""
    return {"eventTime": stamp(when), "eventType": event_type, "producer": PRODUCER,
            "schemaURL": _SPEC + "RunEvent",
            "run": {"runId": run_id, "facets": run_facets or {}},
            "job": {"namespace": job["namespace"], "name": job["name"]},
            "inputs": inputs, "outputs": outputs}


def new_run_facets(meta: dict[str, Any]) -> dict[str, Any]:
    """The run facets of ``POST .../jobs/{name}/runs``: its nominal times and its args (always,
    if empty: the facet also marks the run as made by this write, which Marquez calls NEW until it
    starts)."""
    facets: dict[str, Any] = {}
    if meta.get("nominalStartTime"):
        times = {"nominalStartTime": stamp(meta["nominalStartTime"])}
        if meta.get("nominalEndTime"):
            times["nominalEndTime"] = stamp(meta["nominalEndTime"])
        facets["nominalTime"] = _facet("1-0-1/NominalTimeRunFacet", **times)
    facets[ARGS_FACET] = {"_producer": PRODUCER, "_schemaURL": _ARGS_SCHEMA,
                          "args": {str(k): str(v) for k, v in (meta.get("args") or {}).items()}}
    return facets


def _ident(d: dict[str, Any]) -> dict[str, str]:
    return {"namespace": d["namespace"], "name": d["name"]}

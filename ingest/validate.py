"""Lenient validation of OpenLineage events: by shape, never by ``schemaURL``.

The envelope must be usable (a run with a UUID runId, a job with namespace and name, a parseable
``eventTime``); facets that lineage-graph lifts into the graph must have the types it relies on.
Unknown keys and unknown facets are always allowed. A rejected event carries every reason found,
each with the path of the offending field.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ingest import codec
from ingest.times import parse_time

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Ref(_Open):
    namespace: str = Field(min_length=1)
    name: str = Field(min_length=1)


class _ParentRun(_Open):
    runId: uuid.UUID


class _Parent(_Open):
    run: _ParentRun
    job: _Ref
    root: dict[str, Any] | None = None


class _Owner(_Open):
    name: str
    type: str | None = None


class _Ownership(_Open):
    owners: list[_Owner] = Field(default_factory=list)


class _OutputStatistics(_Open):
    rowCount: int | None = None
    size: int | None = None
    fileCount: int | None = None


class _DataQualityMetrics(_Open):
    rowCount: int | None = None
    bytes: int | None = None
    fileCount: int | None = None
    columnMetrics: dict[str, dict[str, Any]] | None = None

    @model_validator(mode="after")
    def _says_something(self) -> _DataQualityMetrics:
        # The spec requires columnMetrics, yet real producers send rowCount alone; a facet with
        # neither carries no metric at all and is rejected.
        if self.rowCount is None and self.columnMetrics is None:
            raise ValueError("needs rowCount or columnMetrics")
        return self


class _Assertion(_Open):
    assertion: str
    success: bool
    column: str | None = None


class _Assertions(_Open):
    assertions: list[_Assertion]


class _ErrorMessage(_Open):
    message: str
    programmingLanguage: str | None = None
    stackTrace: str | None = None


class _SchemaField(_Open):
    name: str
    type: str | None = None
    description: str | None = None
    fields: list[_SchemaField] = Field(default_factory=list)


class _Schema(_Open):
    fields: list[_SchemaField] = Field(default_factory=list)


class _Transformation(_Open):
    type: str
    subtype: str | None = None
    description: str | None = None
    masking: bool | None = None


class _InputField(_Open):
    namespace: str
    name: str
    field: str
    transformations: list[_Transformation] = Field(default_factory=list)


class _FieldLineage(_Open):
    inputFields: list[_InputField] = Field(default_factory=list)
    transformationDescription: str | None = None
    transformationType: str | None = None


class _ColumnLineage(_Open):
    fields: dict[str, _FieldLineage] = Field(default_factory=dict)
    dataset: list[_InputField] = Field(default_factory=list)


class _Symlinks(_Open):
    identifiers: list[_Ref] = Field(default_factory=list)


class _Lifecycle(_Open):
    lifecycleStateChange: str
    previousIdentifier: _Ref | None = None


class _Documentation(_Open):
    description: str


class _Sql(_Open):
    query: str


class _JobType(_Open):
    processingType: str | None = None
    integration: str | None = None
    jobType: str | None = None


class _NominalTime(_Open):
    nominalStartTime: str
    nominalEndTime: str | None = None


class _Version(_Open):
    datasetVersion: str | None = None


FACET_MODELS: dict[str, type[BaseModel]] = {
    "parent": _Parent,
    "ownership": _Ownership,
    "outputStatistics": _OutputStatistics,
    "dataQualityMetrics": _DataQualityMetrics,
    "dataQualityAssertions": _Assertions,
    "errorMessage": _ErrorMessage,
    "schema": _Schema,
    "columnLineage": _ColumnLineage,
    "symlinks": _Symlinks,
    "lifecycleStateChange": _Lifecycle,
    "documentation": _Documentation,
    "sql": _Sql,
    "jobType": _JobType,
    "nominalTime": _NominalTime,
    "version": _Version,
}


@dataclass(frozen=True)
class ValidEvent:
    """An event that passed validation: its kind, normalised time and identity digest."""

    kind: str  # RunEvent, JobEvent or DatasetEvent
    raw: dict[str, Any]
    time: datetime
    time_raw: str
    run_id: str | None
    event_type: str | None

    @cached_property
    def digest(self) -> str:
        """Computed on first use: the API only accepts or rejects, and does not need it."""
        return event_digest(self.raw)


def event_digest(raw: dict[str, Any]) -> str:
    """Identity of an event: a hash of its canonical JSON, so a re-sent event is recognised."""
    return hashlib.sha256(codec.canonical(raw)).hexdigest()


def validate(obj: Any) -> ValidEvent | list[str]:
    """Return a ValidEvent, or the list of reasons why ``obj`` is rejected."""
    if not isinstance(obj, dict):
        return [f"an event must be a JSON object, got {type(obj).__name__}"]
    reasons: list[str] = []
    kind = _kind(obj)
    if kind is None:
        return ["not an OpenLineage event: no 'run', 'job' or 'dataset' object"]
    time_raw = obj.get("eventTime")
    event_time: datetime | None = None
    try:
        event_time = parse_time(time_raw)
    except ValueError as e:
        reasons.append(f"eventTime: {e}" if time_raw is not None else "eventTime: missing")
    run_id, event_type = None, None
    if kind == "RunEvent":
        run_id = _run_id(obj.get("run"), reasons)
        event_type = _event_type(obj.get("eventType"), reasons)
    if kind in ("RunEvent", "JobEvent"):
        _check_ref(obj.get("job"), "job", reasons)
        _check_facets(obj["job"].get("facets") if isinstance(obj.get("job"), dict) else None,
                      "job.facets", reasons)
    if kind == "RunEvent" and isinstance(obj.get("run"), dict):
        _check_facets(obj["run"].get("facets"), "run.facets", reasons)
    if kind == "DatasetEvent":
        _check_dataset(obj.get("dataset"), "dataset", reasons)
    for side in ("inputs", "outputs"):
        datasets = obj.get(side)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            reasons.append(f"{side}: expected a list, got {type(datasets).__name__}")
            continue
        for i, ds in enumerate(datasets):
            _check_dataset(ds, f"{side}[{i}]", reasons)
    if reasons or event_time is None:
        return reasons
    return ValidEvent(kind, obj, event_time, str(time_raw), run_id, event_type)


def _kind(obj: dict[str, Any]) -> str | None:
    if isinstance(obj.get("run"), dict) or ("run" in obj and "job" in obj):
        return "RunEvent"
    if "job" in obj:
        return "JobEvent"
    if "dataset" in obj:
        return "DatasetEvent"
    return None


def _run_id(run: Any, reasons: list[str]) -> str | None:
    if not isinstance(run, dict):
        reasons.append("run: expected an object with a runId")
        return None
    value = run.get("runId")
    if value is None:
        reasons.append("run.runId: missing (a run event needs the UUID of its run)")
        return None
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        reasons.append(f"run.runId: not a UUID: {value!r}")
        return None


def _event_type(value: Any, reasons: list[str]) -> str:
    if value is None:
        return "OTHER"
    if isinstance(value, str) and value.upper() in EVENT_TYPES:
        return value.upper()
    reasons.append(f"eventType: {value!r} is not one of {', '.join(EVENT_TYPES)}")
    return "OTHER"


def _check_ref(value: Any, where: str, reasons: list[str]) -> None:
    if not isinstance(value, dict):
        reasons.append(f"{where}: expected an object with namespace and name")
        return
    for key in ("namespace", "name"):
        if not isinstance(value.get(key), str) or not value[key]:
            reasons.append(f"{where}.{key}: missing or not a non-empty string")


def _check_dataset(value: Any, where: str, reasons: list[str]) -> None:
    _check_ref(value, where, reasons)
    if isinstance(value, dict):
        for key in ("facets", "inputFacets", "outputFacets"):
            _check_facets(value.get(key), f"{where}.{key}", reasons)


def _check_facets(facets: Any, where: str, reasons: list[str]) -> None:
    if facets is None:
        return
    if not isinstance(facets, dict):
        reasons.append(f"{where}: expected an object of facets")
        return
    for key, facet in facets.items():
        if isinstance(facet, dict) and facet.get("_deleted") is True:
            continue
        if not isinstance(facet, dict):
            reasons.append(f"{where}.{key}: a facet must be an object")
            continue
        model = FACET_MODELS.get(key)
        if model is None:
            continue
        try:
            model.model_validate(facet)
        except ValidationError as e:
            for err in e.errors():
                path = "".join(f".{p}" for p in err["loc"])
                reasons.append(f"{where}.{key}{path}: {err['msg']}")

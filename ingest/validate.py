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
from typing import Annotated, Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from typing_extensions import TypedDict

from ingest import codec
from ingest.bounds import problems
from ingest.secrets import scrub
from ingest.times import parse_time

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")


# Facets are checked as TypedDicts, not models: pydantic then checks the types without building
# an object per field (a schema facet of 8 fields: 20-32 us as a model, 5 us as a TypedDict; a
# column lineage facet 82-110 us as a model), and the API and the worker both check every event.
_ALLOW = ConfigDict(extra="allow")
_NonEmpty = Annotated[str, Field(min_length=1)]


class _Ref(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    namespace: _NonEmpty
    name: _NonEmpty


class _ParentRun(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    runId: uuid.UUID


class _Parent(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    run: _ParentRun
    job: _Ref
    root: NotRequired[dict[str, Any] | None]


class _Owner(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    name: str
    type: NotRequired[str | None]


class _Ownership(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    owners: NotRequired[list[_Owner]]


class _OutputStatistics(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    rowCount: NotRequired[int | None]
    size: NotRequired[int | None]
    fileCount: NotRequired[int | None]


class _DataQualityMetrics(BaseModel):
    model_config = _ALLOW

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


class _Assertion(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    assertion: str
    success: bool
    column: NotRequired[str | None]


class _Assertions(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    assertions: list[_Assertion]


class _ErrorMessage(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    message: str
    programmingLanguage: NotRequired[str | None]
    stackTrace: NotRequired[str | None]


class _SchemaField(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    name: str
    type: NotRequired[str | None]
    description: NotRequired[str | None]
    fields: NotRequired[list[_SchemaField]]


class _Schema(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    fields: NotRequired[list[_SchemaField]]


class _Transformation(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    type: str
    subtype: NotRequired[str | None]
    description: NotRequired[str | None]
    masking: NotRequired[bool | None]


class _InputField(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    namespace: str
    name: str
    field: str
    transformations: NotRequired[list[_Transformation]]


class _FieldLineage(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    inputFields: NotRequired[list[_InputField]]
    transformationDescription: NotRequired[str | None]
    transformationType: NotRequired[str | None]


class _ColumnLineage(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    fields: NotRequired[dict[str, _FieldLineage]]
    dataset: NotRequired[list[_InputField]]


class _Symlinks(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    identifiers: NotRequired[list[_Ref]]


class _Lifecycle(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    lifecycleStateChange: str
    previousIdentifier: NotRequired[_Ref | None]


class _Documentation(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    description: str


class _Sql(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    query: str


class _JobType(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    processingType: NotRequired[str | None]
    integration: NotRequired[str | None]
    jobType: NotRequired[str | None]


class _NominalTime(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    nominalStartTime: str
    nominalEndTime: NotRequired[str | None]


class _Version(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    datasetVersion: NotRequired[str | None]


FACET_MODELS: dict[str, TypeAdapter[Any]] = {name: TypeAdapter(shape) for name, shape in {
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
}.items()}


@dataclass(frozen=True)
class ValidEvent:
    """An event that passed validation: its kind, normalised time and identity digest."""

    kind: str  # RunEvent, JobEvent or DatasetEvent
    raw: dict[str, Any]  # the event as received, scrubbed of secrets (ingest.secrets)
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
    """Return a ValidEvent (its ``raw`` scrubbed of secrets), or the reasons ``obj`` is rejected."""
    if not isinstance(obj, dict):
        return [f"an event must be a JSON object, got {type(obj).__name__}"]
    unstorable = problems(obj)
    if unstorable:
        return unstorable
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
    return ValidEvent(kind, scrub(obj), event_time, str(time_raw), run_id, event_type)


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
            model.validate_python(facet)
        except ValidationError as e:
            for err in e.errors():
                path = "".join(f".{p}" for p in err["loc"])
                reasons.append(f"{where}.{key}{path}: {err['msg']}")

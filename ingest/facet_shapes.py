"""The shapes of the facets lineage-graph lifts into the graph, as validation checks them.

Only the fields the graph relies on are typed; every other key is allowed (``extra="allow"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from typing_extensions import TypedDict

# Facets are checked as TypedDicts, not models: pydantic then checks the types without building
# an object per field, which is faster (docs/benchmarks.md, "Measurements behind the code"), and
# the API and the worker both check every event.
_ALLOW = ConfigDict(extra="allow")
_NonEmpty = Annotated[str, Field(min_length=1)]


class _Ref(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    namespace: _NonEmpty
    name: _NonEmpty


class _ParentRun(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    # a UUID, or (Airflow's older integration) the DAG run's own id: ingest.transform.parent_run_id
    runId: _NonEmpty


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


class _LineageInput(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    type: NotRequired[str]
    namespace: NotRequired[str]
    name: NotRequired[str]
    field: NotRequired[str | None]
    transformations: NotRequired[list[_Transformation]]


class _LineageField(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    inputs: list[_LineageInput]


class _LineageEntry(TypedDict):
    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    type: NotRequired[str]
    namespace: NotRequired[str]
    name: NotRequired[str]
    inputs: NotRequired[list[_LineageInput]]
    fields: NotRequired[dict[str, _LineageField]]


class _Lineage(TypedDict):
    """LineageJobFacet (``entries``) or LineageDatasetFacet (``inputs``, ``fields``)."""

    __pydantic_config__ = _ALLOW  # type: ignore[misc]
    entries: NotRequired[list[_LineageEntry]]
    inputs: NotRequired[list[_LineageInput]]
    fields: NotRequired[dict[str, _LineageField]]


def lineage_problems(facet: dict[str, Any]) -> list[str]:
    """What the lineage facet's shape cannot say: each entity is a DATASET (with namespace and
    name) or a JOB (with both, or neither: the event's own job); paths relative to the facet."""
    found: list[str] = []

    def entity(item: dict[str, Any], where: str) -> None:
        kind = str(item.get("type") or "DATASET").upper()
        named = [bool(item.get(k)) for k in ("namespace", "name")]
        if kind not in ("DATASET", "JOB"):
            found.append(f"{where}.type: {item.get('type')!r} is not DATASET or JOB")
        elif kind == "DATASET" and not all(named):
            found.append(f"{where}: a DATASET needs a non-empty namespace and name")
        elif kind == "JOB" and any(named) and not all(named):
            found.append(f"{where}: a JOB has both namespace and name, or neither (the event's "
                         "own job)")

    def inputs(holder: dict[str, Any], where: str) -> None:
        for i, inp in enumerate(holder.get("inputs") or []):
            entity(inp, f"{where}.inputs[{i}]")
        for col, spec in (holder.get("fields") or {}).items():
            for i, inp in enumerate(spec.get("inputs") or []):
                entity(inp, f"{where}.fields.{col}.inputs[{i}]")

    for n, entry in enumerate(facet.get("entries") or []):
        entity(entry, f".entries[{n}]")
        inputs(entry, f".entries[{n}]")
    inputs(facet, "")
    return found


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


# Checks beyond the shape, run once the shape passed: the path of each problem inside the facet.
FACET_CHECKS: dict[str, Callable[[dict[str, Any]], list[str]]] = {"lineage": lineage_problems}
FACET_MODELS: dict[str, TypeAdapter[Any]] = {name: TypeAdapter(shape) for name, shape in {
    "parent": _Parent,
    "parentRun": _Parent,  # Airflow's older integrations: the same facet under another name
    "ownership": _Ownership,
    "outputStatistics": _OutputStatistics,
    "dataQualityMetrics": _DataQualityMetrics,
    "dataQualityAssertions": _Assertions,
    "errorMessage": _ErrorMessage,
    "schema": _Schema,
    "columnLineage": _ColumnLineage,
    "symlinks": _Symlinks,
    "lineage": _Lineage,
    "lifecycleStateChange": _Lifecycle,
    "documentation": _Documentation,
    "sql": _Sql,
    "jobType": _JobType,
    "nominalTime": _NominalTime,
    "version": _Version,
}.items()}

"""The shapes of a change document for the pre-deploy check, validated at the edge.

``lineage check`` and ``POST /api/v1/impact/check`` take one of four documents; each is checked
against its model here before anything reads it, so a malformed document is a clear error naming
the field (exit 2, HTTP 422), never a crash deeper in:

* ``{"changes": [{op, namespace, dataset, column?, to?, job?, job_namespace?}, ...]}``
* ``{"namespace", "dataset" (or "name"), "columns": [name | {name, type}]}``: a proposed schema
* ``{"job": {namespace, name}, "namespace", "sql": str | [str], "dialect"?}``: a job's new SQL
* an OpenLineage event: its outputs' schemas (or a DatasetEvent's dataset), and for a JobEvent
  its inputs
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from graph.errors import LineageError

OPS = ("drop_column", "rename_column", "retype_column", "add_column", "drop_dataset",
       "rename_dataset", "remove_input")
_Text = Annotated[str, Field(min_length=1)]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class JobRef(_Doc):
    namespace: _Text
    name: _Text


class ChangeItem(_Doc):
    op: Literal[OPS]  # type: ignore[valid-type]
    namespace: _Text
    dataset: _Text | None = None
    name: _Text | None = None
    column: _Text | None = None
    to: _Text | None = None
    new_name: _Text | None = None
    new_type: _Text | None = None
    type: _Text | None = None
    job_namespace: _Text | None = None
    job: _Text | JobRef | None = None


class ChangeList(_Doc):
    changes: Annotated[list[ChangeItem], Field(min_length=1)]


class ColumnSpec(_Doc):
    name: _Text
    type: str | None = None


class ColumnList(_Doc):
    namespace: _Text
    dataset: _Text | None = None
    name: _Text | None = None
    columns: list[_Text | ColumnSpec]


class SqlChange(_Doc):
    sql: _Text | Annotated[list[_Text], Field(min_length=1)]
    job: JobRef
    namespace: _Text
    dialect: _Text = "generic"


class _Schema(_Doc):
    fields: list[ColumnSpec] | None = None


class _Facets(_Doc):
    schema_: _Schema | None = Field(default=None, alias="schema")


class DatasetDoc(_Doc):
    namespace: _Text
    name: _Text
    facets: _Facets | None = None


class EventChange(_Doc):
    job: JobRef | None = None
    dataset: DatasetDoc | None = None
    inputs: list[DatasetDoc] | None = None
    outputs: list[DatasetDoc] | None = None


class DocumentError(LineageError, ValueError):
    """A change document that does not have the shape its kind needs; says which field."""


def validated(model: type[_Doc], doc: Any) -> Any:
    """``doc`` checked against ``model``, as plain data (aliases kept, unset fields left out)."""
    try:
        return TypeAdapter(model).validate_python(doc).model_dump(by_alias=True, exclude_unset=True)
    except ValidationError as e:
        reasons = []
        for err in e.errors()[:5]:
            path = ".".join(str(p) for p in err["loc"]) or "(document)"
            reasons.append(f"{path}: {err['msg']}")
        raise DocumentError("; ".join(reasons)) from e

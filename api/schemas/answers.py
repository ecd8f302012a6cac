"""Our answers' shapes: the questions' dataclasses as they are encoded (api.encode), the few that
the routes extend, and the shapes of the policy, gate, health and ops answers."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from impact.answers import Walk
from impact.change.check import Report as CheckReport
from impact.erasure.evidence import ErasureStatus
from impact.health.freshness import Freshness
from impact.ml.provenance import Provenance
from impact.repair.changes import Changes
from impact.repair.plan import RerunPlan
from impact.root_cause import RootCause
from impact.tag_reach import RawCopy, TagReport
from impact.where import WhereReport

__all__ = ["Alive", "Changes", "CheckReport", "ErasureStatusAnswer", "FreshnessAnswer", "Gate",
           "LineageHealth", "LookupDataset",
           "LookupJob", "LookupPage", "LookupRun", "Policies", "Provenance", "Ready", "Acknowledged",
           "RerunPlanAnswer",
           "RootCause", "TagAnswer", "Violations", "Walk", "WhereAnswer"]


def _extended(base: type, name: str, doc: str, **extra: Any) -> type[BaseModel]:
    """A model of the dataclass ``base``'s fields, as api.encode writes them, and ``extra``
    fields (name: (type, default)) the route adds."""
    hints = typing.get_type_hints(base)
    fields: dict[str, Any] = {f.name: (hints[f.name], ...) for f in dataclasses.fields(base)}
    model: type[BaseModel] = create_model(name, __doc__=doc, **fields, **extra)
    return model


WhereAnswer = _extended(WhereReport, "WhereAnswer",
                        "Where a column's data goes, with how many reaches carry each label.",
                        counts=(dict[str, int], ...))
TagAnswer = _extended(TagReport, "TagAnswer", "Where the data of every column carrying a tag "
                      "goes, with the raw copies left untagged.",
                      summary=(str, ...), untaggedRaw=(list[RawCopy], ...))
RerunPlanAnswer = _extended(RerunPlan, "RerunPlanAnswer", "What to rerun after bad data, in which "
                            "order, grouped by parent run, and the versions to roll back to.",
                            commands=(list[str], ...))
ErasureStatusAnswer = _extended(ErasureStatus, "ErasureStatusAnswer", "The evidence of an erasure "
                                "request, place by place.", state=(str, ...))
FreshnessAnswer = _extended(Freshness, "FreshnessAnswer", "A dataset's last successful write "
                            "and whether it is late.", verdict=(str, ...))


class LookupDataset(BaseModel):
    """A dataset with its columns (and those no longer written), writers, readers, one hop up
    and down, its last run and what closes its gate now (``qualityAtRisk``)."""

    props: dict[str, Any] = Field(description="The node's own properties")
    columns: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    aliases: list[str]
    writers: list[str]
    readers: list[str]
    upstream: list[dict[str, Any]]
    downstream: list[dict[str, Any]]
    lastRun: dict[str, Any] | None
    qualityAtRisk: list[dict[str, Any]]


class LookupJob(BaseModel):
    """A job: what it reads and writes, its parents and children, its latest runs."""

    props: dict[str, Any]
    reads: list[Any]
    writes: list[Any]
    parents: list[str]
    children: list[dict[str, Any]]
    runs: list[dict[str, Any]]


class LookupRun(BaseModel):
    """A run: its job, inputs and outputs with versions, parent, children and descendants."""

    props: dict[str, Any]
    job: str
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    parent: str | None
    children: list[Any]
    descendants: list[dict[str, Any]]


class LookupPage(BaseModel):
    datasets: list[dict[str, Any]]
    limit: int
    offset: int
    total: int | None


class Rule(BaseModel):
    id: str
    kind: str
    description: str | None
    severity: str
    owners: list[str]
    line: int | None
    waivers: list[dict[str, Any]]
    openViolations: int


class Policies(BaseModel):
    policies: str | None = Field(description="The policy file")
    rules: list[Rule]


class Violations(BaseModel):
    totalCount: int
    violations: list[dict[str, Any]]


class Cause(BaseModel):
    kind: str
    severity: str
    dataset: str
    what: str
    path: list[str]
    job: str | None
    run: str | None
    at: str | None
    rule: str | None


class Gate(BaseModel):
    dataset: str
    open: bool
    why: str
    checkedAt: str
    upstreamChecked: int
    rulesChecked: int
    causes: list[Cause]


class LineageHealth(BaseModel):
    """Lineage health (impact.health.measure) per tier and namespace, the SLOs' verdicts."""

    checkedAt: str | None
    tiers: list[dict[str, Any]]
    tiersFrom: str | None
    namespaces: list[dict[str, Any]]
    ingest: dict[str, Any]
    failedRuns: Any
    offenders: Any
    offenderCounts: Any
    ageSeconds: float
    measureSeconds: float
    slos: list[dict[str, Any]]


class Alive(BaseModel):
    status: str


class Ready(BaseModel):
    ready: bool
    checks: dict[str, Any]
    warmed: bool


class Acknowledged(BaseModel):
    """What ``POST /api/v1/lineage`` acknowledged: logged, to be loaded by the worker."""

    model_config = ConfigDict(extra="allow")
    accepted: int
    first_seq: int
    last_seq: int

"""Service level objectives on lineage health: a YAML file of targets per tier, judged against a
:class:`impact.health.measure.Health` (docs/health.md, "SLOs")::

    slos:
      - {sli: coverage, tier: critical, objective: 0.8}       # a ratio: the least good share
      - {sli: completeness, tier: critical, objective: 0.95}
      - {sli: silent_jobs, tier: critical, max: 0}            # a count: the most allowed
      - {sli: lag_seconds, max: 30}                           # ingest: no tier

A ratio's error budget is the bad share the objective allows (``1 - objective`` of what is
valid); what is left of it is reported as a share of the budget (negative when overspent). A
count's budget is ``max`` minus the count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from graph.errors import LineageError
from impact.health.measure import RATIOS, Health
from impact.user_files import Strict, read_document

COUNTS = ("silent_jobs", "unfinished_runs")
INGEST = ("lag_seconds", "error_rate")
SLIS = (*RATIOS, *COUNTS, *INGEST)


class SloError(LineageError):
    """An SLO file that cannot be read: says where and what."""


@dataclass(frozen=True)
class Slo:
    sli: str
    tier: str | None
    objective: float | None = None  # a ratio's least good share
    max: float | None = None  # a count's (or lag's, or error rate's) most allowed

    @property
    def label(self) -> str:
        target = f">= {self.objective:g}" if self.objective is not None else f"<= {self.max:g}"
        return f"{self.sli}{f' ({self.tier})' if self.tier else ''} {target}"


@dataclass(frozen=True)
class Verdict:
    slo: Slo
    value: float | None
    met: bool
    budget_left: float | None
    """Ratios: the share of the error budget left (1.0 untouched, below 0 overspent); counts and
    ingest: the room left under ``max``. None without data."""
    detail: str
    no_data: bool = False
    """Nothing to measure (a tier that holds nothing): not met, and not violated either."""

    @property
    def status(self) -> str:
        """met, violated, or no data."""
        return "no data" if self.no_data else "met" if self.met else "violated"

    def json(self) -> dict[str, Any]:
        return {"sli": self.slo.sli, "tier": self.slo.tier, "objective": self.slo.objective,
                "max": self.slo.max, "value": self.value, "met": self.met,
                "status": self.status, "budgetLeft": self.budget_left, "detail": self.detail}


class _SloIn(Strict):
    sli: str
    tier: str | None = Field(None, min_length=1)
    objective: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _judged_as_its_sli_is(self) -> _SloIn:
        if self.sli not in SLIS:
            raise ValueError(f"'sli' must be one of {', '.join(SLIS)}; got {self.sli}")
        if self.sli in INGEST and self.tier is not None:
            raise ValueError(f"{self.sli} is measured on the ingest path, not per tier")
        if self.sli not in INGEST and self.tier is None:
            raise ValueError(f"{self.sli} needs a 'tier' (e.g. critical, or untiered)")
        if self.sli in RATIOS and (self.objective is None or not 0 < self.objective <= 1
                                   or self.max is not None):
            raise ValueError(f"{self.sli} is a ratio: give 'objective' in (0, 1]")
        if self.sli not in RATIOS and (self.max is None or self.max < 0
                                       or self.objective is not None):
            raise ValueError(f"{self.sli} is judged by 'max' (0 or more)")
        return self


class _SloFile(Strict):
    """The SLO file: a non-empty list ``slos``."""

    slos: list[_SloIn] = Field(min_length=1)


def read_slos(path: Path) -> list[Slo]:
    found = read_document(path, _SloFile, "the SLO file", SloError)
    return [Slo(s.sli, s.tier, objective=s.objective, max=s.max) for s in found.slos]


def judge(slos: list[Slo], health: Health) -> list[Verdict]:
    return [_judge(slo, health) for slo in slos]


def _judge(slo: Slo, health: Health) -> Verdict:
    if slo.sli in INGEST:
        value = (health.ingest.get("lagSeconds") if slo.sli == "lag_seconds"
                 else (health.ingest.get("errorRate") or {}).get("value"))
        return _count(slo, None if value is None else float(value))
    group = health.group(slo.tier or "")
    if slo.sli in COUNTS:
        count = 0 if group is None else (group.silent_jobs if slo.sli == "silent_jobs"
                                         else group.unfinished_runs)
        return _count(slo, float(count))
    ratio = group.ratio(slo.sli) if group is not None else None
    if ratio is None or ratio.value is None or slo.objective is None:
        return Verdict(slo, None, False, None, f"no data: nothing in tier {slo.tier} to measure",
                       no_data=True)
    allowed = (1 - slo.objective) * ratio.valid
    bad = ratio.valid - ratio.good
    left = 1.0 - bad / allowed if allowed > 0 else (1.0 if bad == 0 else float("-inf"))
    met = ratio.value >= slo.objective
    return Verdict(slo, ratio.value, met, left,
                   f"{ratio.good} of {ratio.valid} good ({ratio.value:.1%}); {bad} bad of "
                   f"{allowed:.1f} allowed")


def _count(slo: Slo, value: float | None) -> Verdict:
    if value is None or slo.max is None:
        return Verdict(slo, None, False, None, "no data", no_data=True)
    return Verdict(slo, value, value <= slo.max, slo.max - value,
                   f"{value:g} (at most {slo.max:g})")

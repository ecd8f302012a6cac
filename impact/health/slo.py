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

from graph.errors import LineageError
from impact.health.measure import RATIOS, Health
from impact.health.tiers import read_yaml

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


def read_slos(path: Path) -> list[Slo]:
    doc = read_yaml(path, "the SLO file", SloError)
    if not isinstance(doc, dict) or not isinstance(doc.get("slos"), list) or not doc["slos"]:
        raise SloError(f"{path}: expected a mapping with a non-empty list 'slos'")
    found = []
    for i, raw in enumerate(doc["slos"]):
        where = f"{path}: slos[{i}]"
        if not isinstance(raw, dict) or raw.get("sli") not in SLIS:
            raise SloError(f"{where}: 'sli' must be one of {', '.join(SLIS)}; got "
                           f"{raw.get('sli') if isinstance(raw, dict) else raw!r}")
        unknown = set(raw) - {"sli", "tier", "objective", "max"}
        if unknown:
            raise SloError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        sli, tier = raw["sli"], raw.get("tier")
        if sli in INGEST:
            if tier is not None:
                raise SloError(f"{where}: {sli} is measured on the ingest path, not per tier")
        elif not isinstance(tier, str) or not tier:
            raise SloError(f"{where}: {sli} needs a 'tier' (e.g. critical, or untiered)")
        if sli in RATIOS:
            objective = raw.get("objective")
            if not isinstance(objective, (int, float)) or not 0 < objective <= 1 or "max" in raw:
                raise SloError(f"{where}: {sli} is a ratio: give 'objective' in (0, 1]")
            found.append(Slo(sli, tier, objective=float(objective)))
        else:
            most = raw.get("max")
            if not isinstance(most, (int, float)) or most < 0 or "objective" in raw:
                raise SloError(f"{where}: {sli} is judged by 'max' (0 or more)")
            found.append(Slo(sli, tier, max=float(most)))
    return found


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

"""Tiers: how much a dataset matters, for lineage health (docs/health.md).

A dataset's tier comes from a tag ``tier:NAME`` (a producer's tags facet, ``{"key": "tier",
"value": "critical"}``, or a tag set through the API), else from the first pattern of the tiers
file that matches it, else it is ``untiered``. The tiers file (YAML)::

    tiers:
      - tier: critical
        match:
          - {namespace: "postgres://warehouse:5432", name: "marts.*"}
          - {name: "dashboards.*"}
      - tier: bronze
        match:
          - {namespace: "s3://raw-*"}

Patterns are shell globs (``fnmatch``, case-sensitive); a pattern that leaves out namespace or
name matches any. Tiers are ordered as the file lists them, then tiers known only from tags
(alphabetically), then ``untiered``: a job's tier is the first in that order among the datasets it
writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from graph.errors import LineageError
from impact.user_files import Strict, read_document

UNTIERED = "untiered"
TAG_PREFIX = "tier:"


class TiersError(LineageError):
    """A tiers file that cannot be read: says where and what."""


@dataclass(frozen=True)
class Pattern:
    namespace: str = "*"
    name: str = "*"

    def matches(self, namespace: str, name: str) -> bool:
        return fnmatchcase(namespace, self.namespace) and fnmatchcase(name, self.name)


@dataclass(frozen=True)
class Tiers:
    """The tiers file, read: (tier, patterns) in the file's order."""

    rules: tuple[tuple[str, tuple[Pattern, ...]], ...] = ()
    source: str = "tags only"

    def tier_of(self, namespace: str, name: str, tags: Iterable[str]) -> str:
        """The dataset's tier: its ``tier:`` tag, else the file's first matching tier."""
        for tag in sorted(tags):
            if tag.startswith(TAG_PREFIX) and len(tag) > len(TAG_PREFIX):
                return tag[len(TAG_PREFIX):]
        for tier, patterns in self.rules:
            if any(p.matches(namespace, name) for p in patterns):
                return tier
        return UNTIERED

    def order(self, seen: Iterable[str]) -> list[str]:
        """Tiers in their order of importance: the file's, then the others, untiered last."""
        listed = [tier for tier, _ in self.rules]
        others = sorted(set(seen) - set(listed) - {UNTIERED})
        return listed + others + [UNTIERED]


class _PatternIn(Strict):
    namespace: str = Field("*", min_length=1)
    name: str = Field("*", min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _one_at_least(cls, value: Any) -> Any:
        if value == {}:
            raise ValueError("give a namespace or a name glob (or both)")
        return value


class _TierIn(Strict):
    tier: str = Field(min_length=1, pattern=r"\S")
    match: list[_PatternIn] = Field(min_length=1)


class _TiersFile(Strict):
    """The tiers file: ``tiers``, each {tier: NAME, match: [{namespace: GLOB, name: GLOB}, ...]}."""

    tiers: list[_TierIn]


def read_tiers(path: Path | None) -> Tiers:
    """The tiers file at ``path``; no file: tiers come from tags only."""
    if path is None:
        return Tiers()
    found = read_document(path, _TiersFile, "the tiers file", TiersError)
    return Tiers(tuple((t.tier.strip(), tuple(Pattern(p.namespace, p.name) for p in t.match))
                       for t in found.tiers), str(path))

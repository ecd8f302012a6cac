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

import yaml

from graph.errors import LineageError

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


def read_tiers(path: Path | None) -> Tiers:
    """The tiers file at ``path``; no file: tiers come from tags only."""
    if path is None:
        return Tiers()
    doc = read_yaml(path, "the tiers file", TiersError)
    if not isinstance(doc, dict) or not isinstance(doc.get("tiers"), list):
        raise TiersError(f"{path}: expected a mapping with a list 'tiers' "
                         "(each {tier: NAME, match: [{namespace: GLOB, name: GLOB}, ...]})")
    rules: list[tuple[str, tuple[Pattern, ...]]] = []
    for i, entry in enumerate(doc["tiers"]):
        where = f"{path}: tiers[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("tier"), str) \
                or not entry["tier"].strip():
            raise TiersError(f"{where}: expected {{tier: NAME, match: [...]}}")
        match = entry.get("match")
        if not isinstance(match, list) or not match:
            raise TiersError(f"{where} ({entry['tier']}): 'match' must list at least one pattern")
        rules.append((entry["tier"].strip(), tuple(_pattern(p, f"{where}.match[{j}]")
                                                    for j, p in enumerate(match))))
    return Tiers(tuple(rules), str(path))


def read_yaml(path: Path, what: str, error: type[LineageError]) -> Any:
    """The YAML document at ``path`` (lineage health's tiers and SLO files); ``error`` says
    where and why it cannot be read."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: cannot read {what}: {e}") from e
    except yaml.YAMLError as e:
        raise error(f"{path}: not YAML: {e}") from e
    except RecursionError as e:
        raise error(f"{path}: nested too deeply to be {what}") from e


def _pattern(raw: Any, where: str) -> Pattern:
    if not isinstance(raw, dict) or not raw or set(raw) - {"namespace", "name"} \
            or not all(isinstance(v, str) and v for v in raw.values()):
        raise TiersError(f"{where}: expected {{namespace: GLOB, name: GLOB}} (either may be left "
                         f"out), got {raw!r}")
    return Pattern(raw.get("namespace", "*"), raw.get("name", "*"))

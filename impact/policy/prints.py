"""What a batch changed of the lineage the policy rules read, as the watch tells it
(impact.policy.watch): a run that restates yesterday's lineage changes nothing, and checking the
rules again for the datasets it touched would only find what is stored.

A dataset's **print** is a digest of what any rule reads of it (``cypher/policies/prints.cypher``):
its properties and its columns', every edge of it and of its columns with the other end (column
lineage with its transformation and masking, dataset lineage, a job's reads and writes, current
or retired, symlinks, tags set through the API), and whether each job that writes it reads
anything current. Left out is what changes run by run and no rule but ``quality`` reads: times,
stamps, run ids, the facets as sent (what the rules read of them is lifted into properties), and
the per-run figures (row counts, metrics, assertions), which make a second digest, the
**measure**, for the quality rules.

A rule's answer for an anchor depends only on the lineage of the datasets on its paths; a path
changes only where a dataset's print does. So a batch whose datasets all print as they did when
last seen changes no rule's answer, and the rules are checked again only for the datasets whose
print changed (and those up- and downstream of them). Printed with the datasets a batch touched
are all those its jobs read or write, retired or not: the loader may retire or restore an edge of
a job between a dataset of an earlier run and one of this batch (docs/graph-model.md, "Current
and retired lineage"), and the dataset of the earlier run must be printed for that to show.

The prints are kept in memory, most recently seen last, at most ``most`` of them (as
ingest.load.SeenCurrent keeps versions); a dataset with no print kept counts as changed. A full
check forgets them all: it read the graph as it was then, and a print taken before it may
describe a state it no longer stores (a soft delete, then an event that names the dataset again).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from graph.db import Graph

Key = tuple[str, str]
STARTS_PER_QUERY = 2_000
"""Datasets printed per query: a batch of the L estate touches about a thousand."""


@dataclass(frozen=True)
class Print:
    lineage: bytes
    """The digest of what every rule but ``quality`` reads."""
    measure: bytes
    """The digest of the per-run figures a ``quality`` rule reads."""


def read_prints(graph: Graph, datasets: Iterable[Key], jobs: Iterable[Key] = ()
                ) -> dict[Key, Print]:
    """The prints of ``datasets`` and of every dataset ``jobs`` read or write, as the graph is
    now; a dataset not in the graph has none."""
    named = sorted(set(datasets))
    by_job = sorted(set(jobs))
    found: dict[Key, Print] = {}
    for i in range(0, max(len(named), len(by_job), 1), STARTS_PER_QUERY):
        part = named[i:i + STARTS_PER_QUERY]
        of_jobs = by_job[i:i + STARTS_PER_QUERY]
        if not part and not of_jobs:
            break
        for row in graph.read("policies/prints",
                              datasets=[{"namespace": ns, "name": n} for ns, n in part],
                              jobs=[{"namespace": ns, "name": n} for ns, n in of_jobs]):
            found[(row["namespace"], row["name"])] = Print(
                _digest([sorted(map(repr, row["props"])), sorted(map(repr, row["edges"])),
                         sorted(_column(c) for c in row["columns"])]),
                _digest(row["stats"]))
    return found


def _column(column: list[Any]) -> str:
    name, props, edges = column
    return repr([name, sorted(map(repr, props)), sorted(map(repr, edges))])


def _digest(value: Any) -> bytes:
    return hashlib.blake2b(repr(value).encode(), digest_size=16).digest()


@dataclass(frozen=True)
class Changes:
    """What a batch changed, by the prints."""

    lineage: frozenset[Key]
    """Datasets whose print differs from the one kept (or that had none kept, or are gone)."""
    measured: frozenset[Key]
    """Datasets whose measure differs (or whose print does)."""
    printed: int
    """How many datasets were printed."""


class Prints:
    """The prints last seen of each dataset (see the module's doc)."""

    def __init__(self, most: int = 200_000) -> None:
        self.most = most
        self._kept: OrderedDict[int, Print] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def forget(self) -> None:
        self._kept.clear()

    def compare(self, touched: Iterable[Key], now: dict[Key, Print]) -> Changes:
        """Which of ``touched`` and of the datasets printed ``now`` changed since last seen.
        Nothing is kept until :meth:`keep`: a check that fails leaves the prints as they were,
        so that it is tried again in full."""
        lineage = set(touched) - now.keys()  # no longer in the graph (or never written)
        measured = set()
        for key, seen in now.items():
            before = self._kept.get(hash(key))
            if before is None or before.lineage != seen.lineage:
                lineage.add(key)
            elif before.measure != seen.measure:
                measured.add(key)
        return Changes(frozenset(lineage), frozenset(lineage | measured), len(now))

    def keep(self, touched: Iterable[Key], now: dict[Key, Print]) -> None:
        """After the rules were checked for what changed: ``now`` is the datasets' prints from
        here on, and a dataset of ``touched`` not printed has none."""
        for key in set(touched) - now.keys():
            self._kept.pop(hash(key), None)
        for key, seen in now.items():
            k = hash(key)
            self._kept.pop(k, None)
            self._kept[k] = seen
        while len(self._kept) > self.most:
            self._kept.popitem(last=False)

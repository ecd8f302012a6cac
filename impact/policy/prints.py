"""What a batch changed of the lineage the policy rules read, as the watch tells it
(impact.policy.watch): a run that restates yesterday's lineage changes nothing, and checking the
rules again for the datasets it touched would only find what is stored.

The rules read, of a dataset, its names, tags, owners, description, schema and whether it was
deleted, and the lineage edges around it; a ``quality`` rule reads its figures too. Nearly every
edge is a job's, and what a job's edges are is already kept as a digest: a job's current column
lineage is one version (docs/graph-model.md, "Repeated schemas and column lineage"), and while
the job has stated only one and retired nothing, its edges are exactly that version's with the
dataset edges its reads and writes imply. So a **print** (``cypher/policies/prints.cypher``) is:

* of a dataset, a digest of those properties, and apart its **measure**, of the figures;
* of a job, a digest of its lineage version and of every dataset it reads or writes, retired or
  not; of a job that stated several lineages or has retired edges (**unsettled**: the version
  does not tell which of its edges are current), of its current lineage edges too.

After a batch, the datasets whose lineage changed are those whose print changed, with every
dataset of a job whose print changed, and the datasets the batch gave
lineage that belongs to no job's version (ingest.rows.Rows.unprinted: the lineage facets,
symlinks, renames). A rule's answer for an anchor depends only on the lineage on its paths, so
the rules are checked again only for those datasets and what lies up- and downstream of them.

The prints are kept in memory, most recently seen last, at most ``most`` of them (as
ingest.load.SeenCurrent keeps versions); a dataset or job with no print kept counts as changed.
A full check replaces them all with the graph's, read just before it: a print kept from before
may describe a state the check no longer stores (a soft delete, then an event that names the
dataset again).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from graph.db import Graph

Key = tuple[str, str]
STARTS_PER_QUERY = 5_000
"""Datasets (and jobs) printed per query."""


@dataclass(frozen=True, slots=True)
class Print:
    lineage: int
    """The digest of what every rule but ``quality`` reads."""
    measure: int = 0
    """The digest of the per-run figures a ``quality`` rule reads (a dataset's)."""


@dataclass(frozen=True)
class Printed:
    """The prints of a batch's datasets and jobs, as the graph is now."""

    datasets: dict[Key, Print]
    jobs: dict[Key, Print]
    of_job: dict[Key, frozenset[Key]]
    """Each job's datasets (read or written, retired or not)."""


def read_prints(graph: Graph, datasets: Iterable[Key] | None,
                jobs: Iterable[Key] | None = ()) -> Printed:
    """The prints of ``datasets`` and ``jobs`` (None: of every one in the graph); one not in
    the graph has none."""
    if datasets is None or jobs is None:
        [every] = graph.read("policies/print_keys")
        datasets = [(d["namespace"], d["name"]) for d in every["datasets"]]
        jobs = [(j["namespace"], j["name"]) for j in every["jobs"]]
    named, by_job = sorted(set(datasets)), sorted(set(jobs))
    rows: list[dict[str, Any]] = []
    for i in range(0, max(len(named), len(by_job)), STARTS_PER_QUERY):
        rows += graph.read("policies/prints", datasets=[
            {"namespace": ns, "name": n} for ns, n in named[i:i + STARTS_PER_QUERY]], jobs=[
            {"namespace": ns, "name": n} for ns, n in by_job[i:i + STARTS_PER_QUERY]])
    return _printed(rows)


def _printed(rows: Iterable[dict[str, Any]]) -> Printed:
    found = Printed({}, {}, {})
    for row in rows:
        key = (row["namespace"], row["name"])
        if row["kind"] == "dataset":
            found.datasets[key] = Print(_digest(row["print"]), _digest(row["stats"]))
            continue
        # the job's edges, in no order of Neo4j's
        found.jobs[key] = Print(_digest([sorted(x, key=repr) if isinstance(x, list) else x
                                         for x in row["print"]]))
        found.of_job[key] = frozenset((ns, n) for ns, n in row["datasets"])
    return found


def _digest(value: Any) -> int:
    return int.from_bytes(hashlib.blake2b(repr(value).encode(), digest_size=8).digest())


@dataclass(frozen=True)
class Changes:
    """What a batch changed, by the prints."""

    lineage: frozenset[Key]
    """Datasets whose lineage may have changed (see the module's doc)."""
    measured: frozenset[Key]
    """Datasets whose figures changed, or whose lineage may have."""
    printed: int
    """How many datasets and jobs were printed."""


class Prints:
    """The prints last seen of each dataset and job (see the module's doc)."""

    def __init__(self, most: int = 400_000) -> None:
        self.most = most
        self._kept: OrderedDict[int, Print] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def replace(self, now: Printed) -> None:
        """Every print from here on is one of ``now`` (a full check's, read before it)."""
        self._kept.clear()
        self.keep((), (), now)

    def compare(self, touched: Iterable[Key], jobs: Iterable[Key], now: Printed,
                unprinted: Iterable[Key] = ()) -> Changes:
        """What the batch that touched ``touched`` with ``jobs`` changed, its prints ``now``.
        Nothing is kept until :meth:`keep`: a check that fails leaves the prints as they were,
        so that it is tried again in full."""
        lineage = set(unprinted) | (set(touched) - now.datasets.keys())  # gone, or never written
        measured = set()
        for key, seen in now.datasets.items():
            before = self._kept.get(hash(("dataset", key)))
            if before is None or before.lineage != seen.lineage:
                lineage.add(key)
            elif before.measure != seen.measure:
                measured.add(key)
        for key in set(jobs):
            seen_ = now.jobs.get(key)
            before = self._kept.get(hash(("job", key)))
            if seen_ is None or before is None or before != seen_:
                lineage |= now.of_job.get(key, frozenset())
        return Changes(frozenset(lineage), frozenset(lineage | measured),
                       len(now.datasets) + len(now.jobs))

    def keep(self, touched: Iterable[Key], jobs: Iterable[Key], now: Printed) -> None:
        """After the rules were checked for what changed: ``now`` is the prints from here on,
        and a dataset or job of the batch not printed has none."""
        for kind, keys, prints in (("dataset", touched, now.datasets), ("job", jobs, now.jobs)):
            for key in set(keys) - prints.keys():
                self._kept.pop(hash((kind, key)), None)
            for key, seen in prints.items():
                k = hash((kind, key))
                self._kept.pop(k, None)
                self._kept[k] = seen
        while len(self._kept) > self.most:
            self._kept.popitem(last=False)

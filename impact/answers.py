"""What every question shares: the answer's shapes (an impacted node and why; a blast radius or
upstream walk), the depth bound, the checks that a node exists, and a row of the walks' queries
as an answer's step."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, cast

from graph.db import Graph
from graph.errors import NotFound

MAX_DEPTH = 50
DEFAULT_DEPTH = 20


def first_words(text: str, most: int = 200) -> str:
    """``text`` on one line, cut to at most ``most`` characters at a word's end (a run's error
    message in an answer: a Spark error runs to pages), marked with " …" when cut."""
    one = " ".join(text.split())
    if len(one) <= most:
        return one
    cut = one[:most - 2]
    space = cut.rfind(" ")
    return (cut[:space] if space > most // 2 else cut).rstrip() + " …"


@dataclass(frozen=True)
class Impacted:
    """One node the change reaches, and why."""

    kind: str  # dataset, column or job
    namespace: str
    name: str  # dataset name, "dataset.column" for a column, job name for a job
    distance: int
    path: tuple[str, ...]
    job: str | None
    why: str
    last_seen: datetime | None
    owners: tuple[str, ...] = ()
    beyond: int | None = None  # criticality: how many impacted datasets lie downstream of it
    aliases: tuple[str, ...] = ()  # its other names (symlinks), reached as the same node


@dataclass(frozen=True)
class ModelVersion:
    """One version of a model that data reached, and how."""

    namespace: str
    name: str  # the model dataset's name, e.g. models/churn
    version: str
    run_id: str
    job: str
    state: str | None
    trained_at: datetime | None
    via: str  # what of the question it was trained on: 'ns:dataset.column' or 'ns:dataset'
    basis: str  # "columns" (its column lineage names via) or "dataset" (which columns: not stated)
    saw: str | None = None  # GDPR reach: the form of the data it was trained on (raw, masked ...)

    @property
    def label(self) -> str:
        """How answers name it: ``churn v3``."""
        return f"{short_name(self.name)} v{self.version}"


def short_name(name: str) -> str:
    """A model's name as people say it: MLflow's registered ``models/churn`` is ``churn``."""
    return name.removeprefix("models/")


@dataclass(frozen=True)
class Walk:
    """What a walk from a source reached, downstream (the blast radius) or upstream: every node
    with its distance, path and why, and counts by kind, namespace and owner."""

    source: str
    depth: int
    impacted: tuple[Impacted, ...]
    summary: dict[str, dict[str, int]] = field(default_factory=dict)
    direction: str = "downstream"
    aliases: tuple[str, ...] = ()  # the source's other names (symlinks), answered for too
    models: tuple[ModelVersion, ...] = ()  # model versions trained on what was reached (downstream)
    approximate: str | None = None  # why an answer as of a time past the detailed window is one


def require_dataset(graph: Graph, namespace: str, name: str) -> None:
    """Raise NotFound unless the dataset is in the graph."""
    if not graph.read("impact/exists_dataset", namespace=namespace, name=name)[0]["found"]:
        raise NotFound("dataset", f"{namespace}:{name}", name)


def require_column(graph: Graph, namespace: str, dataset: str, column: str) -> None:
    """Raise NotFound unless the column is in the graph."""
    if not graph.read("impact/exists_column", namespace=namespace, dataset=dataset,
                      column=column)[0]["found"]:
        raise NotFound("column", f"{namespace}:{dataset}.{column}", column, (namespace, dataset))


def clamp_depth(depth: int | None) -> int:
    """Depth within 1..MAX_DEPTH; None means the default."""
    return max(1, min(MAX_DEPTH, DEFAULT_DEPTH if depth is None else depth))


def summarise(impacted: tuple[Impacted, ...]) -> dict[str, dict[str, int]]:
    """Counts of impacted nodes by kind, by namespace and by owner."""
    owners = Counter(o for i in impacted for o in (i.owners or ("(no owner)",)))
    return {"kind": dict(Counter(i.kind for i in impacted)),
            "namespace": dict(Counter(i.namespace for i in impacted)),
            "owner": dict(owners)}


def dataset_step(r: dict[str, Any], beyond: dict[str, int] | None = None) -> Impacted:
    """A dataset reached by a walk (a row of ``impact/downstream_datasets`` or upstream)."""
    key = f"{r['namespace']}:{r['name']}"
    return Impacted(r.get("kind") or "dataset", r["namespace"], r["name"], r["distance"],
                    tuple(r["path"]), r["job"],
                    _how(r) + retired_note(r.get("retired"))
                    + summary_note(r.get("summary"), r["lastSeen"]),
                    native_time(r["lastSeen"]), tuple(r["owners"]),
                    beyond.get(key) if beyond is not None else None)


def retired_note(retired: dict[str, Any] | None) -> str:
    """How an answer marks a step over retired lineage (asked for with include_retired)."""
    if not retired:
        return ""
    when = native_time(retired.get("retiredAt"))
    last = retired.get("lastRunId")
    return (f" [RETIRED: job {retired['job']} no longer states it"
            + (f" since {when:%Y-%m-%d %H:%M}" if when else "")
            + (f"; last run {last}" if last else "") + "]")


def approximate(graph: Graph, as_of: datetime | None) -> str | None:
    """What an answer as of ``as_of`` says when that time is before the detailed window of
    retention: its runs are folded, so it is read from summary lineage (docs/graph-model.md,
    "Retention"); None for an exact answer."""
    if as_of is None:
        return None
    since = native_time(graph.read("impact/detailed_since")[0]["detailedSince"])
    if since is None or as_of >= since:
        return None
    return (f"approximate: {as_of:%Y-%m-%d %H:%M} is before the detailed window (since "
            f"{since:%Y-%m-%d %H:%M}): its runs are folded into summary lineage, so the lineage "
            "then is the edges first seen by then and not retired by then, and the runs of "
            "that time are not there to read")


def summary_note(summary: dict[str, Any] | None, last_seen: Any) -> str:
    """How an answer marks a step over summary lineage: an edge last seen before the detailed
    window of retention, whose runs are folded (docs/graph-model.md, "Retention")."""
    if not summary:
        return ""
    when = native_time(last_seen)
    state = summary.get("lastRunState")
    return (" [summary: last seen" + (f" {when:%Y-%m-%d}" if when else "")
            + f", {summary['runs']} runs folded"
            + (f"; last run {summary['lastRunId']}" + (f" ({state})" if state else "")
               if summary.get("lastRunId") else "") + "]")


def _how(r: dict[str, Any]) -> str:
    """Why a walk's step is there: what stated its edge (docs/graph-model.md)."""
    subtypes = ", ".join(r["subtypes"] or [])
    basis = r.get("basis")
    if basis == "alias":
        return "the same table under another name (symlink)"
    if basis == "boundary":
        return (f"consumed or produced directly by job {r['job']}, a job of a hand-off "
                "(lineage facet)")
    if basis == "flow":
        return f"hand-off stated by job {r['job']}'s lineage facet" + (
            f" ({subtypes})" if subtypes else "")
    if basis == "explicit":
        how = ("lineage facet, dataset level: which columns is not stated" if r["coarse"]
               else f"lineage facet: {subtypes}")
    else:
        how = "coarse: the job's inputs x outputs" if r["coarse"] else f"column lineage: {subtypes}"
    return f"DERIVED_FROM via job {r['job']} ({how})" if r["job"] else f"DERIVED_FROM ({how})"


def column_step(r: dict[str, Any]) -> Impacted:
    """A column reached by a walk (a row of ``impact/downstream_columns`` or upstream): its last
    hop's strongest transformation, then the others between the same two columns."""
    if r.get("alias"):
        return Impacted("column", r["namespace"], f"{r['dataset']}.{r['column']}", r["distance"],
                        tuple(r["path"]), None, "the same column under another name (symlink)",
                        None)
    masked = ", masked" if r["masking"] else ""
    others = [f"{t['type']} {t['subtype']}" + (", masked" if t["masking"] else "")
              for t in (r.get("transformations") or [])[1:]]
    also = f"; also {'; '.join(dict.fromkeys(others))}" if others else ""
    return Impacted("column", r["namespace"], f"{r['dataset']}.{r['column']}", r["distance"],
                    tuple(r["path"]), r["job"],
                    f"DERIVED_FROM {r['type']} {r['subtype']}{masked} via job {r['job']}{also}"
                    + retired_note(r.get("retired")) + summary_note(r.get("summary"), r["lastSeen"]),
                    native_time(r["lastSeen"]))


def fold_aliases(found: list[Impacted], alias: list[bool], source: str
                 ) -> tuple[list[Impacted], tuple[str, ...]]:
    """One entry per table: a node a walk reached by a symlink hop last is another name of the
    node before it on its path, so it is folded into that node's ``aliases`` (or into the
    source's, returned second) instead of being listed again (docs/graph-model.md, "Symlinks")."""
    alias_of = {i.path[-1]: i.path[-2] for i, a in zip(found, alias, strict=True) if a}

    def root(key: str) -> str:
        seen = set()
        while key in alias_of and key not in seen:
            seen.add(key)
            key = alias_of[key]
        return key

    names: dict[str, list[str]] = {}
    for i, a in zip(found, alias, strict=True):
        if a:
            names.setdefault(root(i.path[-1]), []).append(f"{i.namespace}:{i.name}")
    kept = [replace(i, aliases=tuple(names.get(i.path[-1], ())))
            for i, a in zip(found, alias, strict=True) if not a]
    return kept, tuple(names.get(source, ()))


def merge_names(found: list[Impacted], source: str, source_aliases: tuple[str, ...],
                rows: list[dict[str, Any]]) -> tuple[list[Impacted], tuple[str, ...]]:
    """After ``fold_aliases``: a table (or a column) the walk reached under two of its names by
    separate lineage paths (Spark's path through one job, dbt's view through another) is listed
    once, under the name reached first (``found`` is nearest first), the other names in its
    ``aliases``; a name of the source itself is folded into the source's aliases (returned
    second). ``rows`` are the walk's, each with the ``otherNames`` of what it reached;
    ``source`` is ``namespace:name`` (a column's name: ``dataset.column``)."""
    other = {f"{r['namespace']}:{r['name'] if 'name' in r else r['dataset'] + '.' + r['column']}":
             set(r["otherNames"]) for r in rows if r["otherNames"]}
    if not other:
        return found, source_aliases
    taken: dict[str, int] = {}  # a name -> the index of the entry listing its table
    kept: list[Impacted] = []
    extra = list(source_aliases)
    for i in found:
        key = f"{i.namespace}:{i.name}"
        if i.kind not in ("dataset", "column"):
            kept.append(i)
        elif key in taken:
            keeper = kept[taken[key]]
            kept[taken[key]] = replace(keeper, aliases=tuple(dict.fromkeys(
                (*keeper.aliases, key, *i.aliases))))
        elif source in other.get(key, ()):
            extra += [key, *i.aliases]
        else:
            for name in (key, *other.get(key, ())):
                taken.setdefault(name, len(kept))
            kept.append(i)
    return kept, tuple(dict.fromkeys(extra))


def native_time(value: Any) -> datetime | None:
    """A time from the graph as a Python one: ISO text (what the walks return, ``toString``: the
    driver builds each of its DateTime values in Python, a good part of a hub's answer) or Neo4j's
    DateTime; None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        return datetime.fromisoformat(value)
    return cast(datetime, value.to_native())

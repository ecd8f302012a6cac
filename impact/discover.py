"""Finding things by name: list datasets and jobs (with a glob), search by text, and the closest
names to one that is not in the graph ("did you mean")."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from graph.db import Graph
from graph.errors import NotFound

KINDS = ("dataset", "job")


@dataclass(frozen=True)
class Found:
    kind: str
    namespace: str
    name: str
    aliases: tuple[str, ...] = ()  # a dataset's other names (symlinks)


def glob_regex(pattern: str) -> str:
    """A shell glob (``*``, ``?``) as a whole-name, any-case regular expression Neo4j accepts."""
    parts = (".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return "(?i)" + "".join(parts)


def listing(graph: Graph, kind: str, pattern: str | None = None, limit: int = 1000,
            fold: bool = True) -> list[Found]:
    """Datasets or jobs, by namespace and name, those matching the glob ``pattern`` if given;
    ``fold``: a table once, under the name that carries its symlinks, with its other names."""
    rows = graph.read("lookup/names", kind=kind, limit=limit,
                      pattern=glob_regex(pattern) if pattern else None)
    # a table is listed once: a name only a symlink gives is left out when the name carrying the
    # symlink is listed too (it shows the other names)
    listed = {f"{r['namespace']}:{r['name']}" for r in rows}
    return [Found(kind, r["namespace"], r["name"], tuple(r["aliases"])) for r in rows
            if not (fold and r["alias"] and any(a in listed for a in r["aliases"]))]


def search(graph: Graph, text: str, kind: str | None = None, limit: int = 20) -> list[Found]:
    """Datasets and jobs whose name or namespace contains ``text``, exact and suffix hits first."""
    rows = graph.read("lookup/search", text=text, kind=kind, limit=limit)
    return [Found(r["kind"], r["namespace"], r["name"]) for r in rows]


# the words of a name as the index's analyzer ('simple') splits it: runs of letters, so that no
# other character of the name reaches Lucene's query syntax
_WORDS = re.compile(r"[a-z]+")
# characters Lucene's query syntax gives a meaning to (escaped in a whole name)
_LUCENE = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/\s])')


def closest(graph: Graph, e: NotFound, limit: int = 5) -> list[Found]:
    """What an unknown dataset, job or column was probably meant to be: for a column, the
    columns of its dataset named most like it (or, when the dataset is unknown too, the datasets
    named like that); for a dataset or a job, :func:`did_you_mean`."""
    if e.kind == "column" and e.dataset is not None and e.name is not None:
        ns, dataset = e.dataset
        names = [r["name"] for r in graph.read("lookup/dataset_columns", namespace=ns,
                                               name=dataset)]
        if not names:
            return did_you_mean(graph, "dataset", dataset, limit)
        by_lower = {n.lower(): n for n in names}
        close = difflib.get_close_matches(e.name.lower(), list(by_lower), n=limit, cutoff=0.6)
        return [Found("column", ns, f"{dataset}.{by_lower[c]}") for c in close]
    if e.kind in KINDS and e.name is not None:
        return did_you_mean(graph, e.kind, e.name, limit)
    return []


def did_you_mean(graph: Graph, kind: str, name: str, limit: int = 5) -> list[Found]:
    """The datasets or jobs (any namespace) whose names are closest to ``name``: the same name
    in another namespace first, then names that differ by a few characters. Candidates come from
    the full-text indexes (the whole name within two edits, or a word of it), then are ranked
    here."""
    if kind not in KINDS:
        return []
    words = _WORDS.findall(name.lower())[:16]
    candidates = graph.read(
        "lookup/similar_names", kind=kind, limit=100,
        whole=_LUCENE.sub(r"\\\1", name) + "~2" if len(name) <= 200 else None,
        words=" ".join(f"{w}~" if len(w) > 2 else w for w in words) or None)
    by_name: dict[str, list[Found]] = {}
    for r in candidates:
        by_name.setdefault(r["name"].lower(), []).append(Found(kind, r["namespace"], r["name"]))
    close = difflib.get_close_matches(name.lower(), list(by_name), n=limit, cutoff=0.6)
    return [f for n in close for f in by_name[n]][:limit]

"""Redaction that keeps an answer's shape (docs/graph-model.md, "Access"): a node the caller may not
see stays in the answer, at its place and distance, with its names replaced by opaque ids, its
facets and descriptions removed, and whom to ask; nothing is dropped, so counts and paths hold.

A node is recognised in any answer by its keys: ``namespace`` with ``name``, ``dataset`` or
``job`` (a dataset or job: the questions' nodes, Marquez's datasets, jobs and ids, events' inputs
and outputs), ``namespace`` with ``dataset`` and ``column`` or ``field`` (a column), a namespace's
own object, a schema field. Every other string, and the keys of maps keyed by column name, goes
through the hidden names' scan (``api.access.hidden``). Search is the exception: a hidden node is
not found by searching (``drop_hidden_results``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import orjson

from api.access.hidden import PREFIX, Hidden

NAME_KEYS = frozenset({"name", "namespace", "dataset", "job", "column", "field", "physicalName",
                       "sourceName", "datasetName", "jobName", "jobNamespace", "simpleName",
                       "displayName", "parentJobName", "qualifiedName", "sourceNamespace"})
"""In a hidden node: names, its own (and its parts') replaced by their opaque ids, another node's
(the job beside a dataset) kept unless it is hidden too."""
IDENTITY_KEYS = frozenset({"namespace", "name", "dataset", "column", "field", "physicalName",
                           "datasetName", "simpleName", "displayName", "qualifiedName"})
ID_KEYS = frozenset({"id", "nodeId", "origin", "destination", "path", "uri"})
"""In a hidden node: ids made of names (``dataset:NS:NAME``), their names replaced."""
KEPT_KEYS = frozenset({"type", "kind", "state", "status", "label", "depth", "distance", "hops",
                       "eventType", "runId", "version", "fieldType", "transformationType",
                       "subtype", "lifecycleState", "severity", "ask", "redacted", "owner",
                       "owners", "ownerName"})
"""In a hidden node: what is said of it without naming it (kind, distance, state, times), and its
owners: whom to ask about it."""
FACET_KEYS = frozenset({"facets", "inputFacets", "outputFacets", "jobFacets", "runFacets"})
RUN_OF = ("job", "jobVersion")
"""The keys by which a run or an event names its job."""
COLUMN_MAPS = frozenset({"fields", "columnMetrics"})
"""Maps keyed by column name (a columnLineage facet's ``fields``, metrics per column)."""
_FIELD_KEYS = frozenset({"name", "type", "description", "fields", "tags"})
REDACTED = "redacted"


@dataclass
class Redaction:
    """What redacting one answer did: hidden nodes by kind, names replaced in text."""

    nodes: dict[str, int] = field(default_factory=dict)
    names: int = 0
    asks: set[str] = field(default_factory=set)

    @property
    def count(self) -> int:
        return sum(self.nodes.values()) + self.names


def redact(value: Any, hidden: Hidden, keys: frozenset[str] = frozenset(),
           current: bool = False) -> tuple[Any, Redaction]:
    """``value`` (a decoded JSON answer) as the grant of ``hidden`` may see it; ``keys``: the
    property names of the API's answers, which name no node (every other key may: an answer's
    counts by namespace, a map keyed by column). ``current``: nothing was loaded since the hidden
    names were read, so that an object of a list whose JSON holds none of them is visible whole
    and kept as it is, unwalked (a node of a hidden namespace loaded since would hold none)."""
    done = Redaction()
    return _Walk(hidden, done, keys, current).visible(value, None), done


def redact_text(text: str, hidden: Hidden) -> tuple[str, Redaction]:
    """A text answer (CSV, Markdown, HTML, Prometheus' format) with hidden names replaced."""
    done = Redaction()
    out, done.names = hidden.scan(text)
    return out, done


def drop_hidden_results(value: Any, hidden: Hidden) -> Any:
    """Marquez's search answer without the nodes the grant may not see: searching for a hidden
    name finds nothing."""
    if not isinstance(value, dict) or not isinstance(value.get("results"), list):
        return value
    kept = [r for r in value["results"] if not (
        isinstance(r, dict) and isinstance(r.get("namespace"), str)
        and isinstance(r.get("name"), str) and hidden.node_hidden(r["namespace"], r["name"]))]
    return {**value, "results": kept, "totalCount": len(kept)}


def without_hidden(value: Any) -> Any:
    """An error's body without the hidden nodes it lists (a "did you mean" of hidden names, as
    nodes or in its message), so that an error says no more of what is hidden than a missing
    name's would."""
    if isinstance(value, dict):
        return {k: without_hidden(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_hidden(v) for v in value
                if not (isinstance(v, dict) and v.get("redacted") is True)]
    if isinstance(value, str):
        return _SUGGESTED.sub(_visible_suggestions, value)
    return value


_SUGGESTED = re.compile(r"; did you mean: ([^;]*)")


def _visible_suggestions(found: re.Match[str]) -> str:
    kept = [name for name in found.group(1).split(", ") if PREFIX not in name]
    return "; did you mean: " + ", ".join(kept) if kept else ""


class _Walk:
    def __init__(self, hidden: Hidden, done: Redaction, keys: frozenset[str],
                 current: bool = False) -> None:
        self.hidden, self.done, self.keys, self.current = hidden, done, keys, current

    def _clean(self, value: Any) -> bool:
        """Whether ``value``, an object or a list of a list, names nothing hidden (its JSON holds
        no hidden name): then the walk would change nothing in it."""
        return self.current and isinstance(value, (dict, list)) and \
            not self.hidden.occurs(orjson.dumps(value).decode())

    def text(self, value: str) -> str:
        out, n = self.hidden.scan(value)
        self.done.names += n
        return out

    def visible(self, value: Any, key: str | None) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [v if self._clean(v) else self.visible(v, None) for v in value]
        if not isinstance(value, dict):
            return value
        kind = self._hidden_kind(value)
        if kind is not None:
            return self._hide(value, kind)
        names = self._own_names(value)
        out: dict[str, Any] = {}
        for k, v in value.items():
            shown = self.text(k) if key in COLUMN_MAPS or k not in self.keys else k
            out[shown] = v if (k in names and isinstance(v, str)) else self.visible(v, k)
        if any(isinstance(out.get(k), dict) and out[k].get("redacted") is True for k in RUN_OF):
            _forget_facets(out)  # a run (or an event) of a hidden job says nothing of it
        return out

    def _own_names(self, value: dict[str, Any]) -> frozenset[str]:
        """The keys of a visible node's own names: kept as they are, even where a hidden node
        elsewhere has the same name."""
        if isinstance(value.get("namespace"), str) and any(
                isinstance(value.get(k), str) for k in ("name", "dataset", "job")):
            return frozenset(k for k in ("namespace", "name", "dataset", "job") if k in value)
        return frozenset()

    def _hidden_kind(self, value: dict[str, Any]) -> str | None:
        """The kind of node ``value`` is when the grant may not see it, else None."""
        hidden = self.hidden
        namespace = value.get("namespace")
        if isinstance(namespace, str):
            dataset = value.get("dataset")
            column = value.get("column", value.get("field"))
            if isinstance(dataset, str) and isinstance(column, str):
                return "column" if hidden.column_hidden(namespace, dataset, column) else None
            for key in ("name", "dataset", "job"):
                name = value.get(key)
                if isinstance(name, str):
                    if key == "name" and _qualified_column_hidden(hidden, namespace, name):
                        return "column"
                    if not hidden.node_hidden(namespace, name):
                        return None
                    return _kind_of(value, "job" if key == "job" else "dataset")
            return "namespace" if hidden.namespace_hidden(namespace) else None
        name = value.get("name")
        if isinstance(name, str):
            if name in hidden.namespaces and "ownerName" in value:
                return "namespace"
            if name in hidden.column_names and set(value) <= _FIELD_KEYS:
                return "column"
        return None

    def _hide(self, value: dict[str, Any], kind: str) -> dict[str, Any]:
        namespace = value.get("namespace")
        if not isinstance(namespace, str):
            namespace = value.get("name") if kind == "namespace" else None
        ask = self.hidden.ask(namespace) if isinstance(namespace, str) else self.hidden.ask("")
        self.done.nodes[kind] = self.done.nodes.get(kind, 0) + 1
        self.done.asks.add(ask)
        # its own names; a job named beside a dataset (the job that wrote it) is another node
        own = [v for k, v in value.items() if k in IDENTITY_KEYS and isinstance(v, str)]
        if kind == "job" and isinstance(value.get("job"), str):
            own.append(value["job"])
        out: dict[str, Any] = self._hidden_inside(value, own)
        out["redacted"] = True
        out["ask"] = ask
        return out

    def _hidden_inside(self, value: Any, own: list[str], key: str | None = None) -> Any:
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for k, v in value.items():
                shown = self.hidden.opaque(k) if key in COLUMN_MAPS else (
                    k if k in self.keys else self.text(k))
                if k in FACET_KEYS:
                    out[shown] = {} if isinstance(v, dict) else [] if isinstance(v, list) else None
                else:
                    out[shown] = self._hidden_value(k, v, own)
            return out
        if isinstance(value, list):  # a list's objects are not maps keyed by column
            return [self._hidden_inside(v, own, None if isinstance(v, dict) else key)
                    for v in value]
        return self._hidden_value(key, value, own)

    def _hidden_value(self, key: str | None, value: Any, own: list[str]) -> Any:
        if isinstance(value, (dict, list)):
            return self._hidden_inside(value, own, key)
        if not isinstance(value, str) or key is None:
            return value if not isinstance(value, str) else REDACTED
        if key in NAME_KEYS:
            if value in own or key in ("name", "namespace"):
                return self.hidden.opaque(value)
            return self.text(value)
        if key in ID_KEYS:
            out = self.text(value)
            for name in sorted(own, key=len, reverse=True):  # a name the scan has not met yet
                out = out.replace(name, self.hidden.opaque(name))
            return out
        if key in KEPT_KEYS or _is_time_key(key):
            return value
        return REDACTED


def _qualified_column_hidden(hidden: Hidden, namespace: str, name: str) -> bool:
    """Whether ``name`` is a hidden column written ``DATASET.COLUMN``."""
    if not hidden.columns:
        return False
    return any((namespace, name[:i], name[i + 1:]) in hidden.columns
               for i, ch in enumerate(name) if ch == ".")


def _kind_of(value: dict[str, Any], default: str) -> str:
    stated = value.get("kind", value.get("type"))
    if isinstance(stated, str) and stated.lower() in ("job", "dataset", "model", "column"):
        return stated.lower()
    return default


def _is_time_key(key: str) -> bool:
    return key.endswith(("Time", "At", "Seen", "time", "Since", "Until")) or key in (
        "time", "since", "until", "date")


def _forget_facets(value: dict[str, Any]) -> None:
    for k in FACET_KEYS & value.keys():
        value[k] = {}
    run = value.get("run")
    if isinstance(run, dict):
        value["run"] = {k: ({} if k in FACET_KEYS else v) for k, v in run.items()}


def answer_keys(document: dict[str, Any]) -> frozenset[str]:
    """The property names of every schema in an OpenAPI document."""
    found: set[str] = set()
    stack: list[Any] = [document.get("components", {}).get("schemas", {})]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value.get("properties"), dict):
                found.update(value["properties"])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return frozenset(found)

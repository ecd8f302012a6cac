"""What one grant may not see in the graph now, and the opaque ids that stand for it.

Read from the graph (``cypher/access/names.cypher``) and kept until the worker has loaded more and
``REFRESH_S`` has passed; a namespace is judged by the grant's patterns at every use, so a node of
a hidden namespace loaded a moment ago is hidden at once. The names are also found in free text
(explanations, SQL, ids like ``dataset:NS:NAME``, Prometheus labels, HTML) by one Aho-Corasick pass
over the text: a match counts where it is bounded by characters a name does not continue with.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ahocorasick

from api.render.markup import md
from graph.db import Graph
from graph.private import private_file
from graph.settings import Settings
from impact.access.grants import Access, Grant

REFRESH_S = 2.0
"""The least time between two reads of the hidden names (each a pass over datasets and jobs)."""
PREFIX = "hidden-"
NOBODY = "the lineage administrators"
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$-")


def opaque_salt(settings: Settings) -> bytes:
    """The installation's secret for opaque ids (``access-salt`` in the state directory), so that
    an id cannot be matched against a guessed name."""
    path = settings.state_dir / "access-salt"
    if not path.is_file() or not path.read_text(encoding="utf-8").strip():
        private_file(path).write_text(secrets.token_hex(32) + "\n", encoding="utf-8")
    return path.read_text(encoding="utf-8").strip().encode("utf-8")


@dataclass
class Hidden:
    """The namespaces, nodes and columns ``grant`` may not see, and whom to ask about them."""

    grant: Grant
    access: Access
    salt: bytes
    nodes: frozenset[tuple[str, str]] = frozenset()  # (namespace, name): datasets and jobs
    columns: frozenset[tuple[str, str, str]] = frozenset()  # (namespace, dataset, column)
    column_names: frozenset[str] = frozenset()
    namespaces: frozenset[str] = frozenset()
    position: int = -1  # the worker's position in the log when the names were read
    _automaton: Any = field(default=None, repr=False)
    _holding: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    """A hidden column's bare name: the datasets in which it is hidden."""
    _opaque: dict[str, str] = field(default_factory=dict, repr=False)

    def namespace_hidden(self, namespace: str) -> bool:
        return not self.grant.reads(namespace)

    def node_hidden(self, namespace: str, name: str) -> bool:
        return self.namespace_hidden(namespace) or (namespace, name) in self.nodes

    def column_hidden(self, namespace: str, dataset: str, column: str) -> bool:
        return self.node_hidden(namespace, dataset) or (namespace, dataset, column) in self.columns

    def ask(self, namespace: str) -> str:
        """Whom a caller asks about a hidden node of ``namespace``."""
        return self.access.contact_for(namespace) or NOBODY

    def opaque(self, value: str) -> str:
        """The stable opaque id of a hidden name (the same for the same name, in every answer)."""
        found = self._opaque.get(value)
        if found is None:
            digest = hmac.new(self.salt, value.encode("utf-8"), hashlib.sha256).hexdigest()
            found = self._opaque[value] = PREFIX + digest[:12]
        return found

    def occurs(self, text: str) -> bool:
        """Whether a hidden name is in ``text`` (one pass, stopping at the first); a hidden
        column's bare name counts wherever it is."""
        return next(self._matches(text), None) is not None

    def may_name(self, *texts: str) -> bool:
        """Whether ``texts``, a whole answer and the request it answers, may name something
        hidden: a hidden name, or a hidden column's bare name with a dataset that holds it
        named too (a column is only ever said of a dataset the answer or its request names;
        ``occurs`` is what a part of an answer, whose dataset may be said around it, needs)."""
        columns: set[str] = set()
        datasets: set[str] = set()
        for text in texts:
            for _, _, (_, hidden, column, dataset) in self._bounded(text):
                if hidden:
                    return True
                if column is not None:
                    columns.add(column)
                if dataset is not None:
                    datasets.add(dataset)
        return any(not datasets.isdisjoint(self._holding[c]) for c in columns)

    def _matches(self, text: str) -> Iterator[tuple[int, int]]:
        """Where hidden names and hidden columns' bare names are in ``text``."""
        for start, end, (_, hidden, column, _) in self._bounded(text):
            if hidden or column is not None:
                yield start, end

    def _bounded(self, text: str) -> Iterator[tuple[int, int, tuple[int, bool, str | None,
                                                                      str | None]]]:
        if self._automaton is None or not text:
            return
        for end, found in self._automaton.iter(text):
            start = end - found[0] + 1
            if (start > 0 and text[start - 1] in _NAME_CHARS) or (
                    end + 1 < len(text) and text[end + 1] in _NAME_CHARS):
                continue
            yield start, end + 1, found

    def scan(self, text: str) -> tuple[str, int]:
        """``text`` with every hidden name in it replaced by its opaque id, and how many were."""
        found = list(self._matches(text))
        if not found:
            return text, 0
        # the longest match wins where matches overlap, left to right
        found.sort(key=lambda m: (m[0], m[0] - m[1]))
        out, at, count = [], 0, 0
        for start, end in found:
            if start < at:
                continue
            out.append(text[at:start])
            out.append(self.opaque(text[start:end]))
            at, count = end, count + 1
        out.append(text[at:])
        return "".join(out), count


def hidden_from_rows(grant: Grant, access: Access, salt: bytes,
                     rows: Iterable[dict[str, Any]], position: int = -1) -> Hidden:
    """The hidden set of ``grant`` from the rows of ``cypher/access/names.cypher``."""
    nodes: set[tuple[str, str]] = set()
    columns: set[tuple[str, str, str]] = set()
    namespaces: set[str] = set()
    for row in rows:
        namespace, name = row["namespace"], row["name"]
        if not grant.reads(namespace):
            namespaces.add(namespace)
        if row["kind"] == "namespace":
            continue
        if not grant.sees(namespace, row["tags"] or ()):
            nodes.add((namespace, name))
        for entry in row["fieldTags"] or ():
            column, _, tag = entry.partition("\u001f")
            if column and not grant.sees(namespace, [tag]):
                columns.add((namespace, name, column))
    hidden = Hidden(grant, access, salt, frozenset(nodes), frozenset(columns),
                    frozenset(c for _, _, c in columns), frozenset(namespaces), position)
    if namespaces or nodes or columns:
        # a word's value: its length, whether it is a hidden name, the hidden column whose bare
        # name it is, the dataset (holding a hidden column) whose name it is (``may_name``)
        automaton = ahocorasick.Automaton()

        def add(word: str, hidden_name: bool = False, column: str | None = None,
                dataset: str | None = None) -> None:
            _, was_hidden, was_column, was_dataset = automaton.get(word, (0, False, None, None))
            automaton.add_word(word, (len(word), was_hidden or hidden_name,
                                      was_column or column, was_dataset or dataset))

        for s in namespaces | {n for _, n in nodes}:
            for written in _written(s):
                add(written, hidden_name=True)
                if written != s:
                    hidden._opaque[written] = hidden.opaque(s)
        holding: dict[str, set[str]] = {}
        for _, dataset, column in columns:
            holding.setdefault(column, set()).add(dataset)
            for written in _written(column):
                add(written, column=column)
                if written != column:
                    hidden._opaque[written] = hidden.opaque(column)
            for written in _written(dataset):
                add(written, dataset=dataset)
            qualified = f"{dataset}.{column}"  # a column as explanations name it: DATASET.COLUMN
            for written in _written(qualified):
                add(written, hidden_name=True)
                hidden._opaque[written] = f"{dataset}.{hidden.opaque(column)}"
        automaton.make_automaton()
        hidden._automaton = automaton
        hidden._holding = {c: frozenset(ds) for c, ds in holding.items()}
    return hidden


def _written(name: str) -> set[str]:
    """``name`` as the answers write it: as it is, in Markdown, in HTML, and inside a JSON string
    (a quote, a backslash or a control character escaped; non-ASCII as it is or as ``\\u``)."""
    return {name, md(name), html.escape(name), json.dumps(name, ensure_ascii=False)[1:-1],
            json.dumps(name)[1:-1]}


class HiddenCache:
    """Each restricted grant's hidden set, read again once the graph has moved on."""

    def __init__(self, access: Access, salt: Callable[[], bytes], graph: Callable[[], Graph],
                 position: Callable[[], int]) -> None:
        self.access = access
        self._salt, self._graph, self._position = salt, graph, position
        self._lock = threading.Lock()
        self._rows: tuple[int, float, list[dict[str, Any]]] | None = None
        self._hidden: dict[str, tuple[int, Hidden]] = {}
        self._generation = 0

    def kept(self, grant: Grant) -> Hidden | None:
        """The grant's hidden set when it needs no read of the graph, else None (then ``of``)."""
        with self._lock:
            found = self._hidden.get(grant.name)
            rows = self._rows
            if found is None or rows is None or found[0] != self._generation or \
                    time.monotonic() - rows[1] >= REFRESH_S:
                return None
            return found[1]

    def current(self, hidden: Hidden) -> bool:
        """Whether the graph holds nothing loaded since ``hidden`` was read."""
        return self._position() == hidden.position

    def of(self, grant: Grant) -> Hidden:
        with self._lock:
            generation = self._refresh()
            kept = self._hidden.get(grant.name)
            if kept is not None and kept[0] == generation:
                return kept[1]
            assert self._rows is not None
            hidden = hidden_from_rows(grant, self.access, self._salt(), self._rows[2],
                                      self._rows[0])
            self._hidden[grant.name] = (generation, hidden)
            return hidden

    def _refresh(self) -> int:
        now = time.monotonic()
        if self._rows is not None and now - self._rows[1] < REFRESH_S:
            return self._generation
        position = self._position()
        if self._rows is None or position != self._rows[0]:
            self._rows = (position, now, self._graph().read("access/names"))
            self._generation += 1
        else:
            self._rows = (position, now, self._rows[2])
        return self._generation

"""The Cypher library: every query lineage-graph runs is a named ``.cypher`` file in ``cypher/``.

This module is the only place a string becomes a query. A file starts with a header of ``//``
comment lines::

    // Answers: which columns derive from a column, up to a depth.
    // Param $ns: the dataset namespace
    // Param $depth: how many DERIVED_FROM hops to follow
    // Returns: one row per column reached
    // :param ns => 'food_delivery'
    // :param depth => 5

Every ``$name`` the body uses must be declared by a ``// Param $name:`` line and the other way
round; the ``:param`` lines are the example that makes the file runnable as-is in Neo4j Browser.
A file that unwinds ``$rows`` names the fields of a row as ``VAR.field``, VAR the name it unwinds
them as (or a ``VAR {.*, …} AS row`` projection of it): :attr:`NamedQuery.row_fields` lists them,
for the writer of the rows to check against the fields it declares (ingest.rows).
A file may hold several statements separated by ``;`` at the end of a line (schema files do).
The files are found inside the installed ``cypher`` package, never from the working directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable

from graph.errors import QueryLibraryError

_PARAM_DECL = re.compile(r"^//\s*Param\s+\$(\w+)\s*:")
_EXAMPLE = re.compile(r"^//\s*:param\s+(\w+)\s*=>\s*(.+)$")
_PARAM_USE = re.compile(r"\$(\w+)")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_ROWS_AS = re.compile(r"\bUNWIND\s+\$rows\s+AS\s+(\w+)", re.IGNORECASE)
_PROJECTED_AS = re.compile(r"\b(\w+)\s*\{\s*\.\*[^}]*\}\s+AS\s+(\w+)", re.IGNORECASE)


@dataclass(frozen=True)
class NamedQuery:
    """One file of the library: its name (path without suffix), statements and declared params."""

    name: str
    statements: tuple[str, ...]
    params: frozenset[str]
    examples: dict[str, str]
    answers: str
    row_fields: dict[str, int]
    """The fields of ``$rows`` the body reads, each with the line that first names it."""

    @property
    def text(self) -> str:
        """The single statement of a one-statement file."""
        if len(self.statements) != 1:
            raise QueryLibraryError(self.name, 1, "holds several statements; use .statements")
        return self.statements[0]


def parse_query(name: str, source: str) -> NamedQuery:
    """Parse one file's text; raises QueryLibraryError with file:line on any mismatch."""
    lines = source.splitlines()
    declared: dict[str, int] = {}
    examples: dict[str, str] = {}
    answers = ""
    body_lines: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("//"):
            if m := _PARAM_DECL.match(stripped):
                declared[m.group(1)] = number
            elif m := _EXAMPLE.match(stripped):
                examples[m.group(1)] = m.group(2).strip()
            elif stripped.lower().startswith("// answers:"):
                answers = stripped.split(":", 1)[1].strip()
            continue
        body_lines.append((number, line))
    if not answers:
        raise QueryLibraryError(name, 1, "header lacks an '// Answers:' line")
    used: dict[str, int] = {}
    for number, line in body_lines:
        for m in _PARAM_USE.finditer(_STRING.sub("''", line)):
            used.setdefault(m.group(1), number)
    for param, number in used.items():
        if param not in declared:
            raise QueryLibraryError(name, number, f"uses ${param} but the header does not declare it")
    for param, number in declared.items():
        if param not in used:
            raise QueryLibraryError(name, number, f"declares ${param} but the query never uses it")
    for param in declared:
        if param not in examples:
            raise QueryLibraryError(name, declared[param], f"no ':param {param} => …' example")
    statements = tuple(s.strip() for s in _split(body_lines) if s.strip())
    if not statements:
        raise QueryLibraryError(name, 1, "holds no statement")
    return NamedQuery(name, statements, frozenset(declared), examples, answers,
                      _row_fields(body_lines))


def _row_fields(body_lines: list[tuple[int, str]]) -> dict[str, int]:
    """The ``VAR.field`` names of the variables ``$rows`` is unwound as (and their projections)."""
    text = "\n".join(_STRING.sub("''", line) for _, line in body_lines)
    names = set(_ROWS_AS.findall(text))
    names |= {alias for source, alias in _PROJECTED_AS.findall(text) if source in names}
    if not names:
        return {}
    use = re.compile(r"\b(?:" + "|".join(sorted(names)) + r")\.(\w+)")
    found: dict[str, int] = {}
    for number, line in body_lines:
        for m in use.finditer(_STRING.sub("''", line)):
            found.setdefault(m.group(1), number)
    return found


def _split(body_lines: list[tuple[int, str]]) -> list[str]:
    statements: list[str] = []
    current: list[str] = []
    for _, line in body_lines:
        if line.rstrip().endswith(";"):
            current.append(line.rstrip()[:-1])
            statements.append("\n".join(current))
            current = []
        else:
            current.append(line)
    statements.append("\n".join(current))
    return statements


def _walk(folder: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.name.startswith("__"):
            found.extend(_walk(entry, f"{prefix}{entry.name}/"))
        elif entry.name.endswith(".cypher"):
            found.append((prefix + entry.name[: -len(".cypher")], entry))
    return found


@lru_cache(maxsize=1)
def library() -> dict[str, NamedQuery]:
    """Every named query of the installed ``cypher`` package, parsed and checked once."""
    root = resources.files("cypher")
    return {
        name: parse_query(name, entry.read_text(encoding="utf-8"))
        for name, entry in sorted(_walk(root))
    }


def query(name: str) -> NamedQuery:
    """The named query ``name`` (e.g. ``"ingest/runs"``); KeyError lists what exists."""
    lib = library()
    try:
        return lib[name]
    except KeyError:
        raise KeyError(f"no query {name!r}; known: {', '.join(sorted(lib))}") from None

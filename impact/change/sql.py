"""Parsing SQL that callers send (a change to check, a dbt model's compiled code) with
openlineage-sql, where a crash or a runaway cannot take the caller with it.

openlineage-sql is a native library: a deeply nested expression overflows its stack and kills
the process, and some statements take minutes and gigabytes to parse. So the parse runs in a
child Python process with a memory limit and a time limit, bounded in size first, a few at a
time; a crash, a timeout or an exhausted memory becomes :class:`SqlError` with the reason, and
the caller (the API, the CLI) answers 422 / exit 2 instead of dying.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

from graph.errors import LineageError

MAX_SQL_BYTES = 256 * 1024
"""The most SQL text one parse takes (a dbt model's compiled code is far smaller)."""
TIME_LIMIT = 10.0
"""Seconds one child may parse."""
MEMORY_LIMIT = 1024 * 1024 * 1024
"""Bytes of address space one child may use."""
_AT_ONCE = threading.BoundedSemaphore(2)  # children parsing at the same time, per process

# The child: limits first, then the parser; reads [[statements, dialect], ...] on stdin and
# writes one answer per entry (the tables read and each output column's input columns).
_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (%(memory)d, %(memory)d))
import openlineage_sql
out = []
for statements, dialect in json.load(sys.stdin):
    try:
        p = openlineage_sql.parse(statements, dialect=dialect)
    except Exception as e:
        out.append({"error": f"{type(e).__name__}: {e}"[:500]})
        continue
    if p is None:
        out.append(None)
        continue
    out.append({"tables": [t.qualified_name for t in p.in_tables],
                "columns": {c.descendant.name.lower(): sorted(
                    f"{m.origin.qualified_name}.{m.name}".lower() for m in c.lineage if m.origin)
                    for c in p.column_lineage}})
json.dump(out, sys.stdout)
"""


class SqlError(LineageError):
    """SQL that could not be parsed here: too large, crashed the parser, or ran past its limits."""


@dataclass(frozen=True)
class ParsedSql:
    tables: tuple[str, ...]
    """Qualified names of the tables the SQL reads."""
    columns: dict[str, frozenset[str]]
    """Each output column (lower case) and the ``table.column`` it comes from (lower case)."""


def parse_sql(statements: list[str], dialect: str = "generic") -> ParsedSql | None:
    """One parse (None: the parser found no statement it understands). Raises SqlError."""
    [found] = parse_each([(statements, dialect)])
    if isinstance(found, SqlError):
        raise found
    return found


def parse_each(items: list[tuple[list[str], str]]) -> list[ParsedSql | None | SqlError]:
    """Many parses in one child; when that child dies, each is parsed alone so that only the
    SQL that kills the parser gets the error."""
    sizes = [sum(len(s.encode()) for s in statements) for statements, _ in items]
    todo = [item for item, size in zip(items, sizes, strict=True) if size <= MAX_SQL_BYTES]
    try:
        parsed = _run(todo) if todo else []
    except SqlError as e:
        parsed = [e] if len(todo) == 1 else [_one(item) for item in todo]
    found = iter(parsed)
    return [next(found) if size <= MAX_SQL_BYTES else
            SqlError(f"the SQL is {size} bytes, over the limit of {MAX_SQL_BYTES} bytes")
            for size in sizes]


def _one(item: tuple[list[str], str]) -> ParsedSql | None | SqlError:
    try:
        return _run([item])[0]
    except SqlError as e:
        return e


def _run(items: list[tuple[list[str], str]]) -> list[ParsedSql | None | SqlError]:
    with _AT_ONCE:
        try:
            done = subprocess.run([sys.executable, "-c", _CHILD % {"memory": MEMORY_LIMIT}],
                                  input=json.dumps(items), capture_output=True, text=True,
                                  timeout=TIME_LIMIT, check=False)
        except subprocess.TimeoutExpired as e:
            raise SqlError(f"parsing the SQL took longer than {TIME_LIMIT:g} s") from e
    if done.returncode != 0:
        why = ("it crashed the SQL parser (an expression nested too deeply?)" if done.returncode < 0
               else "the SQL parser ran out of memory" if "MemoryError" in done.stderr
               else f"the SQL parser failed: {done.stderr.strip()[-300:]}")
        raise SqlError(why)
    return [_answer(a) for a in json.loads(done.stdout)]


def _answer(a: dict[str, Any] | None) -> ParsedSql | None | SqlError:
    if a is None:
        return None
    if "error" in a:
        return SqlError(f"the SQL parser refused it: {a['error']}")
    return ParsedSql(tuple(a["tables"]), {k: frozenset(v) for k, v in a["columns"].items()})

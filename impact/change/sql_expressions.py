"""What a SQL model does to each of its output columns, read from its compiled SQL: copies it,
transforms it, masks it (a hash or masking function), or aggregates it. For the rehearsal of a
dbt branch against the policy rules (impact.policy_rehearsal): dbt-ol reports column lineage
without transformations, and a rule about masking needs to know which.

The reading is by the text of the select lists, not by a full parser (openlineage-sql gives a
column's inputs, not its expression): every select item that defines the column (``expr AS
col``, in the final select or in a CTE or subquery) is looked at, and a bare column that names
another column is followed to that column's definitions. The column is

* masked when any definition applies a masking function (:data:`MASKING`);
* aggregated when any applies an aggregate function (:data:`AGGREGATES`);
* transformed when any definition is an expression other than a bare column;
* an identity copy when every definition is a bare column, or none defines it (``select col``,
  ``select *``).

The same reading as OpenLineage's Spark integration, which marks hashes masking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MASKING = frozenset({
    "md5", "sha", "sha1", "sha2", "sha224", "sha256", "sha384", "sha512", "hash", "xxhash64",
    "xxhash32", "murmur3", "farm_fingerprint", "hmac", "crc32", "aes_encrypt", "encrypt",
    "hashtext", "digest", "standard_hash", "ora_hash"})
"""Functions whose result masks their argument; also any whose name starts with ``mask``,
``redact``, ``anonymi`` or ``pseudonymi``."""
_MASKING_PREFIXES = ("mask", "redact", "anonymi", "pseudonymi")
AGGREGATES = frozenset({
    "count", "sum", "avg", "mean", "min", "max", "median", "stddev", "stddev_pop",
    "stddev_samp", "variance", "var_pop", "var_samp", "approx_count_distinct", "count_if",
    "listagg", "string_agg", "array_agg", "group_concat", "any_value", "first", "last",
    "percentile_cont", "percentile_disc", "bool_and", "bool_or"})
MAX_FOLLOW = 8
"""Bare columns followed to their definitions, at most, for one column."""

_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r"'(?:[^']|'')*'")
_IDENT = r'(?:"[^"]+"|`[^`]+`|\[[^\]]+\]|[A-Za-z_][A-Za-z0-9_$]*)'
_BARE = re.compile(rf"^{_IDENT}(?:\s*\.\s*{_IDENT})*$")
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_KEYWORD = re.compile(r"\b(?:select|distinct|all)\b", re.I)


@dataclass(frozen=True)
class Transformation:
    type: str
    """DIRECT (the spec's type for a value derived from the input)."""
    subtype: str
    """IDENTITY, TRANSFORMATION or AGGREGATION."""
    masking: bool


IDENTITY = Transformation("DIRECT", "IDENTITY", False)


def transformation(sql: str, column: str) -> Transformation:
    """What ``sql`` does to make output ``column`` (see the module's doc)."""
    text = _STRINGS.sub("''", _COMMENTS.sub(" ", sql))
    kinds: set[str] = set()
    seen: set[str] = set()
    todo = [column]
    while todo and len(seen) < MAX_FOLLOW:
        name = todo.pop()
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        for expr in _definitions(text, name):
            if _BARE.match(expr):
                todo.append(_unquote(re.split(r"\s*\.\s*", expr)[-1]))
                continue
            calls = {c.lower() for c in _CALL.findall(expr)}
            if any(c in MASKING or c.startswith(_MASKING_PREFIXES) for c in calls):
                kinds.add("masked")
            elif calls & AGGREGATES:
                kinds.add("aggregated")
            else:
                kinds.add("transformed")
    if "masked" in kinds:
        return Transformation("DIRECT", "TRANSFORMATION", True)
    if "aggregated" in kinds:
        return Transformation("DIRECT", "AGGREGATION", False)
    if "transformed" in kinds:
        return Transformation("DIRECT", "TRANSFORMATION", False)
    return IDENTITY


def _definitions(text: str, column: str) -> list[str]:
    """The expressions of the select items ``expr AS column`` (or ``expr column``) in ``text``."""
    name = re.escape(column)
    found = []
    for m in re.finditer(rf'\bas\s+(?:"{name}"|`{name}`|\[{name}\]|{name})(?![A-Za-z0-9_$])',
                         text, re.I):
        expr = _item_before(text, m.start())
        if expr:
            found.append(expr)
    return found


def _item_before(text: str, end: int) -> str | None:
    """The select item that ends at ``end``: back to the comma, the opening parenthesis or the
    ``select`` (``distinct``) that starts it at its depth."""
    starts = {m.end() for m in _KEYWORD.finditer(text, 0, end)}
    depth = 0
    i = end
    while i > 0 and not (depth == 0 and i in starts):
        ch = text[i - 1]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            break
        i -= 1
    return text[i:end].strip() or None


def _unquote(name: str) -> str:
    return name.strip('"`[]')

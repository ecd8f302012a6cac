"""Names from events inside Markdown, Mermaid and CSV: shown as they are, never read as markup
or as a formula.

A dataset, job or column name is whatever a producer sent: a newline, a ``"``, ``<script>`` or
``%%{init}%%`` in it must not end a bullet, a table cell, a code span or a Mermaid label, nor
become an element or a statement of the diagram; ``=HYPERLINK(…)`` in it must not run when the
CSV evidence is opened in a spreadsheet. Every report that writes Markdown, Mermaid or CSV (the
policy report, the check's comment, a model's provenance, the GDPR and erasure CSVs) writes
names through these.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# inline, these start emphasis, code, links, table cells or strikethrough; '<' starts HTML (a '>'
# alone starts nothing mid-line, and a line of ours never starts with a name)
_MARKDOWN = re.compile(r"([\\`*_\[\]|~])")
_HTML = {"&": "&amp;", "<": "&lt;"}
# Mermaid reads #name; and #number; as entities inside quoted labels
# a spreadsheet reads a cell starting with one of these as a formula (OWASP, "CSV Injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_MERMAID = {'"': "#quot;", "<": "#lt;", ">": "#gt;", "|": "#124;", "`": "#96;", "%": "#37;",
            "&": "#38;", "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;"}


def one_line(text: object) -> str:
    """The text on one line: control characters (newlines among them) as spaces."""
    return _CONTROL.sub(" ", str(text))


def md(text: object) -> str:
    """Text for a line of Markdown (a bullet, a table cell, a heading), after the line's own
    start: one line, ``<`` and ``&`` as entities, what marks emphasis, code, links, cells and
    strikethrough backslash-escaped."""
    plain = "".join(_HTML.get(c, c) for c in one_line(text))
    return _MARKDOWN.sub(r"\\\1", plain)


def code(text: object) -> str:
    """An inline code span that holds the text whatever backticks it has (CommonMark: a fence
    longer than any run of backticks inside, padded when the text starts or ends with one)."""
    plain = one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", plain)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if plain.startswith("`") or plain.endswith("`") or longest else ""
    return f"{fence}{pad}{plain}{pad}{fence}"


def mermaid_label(text: object) -> str:
    """Text for a quoted Mermaid label (``n1["…"]``, ``-->|"…"|``): one line, and every
    character that could end the label or start a statement as a Mermaid entity."""
    return "".join(_MERMAID.get(c, c) for c in one_line(text))


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a string that a spreadsheet would read as a formula
    gets a leading ``'`` (which spreadsheets hide); numbers and booleans stay as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_text(header: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    """A CSV document of ``header`` and ``rows``, every cell through :func:`csv_cell`."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows([csv_cell(v) for v in row] for row in rows)
    return buf.getvalue()

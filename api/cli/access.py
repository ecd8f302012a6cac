"""The command line as a grant's caller (docs/access.md, "The command line"): with
``LINEAGE_TOKEN`` set to a token of the access file, the questions answer as the API answers that
token, by the same rules (docs/graph-model.md, "Access"):

* a hidden namespace, node or column given on the command line (``NS NAME [COLUMN]``, as every
  question takes them, options' values too) is swapped for a name no node has before the command
  reads it, so the answer is the one a missing name gets, and the error says the name back;
* what the command prints is redacted as the API redacts its answers: JSON node by node, text
  (tables, Markdown, CSV) name by name, printed unwrapped so that no name is split across lines;
  a "did you mean" lists no hidden name;
* the read goes to the audit log (``method`` ``CLI``, ``path`` the command).

The other commands (loading, replay, export, the services) are an administrator's: a restricted
grant's token is refused for them, since they read or write the graph whole.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass

from api.access.audit import AuditLog, Read
from api.access.hidden import Hidden, hidden_from_rows, opaque_salt
from api.access.redact import Redaction, redact, redact_text, without_hidden
from graph.errors import ConfigError
from graph.settings import Settings
from impact.access.grants import Grant, read_access

QUESTIONS = frozenset({
    "where", "check", "gate", "health", "ls", "search", "impact", "upstream", "show",
    "root-cause", "policy", "slo", "provenance", "rerun-plan", "changes", "erasure plan",
    "erasure status"})
"""The commands that answer a question (the first word, or the first two of ``erasure``)."""
UNWRAPPED = 100_000
"""The width a restricted answer is printed at: no table cell wraps a name."""


@dataclass(frozen=True)
class Caller:
    """Who runs the command: the grant of LINEAGE_TOKEN, and what it may not see."""

    grant: Grant
    hidden: Hidden | None  # None: the grant sees everything
    audit: AuditLog


_answering: Hidden | None = None


def hidden_now() -> Hidden | None:
    """What the command's caller may not see, while a restricted grant's command runs (search
    leaves those nodes out, as the API's does: a hidden node is not found by searching)."""
    return _answering


def caller(settings: Settings, argv: list[str]) -> Caller | None:
    """The caller LINEAGE_TOKEN names, None without one; ConfigError for a token of no grant, or
    a restricted grant's token on a command that is not a question."""
    if not settings.token:
        return None
    if settings.access is None:
        raise ConfigError("LINEAGE_TOKEN is set but LINEAGE_ACCESS is not: the token's grant is "
                          "read from the access file (docs/access.md)")
    access = read_access(settings.access)
    grant = access.grant_of(settings.token)
    if grant is None:
        raise ConfigError(f"LINEAGE_TOKEN is no token of the access file {settings.access}")
    audit = AuditLog(settings.audit_dir or settings.state_dir / "audit")
    if not grant.restricted:
        return Caller(grant, None, audit)
    if not command_of(argv):
        return None  # `lineage --help`, `--version`: nothing of the graph
    if command_of(argv) not in QUESTIONS:
        raise ConfigError(
            f"`lineage {command_of(argv)}` is an administrator's command: the grant "
            f"{grant.name!r} of LINEAGE_TOKEN may only ask questions ({', '.join(sorted(QUESTIONS))})")
    from api.cli.common import reading_graph

    with reading_graph(settings) as graph:
        rows = graph.read("access/names")
    return Caller(grant, hidden_from_rows(grant, access, opaque_salt(settings), rows), audit)


def command_of(argv: list[str]) -> str:
    words = [a for a in argv if not a.startswith("-")]
    if not words:
        return ""
    return " ".join(words[:2]) if words[0] == "erasure" and len(words) > 1 else words[0]


def swapped_argv(argv: list[str], hidden: Hidden) -> tuple[list[str], dict[str, str]]:
    """``argv`` with each hidden name it gives (a namespace, ``NS NAME``, ``NS DATASET
    COLUMN``) swapped for a placeholder no node has; the placeholders, to say back in errors."""
    from api.access.guard import swapper  # the API's placeholders, loaded only when restricted

    swapped: dict[str, str] = {}
    swap = swapper(swapped)
    out = list(argv)
    for i, word in enumerate(argv):
        if word in hidden.namespaces:
            out[i] = swap(word)
            continue
        if i + 1 < len(argv) and (word, argv[i + 1]) in hidden.nodes:
            out[i + 1] = swap(argv[i + 1])
        elif i + 2 < len(argv) and (word, argv[i + 1], argv[i + 2]) in hidden.columns:
            out[i + 2] = swap(argv[i + 2])
    return out, swapped


@contextlib.contextmanager
def answering_as(who: Caller, argv: list[str]) -> Iterator[list[str]]:
    """Run the command (the body of the ``with``, given the argv to parse) as ``who``: its output
    redacted when the grant hides something, and the read audited."""
    started = time.perf_counter()
    if who.hidden is None:
        code = 0
        try:
            yield argv
        except SystemExit as e:
            code = _code(e)
            raise
        finally:
            who.audit.record(Read(who.grant.name, "CLI", f"lineage {command_of(argv)}",
                                  " ".join(argv), _status(code), 0, {},
                                  (time.perf_counter() - started) * 1000))
        return
    from api.cli import common

    asked, swapped = swapped_argv(argv, who.hidden)
    stdout, stderr = io.StringIO(), io.StringIO()
    real_out, real_err = sys.stdout, sys.stderr
    widths = common.out.width, common.err.width
    common.out.width = common.err.width = UNWRAPPED
    code = 0
    global _answering
    try:
        sys.stdout, sys.stderr = stdout, stderr
        _answering = who.hidden
        yield asked
    except SystemExit as e:
        code = _code(e)
        raise
    finally:
        _answering = None
        sys.stdout, sys.stderr = real_out, real_err
        common.out.width, common.err.width = widths
        shown, done = _redacted(stdout.getvalue(), who.hidden)
        said, said_done = _redacted(stderr.getvalue(), who.hidden)
        said = "\n".join(without_hidden(line) for line in said.split("\n"))
        for placeholder, name in swapped.items():  # an error says back the names it was given
            shown, said = shown.replace(placeholder, name), said.replace(placeholder, name)
        real_out.write(shown)
        real_out.flush()
        real_err.write(said)
        who.audit.record(Read(
            who.grant.name, "CLI", f"lineage {command_of(argv)}", " ".join(argv), _status(code),
            len(shown.encode("utf-8")), {**done.nodes, "names": done.names + said_done.names},
            (time.perf_counter() - started) * 1000))


def _redacted(text: str, hidden: Hidden) -> tuple[str, Redaction]:
    """A JSON answer node by node (as the API's), any other text name by name."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if value is not None:
            shown, done = redact(value, hidden)
            return json.dumps(shown, indent=2) + "\n", done
    return redact_text(text, hidden)


def _code(e: SystemExit) -> int:
    return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def _status(code: int) -> int:
    """The exit code as the audit log's status: 200 answered, 400 not (an error said why)."""
    return 200 if code == 0 else 400

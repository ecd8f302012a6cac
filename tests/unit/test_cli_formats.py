"""One format vocabulary across the CLI: every ``--format`` offers words of
``api.cli.common.FORMATS`` and refuses others the same way; no ``--json`` or ``--csv`` beside it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from api.cli import app
from api.cli.common import FORMATS


def _commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    if hasattr(group, "commands"):  # a group (typer's own click, not click's classes)
        for name, sub in group.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), group


COMMANDS = dict(_commands(typer.main.get_command(app)))


def test_every_format_option_speaks_the_one_vocabulary() -> None:
    with_format = {}
    for name, command in COMMANDS.items():
        for param in command.params:
            flags = set(getattr(param, "opts", []))
            assert not flags & {"--json", "--csv"}, (name, flags)
            if "--format" in flags and name != "export":  # export writes files: parquet
                words = [w.split(" (")[0] for w in (param.help or "").rstrip(".").split("; ")]
                assert words and set(words) <= set(FORMATS), (name, param.help)
                with_format[name] = words
    assert {"impact dataset", "where", "status", "dead-letters", "policy check", "check",
            "health", "neo4j status"} <= set(with_format)
    assert with_format["policy check"] == ["text", "markdown", "json", "sarif"]


def test_a_word_a_command_does_not_offer_is_refused_before_anything_runs() -> None:
    r = CliRunner().invoke(app, ["status", "--format", "table"])
    assert r.exit_code == 2 and "expected text or json" in r.output
    r = CliRunner().invoke(app, ["ls", "--format", "sarif"])
    assert r.exit_code == 2 and "expected text, plain or json" in r.output

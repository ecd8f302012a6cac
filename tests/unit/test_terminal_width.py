"""Tables fit the terminal: at 80 and at 60 columns no table line is wider than the terminal and
no identifier or word is split across lines (columns are left out, least useful first, or each row
becomes a block of lines); a URL to copy is never broken. A line longer than the terminal holds an
identifier longer than it, printed whole for the terminal to wrap (a copy keeps it whole)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from api.cli import render
from api.cli.common import out
from impact.answers import Impacted, Walk

NS = "postgres://warehouse.internal.example.com:5432"
LONG = "analytics.customer_lifetime_value_by_acquisition_channel_daily"


def _walk() -> Walk:
    items = tuple(
        Impacted("dataset", NS, f"{LONG}_{i}", i, (f"{NS}:raw.users", f"{NS}:{LONG}_{i}"),
                 "shop-nightly:build_customer_lifetime_value", "DIRECT IDENTITY via "
                 "shop-nightly:build_customer_lifetime_value",
                 datetime(2026, 11, 27, 2, 0, tzinfo=UTC), ("team:growth",), i)
        for i in range(1, 4))
    return Walk(f"dataset {NS}:raw.users", 20, items, {"kind": {"dataset": 3}})


@pytest.fixture(params=[80, 60])
def width(request: pytest.FixtureRequest) -> Iterator[int]:
    before = out._width  # None: the terminal's own width, read each time (restored as such)
    out.width = request.param
    yield request.param
    out._width = before


def _printed(show: object) -> list[str]:
    with out.capture() as captured:
        show()  # type: ignore[operator]
    return captured.get().splitlines()


def _whole(lines: list[str], words: list[str]) -> None:
    for word in words:
        assert any(word in line for line in lines), f"{word} was split:\n" + "\n".join(lines)


def _boxed(lines: list[str]) -> list[str]:
    return [line for line in lines if any(c in line for c in "│┃┏┗┡└┌")]


def test_a_blast_radius_fits_and_keeps_every_name_whole(width: int) -> None:
    lines = _printed(lambda: render.walk_table(_walk()))
    assert all(len(line) <= width for line in _boxed(lines)), "\n".join(lines)
    _whole(lines, [f"{LONG}_1", f"{LONG}_2", f"{LONG}_3", f"{NS}:raw.users"])
    # too narrow for the names side by side: a block per row, every column in it
    assert f"name: {LONG}_1" in lines and "beyond: 1" in lines


def test_a_narrow_terminal_leaves_out_the_least_useful_columns_but_never_the_why() -> None:
    """Columns go least useful first (beyond, owners, last seen); the path and why are what the
    answer is for: past that, a block per row keeps them."""
    before = out._width
    try:
        out.width = 120
        narrow = _printed(lambda: render.walk_table(_walk()))
        out.width = 250
        wide = _printed(lambda: render.walk_table(_walk()))
    finally:
        out._width = before
    assert any(line.startswith("why: DIRECT IDENTITY") for line in narrow), "\n".join(narrow)
    assert any(line.startswith("path: raw.users") for line in narrow), "\n".join(narrow)
    header = next(line for line in wide if "kind" in line and "name" in line)
    assert "why" in header and "path" in header and "beyond" in header
    assert all(len(line) <= 250 for line in _boxed(wide)), "\n".join(wide)
    _whole(wide, [f"{LONG}_1", "shop-nightly:build_customer_lifetime_value"])


def test_a_name_in_another_namespace_than_the_sources_says_its_namespace() -> None:
    walk = _walk()
    other = Impacted("dataset", "s3://lake", "exports/users", 1, (f"{NS}:raw.users", "s3://lake:exports/users"),
                     "j", "DIRECT IDENTITY via j", None)
    lines = _printed(lambda: render.walk_table(Walk(walk.source, 20, (*walk.impacted, other),
                                                    {"kind": {"dataset": 4}})))
    text = "\n".join(lines)
    assert "s3://lake:exports/users" in text
    assert f"{NS}:{LONG}_1" not in text.replace(f"{NS}:raw.users", "")  # the source's own: no prefix


def test_a_status_line_with_a_url_is_never_broken(width: int) -> None:
    url = "http://127.0.0.1:17474/browser?dbms=neo4j://127.0.0.1:17687&preselectAuthMethod=BASIC"
    status = SimpleNamespace(state="running", bolt_uri="neo4j://127.0.0.1:17687", browser_url=url,
                             user="neo4j", password_file=None, detail="pid 4242")
    lines = _printed(lambda: render.print_status(status))
    _whole(lines, [url])


def test_rows_of_any_answer_fit(width: int) -> None:
    found = [{"kind": "dataset", "namespace": NS, "name": f"{LONG}_{i}"} for i in range(3)]
    lines = _printed(lambda: render.rows(found, ["kind", "namespace", "name"], "text",
                                         drop=("namespace",)))
    _whole(lines, [f"{LONG}_0", f"{LONG}_2"])
    assert all(len(line) <= width for line in _boxed(lines)), "\n".join(lines)


def test_progress_in_a_pipe_is_a_line_per_step_and_counts_up(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Where nothing can be redrawn (a pipe, a CI log), long work still says what it does: a line
    when the step changes, and the step again every 10 s with its count."""
    from api.cli import common

    clock = iter([0.0, 0.5, 1.0, 10.5, 11.0, 12.0])
    monkeypatch.setattr("api.cli.common.time.monotonic", lambda: next(clock))
    with common.progress("starting Neo4j…") as say:
        for s in (0, 1, 10, 11):
            say(f"waiting for Neo4j to answer ({s} s)…")
        say("applying the schema [constraints]…")
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["starting Neo4j…", "waiting for Neo4j to answer (0 s)…",
                     "waiting for Neo4j to answer (10 s)…", "applying the schema [constraints]…"]


@pytest.mark.parametrize("args", [["--help"], ["gate", "--help"], ["check", "--help"],
                                  ["policy", "check", "--help"]])
def test_help_at_80_columns_is_prose_the_terminal_wraps_not_ragged_half_lines(args: list[str]) -> None:
    """Each paragraph of help fills its lines: a line ends early only where its paragraph or
    item ends, never where the next line's first word would have fit (a docstring's own line
    breaks would leave half-lines all the way down)."""
    from typer.testing import CliRunner

    from api.cli import app

    done = CliRunner().invoke(app, args, env={"COLUMNS": "80", "TERM": "dumb"})
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines and all(len(line) <= 80 for line in lines)
    for line, after in zip(lines, lines[1:], strict=False):
        body, next_body = line.rstrip(" │"), after.rstrip(" │")
        boxed = line.startswith("│") and after.startswith("│")
        if not body.strip("│ ╭╰─") or not next_body.strip("│ ╭╰─") \
                or (boxed and after[2:3] != " ") or line.startswith("│") != after.startswith("│"):
            continue  # a blank line, a box edge, or the next item in a box
        first_word = next_body.strip("│ ").split()[0]
        if first_word.startswith("["):  # Typer's own [default: ...], [required] on a line
            continue
        room = (78 if line.startswith("│") else 79) - len(body)  # the padding inside the edge
        assert room < 1 + len(first_word), f"a half-line:\n{line}\n{after}"

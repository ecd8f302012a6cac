"""The command line as a restricted grant's caller (docs/access.md, "The command line"): with
LINEAGE_TOKEN set to the analyst's token, every question the CLI answers holds no hidden
namespace, name, column or facet value anywhere in what it prints, JSON answers keep the
unrestricted answers' counts, a hidden name given is answered as a missing one, the reads are
audited, and an administrator's command is refused."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from api.access.audit import read_lines
from graph.db import Graph
from tests.helpers import ingest_events, point_cli_at_test_server
from tests.integration.access.test_redaction import (
    ACCESS,
    MARK,
    READER,
    RUN_REPORT,
    RUN_SHOP,
    SEEN,
    VAULT,
    _events,
    _same_shape,
    _shape,
)

pytestmark = pytest.mark.integration

QUESTIONS = [
    ["impact", "dataset", SEEN, "marts.revenue"],
    ["impact", "dataset", SEEN, "raw.users", "--format", "json"],
    ["impact", "job", SEEN, "shop_enrich", "--format", "json"],
    ["impact", "column", SEEN, "raw.users", "country"],
    ["upstream", "dataset", SEEN, "dash.board"],
    ["upstream", "dataset", SEEN, "dash.board", "--format", "json"],
    ["upstream", "column", SEEN, "marts.revenue", "total", "--format", "json"],
    ["show", "dataset", SEEN, "marts.revenue"],
    ["show", "dataset", SEEN, "marts.revenue", "--format", "json"],
    ["show", "job", SEEN, "shop_enrich", "--format", "json"],
    ["root-cause", "dataset", SEEN, "dash.board"],
    ["where", SEEN, "raw.users", "id"],
    ["where", SEEN, "raw.users", "id", "--format", "csv"],
    ["ls", "datasets"],
    ["ls", "jobs", "--format", "json"],
    ["ls", "namespaces"],
    ["changes", "dataset", SEEN, "dash.board"],
    ["rerun-plan", "dataset", SEEN, "marts.revenue", "--format", "json"],
    ["rerun-plan", "dataset", SEEN, "marts.revenue", "--format", "markdown"],
    ["erasure", "plan", "--key", SEEN, "raw.users", "id", "--personal", "country"],
    ["erasure", "plan", "--key", SEEN, "raw.users", "id", "--personal", "country",
     "--format", "json"],
    ["gate", SEEN, "dash.board"],
    ["gate", SEEN, "marts.revenue", "--format", "json"],
    ["health"],
    ["health", "--format", "json"],
    ["search", "shop"],
    ["changes", "job", SEEN, "shop_report", "--format", "json"],
    ["root-cause", "run", RUN_REPORT],
    ["rerun-plan", "run", RUN_SHOP, "--format", "json"],
    ["rerun-plan", "run", RUN_SHOP, "--format", "airflow"],
]


def _lineage(argv: list[str], capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """``lineage ARGV`` in process, through the console script's entry point."""
    from api.cli import main
    from graph.settings import get_settings

    get_settings.cache_clear()
    monkeypatch.setattr(sys, "argv", ["lineage", *argv])
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cli(graph: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ingest_events(graph, _events())
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS, encoding="utf-8")
    point_cli_at_test_server(monkeypatch)
    monkeypatch.setenv("LINEAGE_ACCESS", str(access))
    monkeypatch.setenv("LINEAGE_AUDIT_DIR", str(tmp_path / "audit"))
    monkeypatch.setenv("COLUMNS", "80")  # narrow: a restricted answer must still not wrap names
    return tmp_path / "audit" / "reads.jsonl"


def test_every_cli_question_as_a_restricted_grant_hides_what_it_may_not_see(
        cli: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    reaching_hidden = 0
    for argv in QUESTIONS:
        monkeypatch.delenv("LINEAGE_TOKEN", raising=False)
        code, full, _ = _lineage(argv, capsys, monkeypatch)
        assert code == 0, (argv, full)
        reaching_hidden += MARK.decode() in full.lower()
        monkeypatch.setenv("LINEAGE_TOKEN", READER)
        code, seen, said = _lineage(argv, capsys, monkeypatch)
        assert code == 0, (argv, seen, said)
        leaked = [m.start() for m in re.finditer(MARK.decode(), (seen + said).lower())]
        assert not leaked, (argv, (seen + said)[max(0, leaked[0] - 80):leaked[0] + 80])
        if "json" in argv:
            _same_shape(json.loads(seen), json.loads(full), " ".join(argv))
    assert reaching_hidden >= 12, reaching_hidden  # the questions do reach what is hidden
    reads = [line for line in read_lines(cli) if line["who"] == "analyst"]
    assert len(reads) == len(QUESTIONS) and {r["method"] for r in reads} == {"CLI"}
    # search finds nothing hidden, as the API's
    monkeypatch.setenv("LINEAGE_TOKEN", READER)
    code, _, said = _lineage(["search", "kestrel"], capsys, monkeypatch)
    assert code == 1 and "nothing is named like 'kestrel'" in said
    monkeypatch.delenv("LINEAGE_TOKEN")
    code, found, _ = _lineage(["search", "kestrel"], capsys, monkeypatch)
    assert code == 0 and "vault.ledger_kestrel" in found
    assert sum(r["outcome"] == "redacted" for r in reads) >= 12


def test_a_hidden_name_on_the_command_line_is_answered_as_a_missing_one(
        cli: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_TOKEN", READER)
    for hidden, missing in [
            (["impact", "dataset", VAULT, "vault.ledger_kestrel"],
             ["impact", "dataset", VAULT, "vault.nothing_kestrel"]),
            (["show", "dataset", VAULT, "vault.ledger_kestrel"],
             ["show", "dataset", VAULT, "vault.nothing_kestrel"]),
            (["where", SEEN, "raw.users", "contact_kestrel"],
             ["where", SEEN, "raw.users", "nothing_kestrel"]),
            (["erasure", "plan", "--key", VAULT, "vault.ledger_kestrel", "amount"],
             ["erasure", "plan", "--key", VAULT, "vault.nothing_kestrel", "amount"])]:
        a = _lineage(hidden, capsys, monkeypatch)
        b = _lineage(missing, capsys, monkeypatch)
        assert a[0] == b[0] != 0, (hidden, a)
        assert _shape(a[1] + a[2]) == _shape(b[1] + b[2]), (a, b)
        assert "did you mean" not in a[2] or "hidden-" not in a[2]
    # as the administrator sees it, the hidden name exists
    monkeypatch.delenv("LINEAGE_TOKEN")
    code, out, _ = _lineage(["show", "dataset", VAULT, "vault.ledger_kestrel"], capsys,
                            monkeypatch)
    assert code == 0 and "vault.ledger_kestrel" in out


def test_a_restricted_token_may_not_run_an_administrators_command(
        cli: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.setenv("LINEAGE_TOKEN", READER)
    code, out, err = _lineage(["export", str(tmp_path / "lake")], capsys, monkeypatch)
    assert code == 2 and out == ""
    assert "`lineage export` is an administrator's command" in " ".join(err.split())
    assert not (tmp_path / "lake").exists()
    code, out, _ = _lineage(["--help"], capsys, monkeypatch)  # help reads nothing of the graph
    assert code == 0 and "Usage" in out
    monkeypatch.setenv("LINEAGE_TOKEN", "no-such-token-0001")
    code, _, err = _lineage(["ls"], capsys, monkeypatch)
    assert code == 2 and "LINEAGE_TOKEN is no token of the access file" in " ".join(err.split())

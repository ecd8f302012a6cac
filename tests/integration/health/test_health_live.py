"""Lineage health with real tools: Debian's Prometheus scrapes a live `lineage serve`, evaluates
the project's alert rules (each healthy, each metric it reads present) and every dashboard
panel's query (each returns series); promtool checks and unit-tests the rules; headless Chromium
renders the status page (the screenshot is kept in ``tests/artifacts/status.png`` or
``$LINEAGE_TEST_ARTIFACTS``).

Needs Debian's ``prometheus`` and ``chromium`` (``.ci/run`` installs them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.db import Graph
from tests.conftest import server_settings
from tests.helpers import free_port, ingest_events, ingest_text, start_serve
from tests.integration.health.test_health import _shop as daily_pipeline

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[3]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARDS = sorted((ROOT / "deploy" / "grafana").glob("*.json"))
ARTIFACTS = Path(os.environ.get("LINEAGE_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))
SHOP = ROOT / "examples" / "events" / "shop.ndjson"


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed (.ci/run installs Debian's prometheus)")
        pytest.skip(f"{name} is not installed: apt-get install prometheus")
    return found


def test_promtool_checks_and_unit_tests_the_rules() -> None:
    promtool = _tool("promtool")
    checked = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run([promtool, "test", "rules", "alerts_test.yml"], cwd=RULES.parent,
                            capture_output=True, text=True, timeout=120)
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr


@pytest.fixture
def served(graph: Graph, tmp_path: Path) -> Iterator[str]:
    """`lineage serve` over the example and test_health's pipeline (daily runs, so that jobs
    have a cadence), measuring health every second, with tiers and SLOs."""
    assert not ingest_text(graph, SHOP.read_text()).rejected
    assert not ingest_events(graph, daily_pipeline()).rejected
    (tmp_path / "tiers.yaml").write_text(
        "tiers:\n  - tier: critical\n    match: [{name: \"marts.*\"}]\n")
    (tmp_path / "slos.yaml").write_text(
        "slos:\n  - {sli: coverage, tier: critical, objective: 0.8}\n"
        "  - {sli: completeness, tier: critical, objective: 0.95}\n")
    s = server_settings()
    env = {**os.environ, "LINEAGE_STATE_DIR": str(s.state_dir),
           "LINEAGE_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port),
           "LINEAGE_NEO4J_HTTP_PORT": str(s.neo4j_http_port),
           "LINEAGE_LOG_FILE": str(tmp_path / "events.db"),
           "LINEAGE_TIERS": str(tmp_path / "tiers.yaml"),
           "LINEAGE_SLOS": str(tmp_path / "slos.yaml"), "LINEAGE_HEALTH_INTERVAL": "1"}
    env.pop("LINEAGE_API_TOKENS", None)
    proc, base = start_serve(env)
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _query(prom: str, expr: str) -> list[dict[str, Any]]:
    found = _get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert found["status"] == "success", (expr, found)
    result: list[dict[str, Any]] = found["data"]["result"]
    return result


def test_prometheus_scrapes_evaluates_every_rule_and_panel(served: str, tmp_path: Path) -> None:
    prometheus = _tool("prometheus")
    port = free_port()
    target = served.removeprefix("http://")
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{json.dumps(str(RULES))}]\n"
        "scrape_configs:\n  - job_name: lineage\n"
        f"    static_configs: [{{targets: [{json.dumps(target)}]}}]\n")
    proc = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    prom = f"http://127.0.0.1:{port}"
    try:
        for path in ("/api/v1/impact/dataset?namespace=postgres%3A%2F%2Fwarehouse%3A5432"
                     "&name=raw.users", "/api/v1/health/lineage", "/status"):
            urllib.request.urlopen(served + path, timeout=30).read()  # latency to observe
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # scraped, health measured, a few samples in
            try:
                up = _query(prom, 'up{job="lineage"} == 1')
                sli = _query(prom, "count_over_time(lineage_tier_sli_ratio[1m])")
                if up and sli and min(float(s["value"][1]) for s in sli) >= 4:
                    break
            except OSError:
                pass
            time.sleep(1)
        else:
            pytest.fail("Prometheus did not scrape lineage serve's health within 90 s")
        urllib.request.urlopen(served + "/api/v1/health/lineage", timeout=30).read()
        time.sleep(3)  # one more scrape, and the rules evaluated on it

        groups = _get(f"{prom}/api/v1/rules")["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        assert len(rules) == 16, [r["name"] for r in rules]
        for rule in rules:
            assert rule["health"] == "ok", (rule["name"], rule.get("lastError"))
            for metric in set(re.findall(r"\b(lineage_[a-z0-9_]+|up)\b", rule["query"])):
                assert _query(prom, f'count({{__name__="{metric}"}})'), (rule["name"], metric)
        # each burn rate is computed (the recording rules hold series)
        assert _query(prom, "lineage:tier_sli_error_budget_burn:ratio_rate5m")

        checked = 0
        for board in DASHBOARDS:
            for panel in json.loads(board.read_text())["panels"]:
                for target_ in panel["targets"]:
                    assert _query(prom, target_["expr"]), (board.name, panel["title"],
                                                           target_["expr"])
                    checked += 1
        assert checked >= 20
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_status_page_renders_in_chromium(served: str, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed: apt-get install chromium")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "status.png"
    shot.unlink(missing_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--disable-background-networking", "--no-first-run"]
    done = subprocess.run([chromium, *flags, "--window-size=1100,1400", f"--screenshot={shot}",
                           f"{served}/status"], capture_output=True, text=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 20_000, done.stderr[-2000:]
    dom = subprocess.run([chromium, *flags, "--dump-dom", f"{served}/status"],
                         capture_output=True, text=True, timeout=120)
    assert "Lineage health per tier" in dom.stdout and "critical" in dom.stdout
    assert "<svg" in dom.stdout and "Coverage by namespace" in dom.stdout


def test_hostile_names_forge_no_series_and_the_scrape_stays_valid(served: str, graph: Graph) -> None:
    """A namespace built to end its label and start a series of its own (and one with a
    backslash) is written escaped: promtool finds the scrape valid and no forged series."""
    promtool = _tool("promtool")
    hostile = 'x"} 1\nfake_metric{a="b'
    assert not ingest_events(graph, [{
        "eventType": "COMPLETE", "eventTime": "2026-11-28T02:00:00Z", "producer": "p",
        "run": {"runId": "01900000-0000-7000-8000-0000000000aa"},
        "job": {"namespace": hostile, "name": "j"},
        "outputs": [{"namespace": hostile, "name": "t"}, {"namespace": "back\\slash", "name": "t"}],
    }]).rejected
    deadline = time.monotonic() + 30
    while True:
        with urllib.request.urlopen(f"{served}/metrics", timeout=10) as r:
            text = r.read().decode()
        if "back\\\\slash" in text or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert 'namespace="x\\"} 1\\nfake_metric{a=\\"b"' in text
    assert not any(line.startswith("fake_metric") for line in text.splitlines())
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                             text=True, timeout=60)
    said = checked.stdout + checked.stderr
    assert "parsing error" not in said and "invalid" not in said, said

"""Lineage health on a graph with known answers (docs/health.md): each SLI's value, tiers from
tags and from the tiers file, SLOs met and violated, a silent job found after its cadence and
cleared by its next event, a run that never ended; the API's JSON, /status and /metrics."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from impact.health.measure import measure
from impact.health.slo import judge, read_slos
from impact.health.tiers import Tiers, TiersError, read_tiers
from ingest.log.sqlite import SQLiteLog
from tests.conftest import server_settings
from tests.helpers import dataset, ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration

NS = "health-shop"
D0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = D0 + timedelta(days=6, hours=12)
PRODUCER_TAGS = {"tags": [{"key": "tier", "value": "critical", "source": "CATALOG"}]}
OWNER = {"owners": [{"name": "team:identity", "type": "team"}]}
TIERS = """
tiers:
  - tier: critical
    match:
      - {namespace: "health-*", name: "mart.*"}
  - tier: bronze
    match:
      - {name: "nothing.*"}
"""


def _t(day: int, hour: int, minute: int = 0) -> str:
    return (D0 + timedelta(days=day, hours=hour, minutes=minute)).isoformat().replace(
        "+00:00", "Z")


def _shop() -> list[dict[str, Any]]:
    """load_a writes raw.a (tier:critical by the producer's tag, schema and owner) daily on days
    0-4; build_b reads raw.a and ext.c (no producer) and writes mart.b (critical by the tiers
    file, schema and column lineage, no owner) daily on days 0-4, and starts on day 5 without
    ending."""
    events = []
    raw_a = dataset("raw.a", NS, ["id", "email"], tags=PRODUCER_TAGS, ownership=OWNER)
    mart_b = dataset("mart.b", NS, ["id"], lineage={"id": [("raw.a", "id", "DIRECT", "IDENTITY")]})
    inputs = [{"namespace": NS, "name": "raw.a"}, dataset("ext.c", NS, ["k"])]
    for day in range(5):
        run = new_run_id()
        events += [run_event("START", run, "load_a", ns=NS, time=_t(day, 2)),
                   run_event("COMPLETE", run, "load_a", ns=NS, time=_t(day, 2, 5),
                             outputs=[raw_a])]
        run = new_run_id()
        events += [run_event("START", run, "build_b", ns=NS, time=_t(day, 3), inputs=inputs),
                   run_event("COMPLETE", run, "build_b", ns=NS, time=_t(day, 3, 10),
                             inputs=inputs, outputs=[mart_b])]
    events.append(run_event("START", new_run_id(), "build_b", ns=NS, time=_t(5, 3),
                            inputs=inputs))
    return events


@pytest.fixture
def shop(graph: Graph, tmp_path: Path) -> tuple[Graph, Tiers]:
    report = ingest_events(graph, _shop())
    assert not report.rejected, report.rejected
    (tmp_path / "tiers.yaml").write_text(TIERS)
    return graph, read_tiers(tmp_path / "tiers.yaml")


def test_each_sli_on_a_graph_with_known_answers(shop: tuple[Graph, Tiers]) -> None:
    graph, tiers = shop
    health = measure(graph, tiers, now=NOW)
    critical, untiered = health.group("critical"), health.group("untiered")
    assert critical is not None and untiered is not None
    assert [g.tier for g in health.tiers] == ["critical", "untiered"]
    assert critical.datasets == 2 and untiered.datasets == 1  # raw.a, mart.b | ext.c
    # coverage: both critical datasets have a producer; ext.c has none
    assert (critical.ratio("coverage").good, critical.ratio("coverage").valid) == (2, 2)
    assert (untiered.ratio("coverage").good, untiered.ratio("coverage").valid) == (0, 1)
    # completeness: raw.a has schema and owner (a loaded table needs no column lineage);
    # mart.b has schema and column lineage, no owner
    assert (critical.ratio("completeness").good, critical.ratio("completeness").valid) == (1, 2)
    assert critical.parts["owner"] == [1, 2] and critical.parts["column_lineage"] == [1, 1]
    # provenance: build_b's reads: raw.a (written) and ext.c (no producer)
    assert critical.ratio("provenance").value == 1.0 and untiered.ratio("provenance").value == 0.0
    # load_a last ran on day 4 with a daily cadence: silent by day 6 noon; build_b started
    # on day 5: heard from within its cadence, but that run never ended (usual 10 min)
    assert (critical.ratio("freshness").good, critical.ratio("freshness").valid) == (1, 2)
    assert critical.silent_jobs == 1 and critical.unfinished_runs == 1
    assert (critical.ratio("run_completeness").good,
            critical.ratio("run_completeness").valid) == (10, 11)
    assert critical.late_datasets == 2  # neither was written on day 5
    [silent] = health.offenders["silentJobs"]
    assert silent["job"] == f"{NS}:load_a" and silent["readersAffected"] == [f"{NS}:build_b"]
    assert silent["dueBy"] == _t(5, 14, 5)  # day 4 02:05 + 1.5 days
    [unfinished] = health.offenders["unfinishedRuns"]
    assert unfinished["job"] == f"{NS}:build_b" and unfinished["started"] == _t(5, 3)
    assert [o["dataset"] for o in health.offenders["withoutProducer"]] == [f"{NS}:ext.c"]
    assert [o["dataset"] for o in health.offenders["withoutOwner"]] == [
        f"{NS}:mart.b", f"{NS}:ext.c"]  # critical first
    by_ns = health.group("critical", NS)
    assert by_ns is not None and by_ns.datasets == 2


def test_a_silent_job_clears_with_its_next_event(shop: tuple[Graph, Tiers]) -> None:
    graph, tiers = shop
    before = measure(graph, tiers, now=NOW).group("critical")
    assert before is not None and before.silent_jobs == 1
    run = new_run_id()
    ingest_events(graph, [run_event("START", run, "load_a", ns=NS, time=_t(6, 11))])
    after = measure(graph, tiers, now=NOW).group("critical")
    assert after is not None and after.silent_jobs == 0
    assert after.ratio("freshness").value == 1.0


def test_tiers_from_tags_and_file(shop: tuple[Graph, Tiers], tmp_path: Path) -> None:
    graph, tiers = shop
    assert tiers.tier_of(NS, "mart.b", []) == "critical"  # the file
    assert tiers.tier_of(NS, "mart.b", ["tier:gold"]) == "gold"  # a tag wins
    assert tiers.tier_of("elsewhere", "mart.b", []) == "untiered"
    # without the file, mart.b is untiered; raw.a keeps its producer's tag
    plain = measure(graph, Tiers(), now=NOW)
    assert plain.group("critical") is not None and plain.group("critical").datasets == 1  # type: ignore[union-attr]
    bad = tmp_path / "bad.yaml"
    bad.write_text("tiers:\n  - tier: x\n    match: [{table: y}]\n")
    with pytest.raises(TiersError, match=r"tiers\[0\]\.match\[0\]"):
        read_tiers(bad)


def test_slos_met_and_violated_with_their_budget(shop: tuple[Graph, Tiers],
                                                 tmp_path: Path) -> None:
    graph, tiers = shop
    slos = tmp_path / "slos.yaml"
    slos.write_text("slos:\n"
                    "  - {sli: coverage, tier: critical, objective: 0.9}\n"
                    "  - {sli: completeness, tier: critical, objective: 0.4}\n"
                    "  - {sli: completeness, tier: critical, objective: 0.95}\n"
                    "  - {sli: silent_jobs, tier: critical, max: 0}\n"
                    "  - {sli: lag_seconds, max: 30}\n")
    verdicts = judge(read_slos(slos), measure(graph, tiers, {"lagSeconds": 2.0}, now=NOW))
    assert [v.met for v in verdicts] == [True, True, False, False, True]
    assert verdicts[0].budget_left == 1.0  # no bad dataset: the budget untouched
    # 1 bad of 2 against 60% allowed (1.2 datasets): a sixth of the budget left
    assert verdicts[1].budget_left == pytest.approx(1 - 1 / 1.2)
    assert verdicts[2].budget_left is not None and verdicts[2].budget_left < 0  # overspent
    assert verdicts[3].budget_left == -1  # one silent job over a max of 0
    # the command: exit 1 on a violation, 0 when all are met, 2 on a bad file
    env = {**_env(), "LINEAGE_TIERS": str(tmp_path / "tiers.yaml")}
    done = subprocess.run([sys.executable, "-m", "api.cli", "slo", "check", "--slos", str(slos)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "VIOLATED" in done.stdout, done.stdout + done.stderr
    met = tmp_path / "met.yaml"
    met.write_text("slos:\n  - {sli: coverage, tier: critical, objective: 0.9}\n")
    done = subprocess.run([sys.executable, "-m", "api.cli", "slo", "check", "--slos", str(met)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "1 of 1 objectives met" in done.stdout, done.stderr
    met.write_text("slos:\n  - {sli: coverage, objective: 0.9}\n")
    done = subprocess.run([sys.executable, "-m", "api.cli", "slo", "check", "--slos", str(met)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "needs a 'tier'" in done.stderr
    # a tier that holds nothing: no data, not met; exit 3 (or 0 when asked)
    empty = tmp_path / "empty.yaml"
    empty.write_text("slos:\n  - {sli: coverage, tier: critical, objective: 0.9}\n"
                     "  - {sli: coverage, tier: platinum, objective: 0.9}\n")
    [kept, nothing] = judge(read_slos(empty), measure(graph, tiers, now=NOW))
    assert (kept.status, nothing.status, nothing.met) == ("met", "no data", False)
    done = subprocess.run([sys.executable, "-m", "api.cli", "slo", "check", "--slos", str(empty)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "NO DATA" in done.stdout and "1 of 2 objectives met, 1 with no data" in done.stdout
    done = subprocess.run([sys.executable, "-m", "api.cli", "slo", "check", "--slos", str(empty),
                           "--no-data-ok"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _env() -> dict[str, str]:
    import os

    s = server_settings()
    env = {**os.environ, "LINEAGE_STATE_DIR": str(s.state_dir),
           "LINEAGE_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port),
           "LINEAGE_NEO4J_HTTP_PORT": str(s.neo4j_http_port)}
    return env


@pytest.fixture
def api(shop: tuple[Graph, Tiers], tmp_path: Path) -> Iterator[TestClient]:
    graph, _ = shop
    (tmp_path / "slos.yaml").write_text(
        "slos:\n  - {sli: coverage, tier: critical, objective: 0.8}\n"
        "  - {sli: silent_jobs, tier: critical, max: 0}\n")
    settings = Settings(tiers=tmp_path / "tiers.yaml", slos=tmp_path / "slos.yaml")
    with TestClient(create_app(settings, graph, SQLiteLog(tmp_path / "events.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as c:
        yield c


def test_the_api_the_status_page_and_the_metrics(api: TestClient) -> None:
    body = api.get("/api/v1/health/lineage").json()
    critical = next(t for t in body["tiers"] if t["tier"] == "critical")
    assert critical["coverage"] == {"value": 1.0, "good": 2, "valid": 2}
    assert [s["met"] for s in body["slos"]] == [True, False]  # both jobs are silent today
    assert body["ingest"]["lagEvents"] == 0
    page = api.get("/status")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<svg" in page.text and "http" not in page.text.split("<body>")[1].replace(
        "http://www.w3.org/2000/svg", "")  # no external asset
    assert "load_a" in page.text and "VIOLATED" in page.text
    api.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.a"})
    metrics = ""
    for _ in range(50):  # the first scrape starts the measure on its own thread
        metrics = api.get("/metrics").text
        if "lineage_tier_sli_ratio" in metrics:
            break
    assert 'lineage_tier_sli_ratio{sli="coverage",tier="critical"} 1' in metrics
    assert f'lineage_namespace_silent_jobs{{tier="critical",namespace="{NS}"}} 2' in metrics  # today
    assert 'lineage_slo_objective_ratio{sli="coverage",tier="critical"} 0.8' in metrics
    assert ('lineage_http_request_duration_seconds_count{method="GET",'
            'route="/api/v1/impact/dataset"} 1') in metrics
    assert 'lineage_http_denied_total{status="401"} 0' in metrics


def test_a_bad_tiers_file_is_a_503_that_names_it(shop: tuple[Graph, Tiers],
                                                 tmp_path: Path) -> None:
    graph, _ = shop
    (tmp_path / "broken.yaml").write_text("tiers: [oops\n")
    settings = Settings(tiers=tmp_path / "broken.yaml")
    with TestClient(create_app(settings, graph, SQLiteLog(tmp_path / "events.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as c:
        r = c.get("/api/v1/health/lineage")
        assert r.status_code == 503 and "broken.yaml" in r.json()["detail"], r.text
        assert c.get("/status").status_code == 503
        assert c.get("/metrics").status_code == 200  # the other metrics are still served

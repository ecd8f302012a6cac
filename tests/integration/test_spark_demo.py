"""The PySpark demo end to end: real Spark with the OpenLineage listener (from Maven Central, loaded
from a local path), real HTTP into our endpoint, the durable log, the worker, real Neo4j.

One Spark application per test session (two "nights", the second with the failing revenue job).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

pyspark = pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")

from api.local.demo import run_pipeline  # noqa: E402
from graph.db import Graph  # noqa: E402
from graph.settings import Settings  # noqa: E402
from impact.blast_radius import dataset_blast_radius  # noqa: E402
from impact.root_cause import root_cause_dataset  # noqa: E402
from impact.where import where  # noqa: E402
from ingest.log.sqlite import SQLiteLog  # noqa: E402
from tests.conftest import server_settings, wipe  # noqa: E402
from tests.helpers import live_api, rows  # noqa: E402

pytestmark = pytest.mark.integration


@dataclass
class Demo:
    graph: Graph
    log: SQLiteLog
    wh: str
    seconds: float
    queryable_after: float
    output: str


@pytest.fixture(scope="module")
def demo(session_graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    wipe(session_graph)
    tmp = tmp_path_factory.mktemp("spark")
    with live_api(session_graph, tmp / "events.db") as (url, log):
        # the listener jar is cached in the test state directory (Maven's cache in ~/.m2)
        settings = Settings(state_dir=server_settings().state_dir)
        wh = tmp / "warehouse"
        code, seconds, output = run_pipeline(settings, url, wh, nights=2,
                                             fail_on_night=2, users=500, orders=2000)
        assert code == 1 and "job revenue_by_country failed" in output, output[-3000:]
        ended = time.perf_counter()
        last = log.last_seq()
        while log.position("neo4j") < last and time.perf_counter() - ended < 60:
            time.sleep(0.05)
        queryable = time.perf_counter() - ended
        yield Demo(session_graph, log, str(wh), seconds, queryable, output)


def test_listener_events_arrive_through_http(demo: Demo) -> None:
    events = [e.event for e in demo.log.scan()]
    types = {e["eventType"] for e in events}
    assert {"START", "COMPLETE", "FAIL"} <= types
    assert all("openlineage-spark" in e["producer"] or "spark" in e["producer"] for e in events)
    per_job: dict[str, int] = {}
    for e in events:
        per_job[e["job"]["name"]] = per_job.get(e["job"]["name"], 0) + 1
    print(f"\nSpark {demo.seconds:.1f} s, {len(events)} events, {len(per_job)} jobs, "
          f"queryable {demo.queryable_after:.2f} s after the job ended; events per job: {per_job}")
    assert demo.log.position("neo4j") == demo.log.last_seq()


def test_graph_has_datasets_jobs_runs_and_parent_application_runs(demo: Demo) -> None:
    names = {r["n"] for r in rows(demo.graph, "MATCH (d:Dataset {namespace: 'file'}) RETURN d.name AS n")}
    for table in ("raw/users", "raw/orders", "staging/users_clean", "marts/orders_enriched",
                  "marts/revenue_by_country", "dashboards/revenue", "ml/user_features"):
        assert f"{demo.wh}/{table}" in names, table
    parents = rows(demo.graph, """
        MATCH (r:Run)-[:OF]->(j:Job {namespace: 'shop'}), (r)-[:PARENT]->(p:Run)-[:OF]->(a:Job)
        RETURN DISTINCT a.name AS app""")
    assert [p["app"] for p in parents] == ["shop_nightly"]
    assert rows(demo.graph, "MATCH (r:Run {state: 'COMPLETE'})-[:OF]->(:Job {namespace: 'shop'}) "
                            "RETURN count(r) AS n")[0]["n"] >= 10


def test_column_edges_keep_the_listeners_transformations(demo: Demo) -> None:
    edges = rows(demo.graph, """
        MATCH (o:Column)-[e:DERIVED_FROM]->(i:Column {dataset: $raw, name: 'email'})
        RETURN o.dataset AS dataset, o.name AS column, e.type AS type, e.subtype AS subtype,
               e.masking AS masking""", raw=f"{demo.wh}/raw/users")
    by = {(e["dataset"].removeprefix(demo.wh + "/"), e["column"]): e for e in edges}
    hashed = by[("staging/users_clean", "email_hash")]
    assert (hashed["type"], hashed["masking"]) == ("DIRECT", True)
    copied = by[("ml/user_features", "email")]
    assert (copied["type"], copied["subtype"], copied["masking"]) == ("DIRECT", "IDENTITY", False)


def test_gdpr_finds_the_raw_copy_and_the_masked_hashes(demo: Demo) -> None:
    report = where(demo.graph, "file", f"{demo.wh}/raw/users", "email")
    labels = {(r.dataset.removeprefix(demo.wh + "/"), r.column): r.label for r in report.reaches}
    assert labels[("ml/user_features", "email")] == "raw"
    assert labels[("staging/users_clean", "email_hash")] == "masked"
    assert report.reaches[0].label == "raw"


def test_blast_radius_of_raw_users_reaches_the_dashboard(demo: Demo) -> None:
    answer = dataset_blast_radius(demo.graph, "file", f"{demo.wh}/raw/users")
    assert f"{demo.wh}/dashboards/revenue" in {i.name for i in answer.impacted if i.kind == "dataset"}


def test_root_cause_of_the_dashboard_names_the_failed_revenue_run(demo: Demo) -> None:
    answer = root_cause_dataset(demo.graph, "file", f"{demo.wh}/dashboards/revenue")
    top = answer.candidates[0]
    assert top.kind == "failed run" and top.dataset == f"file:{demo.wh}/marts/revenue_by_country"
    assert "CAST_INVALID_INPUT" in top.evidence["errorMessage"]

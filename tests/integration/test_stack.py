"""One pipeline across three real producers: an Airflow 3 DAG (``airflow dags test``, with
apache-airflow-providers-openlineage) runs the Spark demo's jobs (the OpenLineage listener), then
``dbt-ol build`` over the files Spark wrote (examples/dbt_shop on DuckDB), then a SQL task of its
own that states its lineage. Each tool comes from PyPI into its own environment under the test
state directory (api/local/producers.py); every event goes over HTTP to our endpoint.

Two DAG runs: the first passes, in the second Spark's revenue job fails (so the Spark task and the
DAG run fail, and dbt and the overview do not run). The Spark listener's own events are checked
here too (the demo's jobs, as `lineage demo` runs them without Airflow). Spark names the data by file path and dbt by
DuckDB relation: three `lineage alias` declarations (DatasetEvents) make the names meet.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")

from api.local.demo import StackRun, run_stack  # noqa: E402
from api.local.producers import DAG_ID  # noqa: E402
from graph.db import Graph  # noqa: E402
from graph.settings import Settings  # noqa: E402
from impact.blast_radius import dataset_blast_radius, job_blast_radius  # noqa: E402
from impact.root_cause import root_cause_dataset  # noqa: E402
from impact.where import where  # noqa: E402
from ingest.log.sqlite import SQLiteLog  # noqa: E402
from tests.conftest import server_settings, wipe  # noqa: E402
from tests.helpers import live_api, rows, wait_loaded  # noqa: E402

pytestmark = pytest.mark.integration


@dataclass
class Stack:
    graph: Graph
    run: StackRun
    wh: str
    duck: str
    log: SQLiteLog


@pytest.fixture(scope="module")
def stack(session_graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    wipe(session_graph)
    tmp = tmp_path_factory.mktemp("stack")
    with live_api(session_graph, tmp / "events.db") as (url, log):
        run = run_stack(Settings(state_dir=server_settings().state_dir), url, tmp / "work", fail=True)
        wait_loaded(log)
    assert [r.returncode != 0 for r in run.runs] == [False, True], run.runs[-1].output[-3000:]
    yield Stack(session_graph, run, str(run.warehouse), run.namespace, log)


def _datasets(answer: object) -> set[str]:
    return {f"{i.namespace}:{i.name}" for i in answer.impacted if i.kind == "dataset"}  # type: ignore[attr-defined]


def test_stack_raw_users_blast_radius_crosses_spark_dbt_and_airflow(stack: Stack) -> None:
    answer = dataset_blast_radius(stack.graph, "file", f"{stack.wh}/raw/users")
    found = _datasets(answer)
    for mart in ("shop.staging.stg_users", "shop.marts.customer_value", "shop.marts.vip_customers",
                 "shop.marts.crm_contacts", "shop.marts.country_kpis",
                 "shop.dashboards.shop_overview"):
        assert f"{stack.duck}:{mart}" in found, mart
    assert f"file:{stack.wh}/dashboards/revenue" in found  # Spark's own dashboard
    readers = {i.namespace for i in answer.impacted if i.kind == "job"}
    assert {"shop", "dbt_shop", "airflow_shop"} <= readers
    # the alias is one identity: listed once, not as a dataset of its own
    assert f"{stack.duck}:shop.raw.users" not in found
    assert f"{stack.duck}:shop.raw.users" in answer.aliases


def test_stack_gdpr_reach_of_email_follows_spark_and_dbt(stack: Stack) -> None:
    reach = {f"{r.namespace}:{r.dataset}.{r.column}": r.label
             for r in where(stack.graph, "file", f"{stack.wh}/raw/users", "email").reaches}
    assert reach[f"file:{stack.wh}/staging/users_clean.email_hash"] == "masked"  # Spark reports sha2 as masking
    assert reach[f"file:{stack.wh}/ml/user_features.email"] == "raw"  # Spark's copy
    assert f"{stack.duck}:shop.staging.stg_users.email_hash" in reach  # dbt's hash
    assert f"{stack.duck}:shop.marts.crm_contacts.email" in reach  # dbt's copy
    assert f"{stack.duck}:shop.marts.vip_customers.email_hash" in reach


def test_stack_dbt_model_reading_a_spark_output_is_in_the_spark_jobs_blast_radius(stack: Stack) -> None:
    writer = rows(stack.graph, "MATCH (j:Job)-[:WRITES]->(:Dataset {namespace: 'file', name: $name}) "
                  "RETURN j.namespace AS ns, j.name AS name", name=f"{stack.wh}/marts/revenue_by_country")
    assert [w["ns"] for w in writer] == ["shop"]
    found = _datasets(job_blast_radius(stack.graph, writer[0]["ns"], writer[0]["name"]))
    assert f"{stack.duck}:shop.marts.country_kpis" in found


def test_stack_dag_lists_its_tasks_and_answers_for_them(stack: Stack) -> None:
    job = rows(stack.graph, """
        MATCH (j:Job {namespace: 'airflow_shop', name: $dag})
        RETURN [(j)<-[:OF]-(:Run)<-[:PARENT]-(:Run)-[:OF]->(t:Job) | t.name] AS tasks""", dag=DAG_ID)[0]
    assert set(job["tasks"]) == {f"{DAG_ID}.spark_shop", f"{DAG_ID}.dbt_build",
                                 f"{DAG_ID}.lineage_gate", f"{DAG_ID}.publish_overview"}
    # the Spark application and dbt's invocation name their Airflow task run as parent
    chains = rows(stack.graph, """
        MATCH (r:Run)-[:OF]->(j:Job) WHERE j.name IN ['shop_nightly', 'dbt-run-dbt_shop']
        MATCH (r)-[:PARENT]->(:Run)-[:OF]->(t:Job)
        RETURN DISTINCT j.name AS child, t.name AS task""")
    assert {(c["child"], c["task"]) for c in chains} == {
        ("shop_nightly", f"{DAG_ID}.spark_shop"), ("dbt-run-dbt_shop", f"{DAG_ID}.dbt_build")}
    dag = _datasets(job_blast_radius(stack.graph, "airflow_shop", DAG_ID))
    tasks: set[str] = set()
    for task in job["tasks"]:
        tasks |= _datasets(job_blast_radius(stack.graph, "airflow_shop", task))
    assert dag == tasks
    assert f"{stack.duck}:shop.dashboards.shop_overview" in dag


def test_stack_root_cause_on_a_mart_names_the_failing_task(stack: Stack) -> None:
    answer = root_cause_dataset(stack.graph, stack.duck, "shop.marts.country_kpis")
    top = answer.candidates[0]
    assert top.kind == "failed run"
    assert top.dataset == f"file:{stack.wh}/marts/revenue_by_country"
    parents = top.evidence["parents"]
    assert [p["job"] for p in parents][-2:] == [f"airflow_shop:{DAG_ID}.spark_shop", f"airflow_shop:{DAG_ID}"]
    assert [p["state"] for p in parents][-2:] == ["FAIL", "FAIL"]
    assert f"{DAG_ID}.spark_shop" in top.summary


def test_stack_rerun_plan_of_the_failed_spark_run_clears_its_task_and_the_tasks_after_it(
        stack: Stack) -> None:
    """The incident of the failing night: root cause names the failed Spark run; its rerun plan
    lists the dbt models and the overview, which did not run after it (Airflow: upstream
    failed), in DAG order, in the failing night's DAG run, with the command that clears them."""
    from impact.repair.plan import rerun_plan_run

    top = root_cause_dataset(stack.graph, stack.duck, "shop.marts.country_kpis").candidates[0]
    plan = rerun_plan_run(stack.graph, top.evidence["runId"])
    [group] = plan.groups
    assert group.job == f"airflow_shop:{DAG_ID}" and group.integration == "AIRFLOW"
    assert group.tasks == ("spark_shop", "dbt_build", "publish_overview"), plan
    jobs = [r.job for r in plan.reruns]
    assert f"airflow_shop:{DAG_ID}.publish_overview" in jobs
    assert any("country_kpis" in j for j in jobs), jobs  # the dbt model of the mart
    # dbt and the overview did not run after it; the Spark application's jobs after the failed
    # one read its stale output (and wrote the Spark dashboard from it)
    assert {r.reason for r in plan.reruns if r.task in ("dbt_build", "publish_overview")} == {
        "has not run since its input went bad"}
    assert all(r.reason == "read bad data" and r.runs for r in plan.reruns if r.task == "spark_shop")
    assert f"file:{stack.wh}/marts/revenue_by_country" in {b.dataset for b in plan.rollbacks}
    assert group.logical_date is not None
    # the lineage gate failed that night, between dbt and the overview: cleared too, or Airflow
    # would mark the overview upstream_failed again
    assert group.failed == ("lineage_gate",)
    when = group.logical_date.isoformat()
    assert plan.commands == tuple(
        f"airflow tasks clear '{DAG_ID}' --task-regex '{task}' --start-date {when} --end-date "
        f"{when} --yes" for task in ("spark_shop", "dbt_build", "publish_overview", "lineage_gate"))


def test_stack_changes_of_the_failed_spark_job_name_the_bad_column(stack: Stack) -> None:
    """The failing night's Spark job sums the country (cast to a number) instead of the amount:
    `lineage changes` on it names that column lineage change and the sum's new type, right after
    the failure, against the first night's run, with both runs."""
    from impact.repair.changes import changes

    top = root_cause_dataset(stack.graph, stack.duck, "shop.marts.country_kpis").candidates[0]
    namespace, name = top.evidence["job"].split(":", 1)
    answer = changes(stack.graph, "job", namespace, name)
    assert answer.latest is not None and answer.latest.startswith(top.evidence["runId"])
    column = [c for c in answer.changes if c.evidence.get("change") == "column lineage"
              and c.evidence["column"] == "revenue"]
    assert column, answer
    [revenue] = column
    assert revenue.distance == 0 and revenue.runs[0] == top.evidence["runId"]
    assert any(a.startswith(f"file:{stack.wh}/marts/orders_enriched.country ")
               for a in revenue.evidence["added"]), revenue
    assert any(a.startswith(f"file:{stack.wh}/marts/orders_enriched.amount ")
               for a in revenue.evidence["removed"]), revenue
    # the sum's new type too, and nothing of what varies by run (Spark's application and job ids)
    assert [(c.kind, c.what) for c in answer.changes[:3]] == [
        ("failed run", answer.changes[0].what), ("schema", "column revenue retyped double -> decimal(22,2)"),
        ("lineage", revenue.what)], answer.changes
    assert not [c for c in answer.changes if c.kind == "run facet"], answer.changes


def test_stack_the_lineage_gate_lets_the_overview_run_only_on_the_good_night(stack: Stack) -> None:
    good, bad = stack.run.runs
    # the sensor asked lineage-graph and found both marts' gates open on the good night ...
    assert "lineage gate open: " in good.output and "lineage gate closed" not in good.output
    # ... and closed on the failing night, saying why: Spark's revenue job failed upstream
    assert "lineage gate closed: " in bad.output, bad.output[-5000:]
    assert "the latest run of shop:" in bad.output and "failed at" in bad.output
    assert f"{stack.duck}:shop.marts.country_kpis should not be consumed" in bad.output
    # so the overview ran once: on the good night
    runs = rows(stack.graph, """
        MATCH (r:Run)-[:OF]->(j:Job {namespace: 'airflow_shop', name: $name})
        RETURN r.state AS state""", name=f"{DAG_ID}.publish_overview")
    assert [r["state"] for r in runs] == ["COMPLETE"]
    gate_runs = rows(stack.graph, """
        MATCH (r:Run)-[:OF]->(j:Job {namespace: 'airflow_shop', name: $name})
        RETURN r.state AS state ORDER BY r.stateTime""", name=f"{DAG_ID}.lineage_gate")
    assert [r["state"] for r in gate_runs] == ["COMPLETE", "FAIL"]


# --- what the Spark listener reports (the jobs of examples/spark_shop) --------------------------

def test_the_spark_listeners_events_arrive_through_http(stack: Stack) -> None:
    spark = [e.event for e in stack.log.scan()
             if e.event.get("job", {}).get("namespace") == "shop"]  # the listener's namespace
    assert {"START", "COMPLETE", "FAIL"} <= {e["eventType"] for e in spark}
    assert all("spark" in e["producer"] for e in spark)
    names = {r["n"] for r in rows(stack.graph, "MATCH (d:Dataset {namespace: 'file'}) RETURN d.name AS n")}
    for table in ("raw/users", "raw/orders", "staging/users_clean", "marts/orders_enriched",
                  "marts/revenue_by_country", "dashboards/revenue", "ml/user_features"):
        assert f"{stack.wh}/{table}" in names, table
    # each Spark job's run is a child of the application's run
    parents = rows(stack.graph, """
        MATCH (r:Run)-[:OF]->(j:Job {namespace: 'shop'}), (r)-[:PARENT]->(p:Run)-[:OF]->(a:Job)
        WHERE j.name <> 'shop_nightly'
        RETURN DISTINCT a.name AS app""")
    assert [p["app"] for p in parents] == ["shop_nightly"]
    assert rows(stack.graph, "MATCH (r:Run {state: 'COMPLETE'})-[:OF]->(:Job {namespace: 'shop'}) "
                             "RETURN count(r) AS n")[0]["n"] >= 10


def test_the_spark_column_edges_keep_the_listeners_transformations(stack: Stack) -> None:
    edges = rows(stack.graph, """
        MATCH (o:Column)-[e:DERIVED_FROM]->(i:Column {dataset: $raw, name: 'email'})
        RETURN o.dataset AS dataset, o.name AS column, e.type AS type, e.subtype AS subtype,
               e.masking AS masking""", raw=f"{stack.wh}/raw/users")
    by = {(e["dataset"].removeprefix(stack.wh + "/"), e["column"]): e for e in edges}
    hashed = by[("staging/users_clean", "email_hash")]
    assert (hashed["type"], hashed["masking"]) == ("DIRECT", True)
    copied = by[("ml/user_features", "email")]
    assert (copied["type"], copied["subtype"], copied["masking"]) == ("DIRECT", "IDENTITY", False)


def test_root_cause_of_sparks_dashboard_names_the_failed_revenue_run(stack: Stack) -> None:
    answer = root_cause_dataset(stack.graph, "file", f"{stack.wh}/dashboards/revenue")
    top = answer.candidates[0]
    assert top.kind == "failed run" and top.dataset == f"file:{stack.wh}/marts/revenue_by_country"
    assert "CAST_INVALID_INPUT" in top.evidence["errorMessage"]


def test_an_erasure_plan_over_sparks_and_dbts_lineage(stack: Stack) -> None:
    """The Spark demo's subject, by raw/users.user_id with email named personal: the plain selects
    that keep user_id are deleted by key (users_clean, ml/user_features), the revenue dashboard
    (aggregated by country) holds nothing of the person to delete, and nothing rebuilt comes
    before a place it reads (docs/graph-model.md, "Erasure")."""
    from impact.erasure.plan import Key, erasure_plan

    users = f"{stack.wh}/raw/users"
    plan = erasure_plan(stack.graph, [Key("file", users, "user_id")], personal=("email",))
    places = {p.dataset: p for p in plan.places}
    assert plan.personal == (f"file:{users}.email",)
    for copy in ("staging/users_clean", "ml/user_features"):
        place = places[f"file:{stack.wh}/{copy}"]
        assert (place.action, place.key_columns) == ("delete by key", ("user_id",)), place
        assert place.statement is None  # a file path, not a SQL table: no DELETE template
    assert places.get(f"file:{stack.wh}/dashboards/revenue") is None or \
        places[f"file:{stack.wh}/dashboards/revenue"].action != "delete by key"
    steps = {p.dataset: p.step for p in plan.places}
    for p in plan.places:
        assert all(steps[before] < p.step for before in p.after if before in steps), p


# --- the incident's repair, run by Airflow (last: it adds runs the tests above do not expect) ---

def test_stack_airflow_reruns_exactly_what_the_plans_command_clears(
        stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The failing night's rerun plan, carried out: its `airflow tasks clear` command clears the
    plan's tasks and the failed lineage gate (and nothing else) in the failing night's DAG run;
    then Airflow's own scheduler (Spark's revenue job fixed) reruns them: the DAG run succeeds,
    the dbt models and the overview run after Spark's jobs, and the lineage gate lets the
    overview through."""
    from api.local.producers import clear_and_rerun
    from impact.repair.plan import rerun_plan_run

    top = root_cause_dataset(stack.graph, stack.duck, "shop.marts.country_kpis").candidates[0]
    commands = rerun_plan_run(stack.graph, top.evidence["runId"]).commands
    workdir = stack.run.warehouse.parent
    with live_api(stack.graph, tmp_path_factory.mktemp("rerun") / "events.db") as (url, log):
        rerun = clear_and_rerun(Settings(state_dir=server_settings().state_dir), url,
                                stack.run.warehouse, workdir, commands)
        wait_loaded(log)
    planned = {"spark_shop", "dbt_build", "lineage_gate", "publish_overview"}
    assert {t for t, (state, _) in rerun.cleared.items() if state is None} == planned, rerun
    assert rerun.before.keys() == planned  # every task of the DAG, each cleared
    assert rerun.state == "success", rerun.output[-5000:]
    assert all(rerun.after[t][0] == "success" and rerun.after[t][1] > rerun.before[t][1]
               for t in planned), rerun.after
    overview = rows(stack.graph, """
        MATCH (r:Run)-[:OF]->(j:Job {namespace: 'airflow_shop', name: $name})
        RETURN r.state AS state ORDER BY r.stateTime""", name=f"{DAG_ID}.publish_overview")
    assert [r["state"] for r in overview] == ["COMPLETE", "COMPLETE"]
    revenue = rows(stack.graph, """
        MATCH (r:Run)-[:OF]->(:Job)-[:WRITES]->(d:Dataset {namespace: 'file', name: $name})
        RETURN r.state AS state ORDER BY r.stateTime DESC LIMIT 1""",
        name=f"{stack.wh}/marts/revenue_by_country")
    assert [r["state"] for r in revenue] == ["COMPLETE"]  # Spark's fixed job wrote it again

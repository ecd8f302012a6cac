"""Models in the lineage, with MLflow as a real producer: a real MLflow tracking server (from PyPI,
in the test state directory), the Spark demo's pipeline with the OpenLineage listener writing the
feature table, examples/ml_shop training two versions of the churn model on it (the first with the
raw e-mail, the second without), and ``lineage mlflow sync`` into real Neo4j.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pyspark = pytest.importorskip("pyspark", reason="the spark extra is not installed: pip install -e '.[spark]'")

from api.local import mlflow_server  # noqa: E402
from api.local.demo import run_pipeline  # noqa: E402
from api.local.ml_demo import http_delivery, train  # noqa: E402
from api.render.provenance import provenance_markdown  # noqa: E402
from graph.db import Graph  # noqa: E402
from graph.settings import Settings  # noqa: E402
from impact.blast_radius import column_blast_radius, dataset_blast_radius  # noqa: E402
from impact.change.check import check  # noqa: E402
from impact.change.read import Change  # noqa: E402
from impact.ml.provenance import provenance  # noqa: E402
from impact.where import where  # noqa: E402
from ingest.log.sqlite import SQLiteLog  # noqa: E402
from ingest.mlflow.events import Translator  # noqa: E402
from ingest.mlflow.records import Tracking  # noqa: E402
from ingest.mlflow.sync import sync  # noqa: E402
from tests.conftest import CORPUS, server_settings, wipe  # noqa: E402
from tests.helpers import canonical_dump, free_port, live_api, rows, wait_loaded  # noqa: E402

pytestmark = pytest.mark.integration
SPEC = CORPUS / "spec"


@dataclass
class Shop:
    graph: Graph
    log: SQLiteLog
    url: str
    wh: Path
    settings: Settings
    tracking: str
    state: Path

    def sync(self, resend: bool = False) -> Any:
        report = sync(self.tracking, http_delivery(self.url, None), self.state, resend=resend)
        wait_loaded(self.log)
        return report


@pytest.fixture(scope="module")
def shop(session_graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    wipe(session_graph)
    tmp = tmp_path_factory.mktemp("mlflow")
    # MLflow's environment is cached in the test state directory (CI makes it while the gates run)
    settings = Settings(state_dir=server_settings().state_dir, mlflow_port=free_port())
    own = Settings(state_dir=tmp / "state", mlflow_port=settings.mlflow_port)
    mlflow_server.python(settings)  # install once, in the shared test state directory
    (own.state_dir / "tools").mkdir(parents=True)
    (own.state_dir / "tools" / "mlflow").symlink_to(settings.state_dir / "tools" / "mlflow")
    server = mlflow_server.MlflowServer(own)
    server.start()
    try:
        with live_api(session_graph, tmp / "events.db") as (url, log):
            wh = tmp / "warehouse"
            code, _, output = run_pipeline(settings, url, wh, users=300, orders=1200)
            assert code == 0, output[-3000:]
            wait_loaded(log)
            features = wh / "ml" / "user_features"
            assert "version 1" in train(own, server.url, features, without_email=False)
            assert "version 2" in train(own, server.url, features, without_email=True)
            shop = Shop(session_graph, log, url, wh, own, server.url, tmp / "sync-state")
            first = shop.sync()
            assert (first.sent, first.models, first.ingest.loaded) == (3, 2, 5)  # 2 runs, the registry
            yield shop
    finally:
        server.stop()


def test_runs_datasets_and_versions_land_with_the_pipelines_identities(shop: Shop) -> None:
    ns = f"mlflow://127.0.0.1:{shop.settings.mlflow_port}"
    features = f"{shop.wh}/ml/user_features"
    found = rows(shop.graph, """
        MATCH (r:Run)-[w:WROTE]->(m:Dataset {datasetType: 'MODEL'}), (r)-[rd:READ]->(d:Dataset)
        RETURN m.namespace AS ns, m.name AS model, w.version AS version, r.jobName AS job,
               r.state AS state, d.namespace + ':' + d.name AS input, rd.version AS read,
               w.trainedOn AS trainedOn ORDER BY version""")
    assert [(r["ns"], r["model"], r["version"], r["job"], r["state"], r["input"]) for r in found] == [
        (ns, "models/churn", "1", "churn", "COMPLETE", f"file:{features}"),
        (ns, "models/churn", "2", "churn", "COMPLETE", f"file:{features}")]
    assert all(r["read"] for r in found)  # MLflow's digest of the data read
    assert f"file:{features}.email" in found[0]["trainedOn"]
    assert f"file:{features}.email" not in found[1]["trainedOn"]
    # the input met the dataset Spark's listener wrote: the same node, with its Spark writer
    writers = rows(shop.graph, "MATCH (j:Job)-[:WRITES]->(:Dataset {namespace: 'file', name: $n}) "
                               "RETURN j.namespace AS ns", n=features)
    assert {w["ns"] for w in writers} == {"shop"}


def test_sync_twice_equals_sync_once(shop: Shop) -> None:
    before = canonical_dump(shop.graph)
    again = shop.sync()
    assert (again.sent, again.unchanged) == (0, 3)
    forced = shop.sync(resend=True)
    assert forced.sent == 3 and forced.ingest.loaded == 5
    assert canonical_dump(shop.graph) == before


def test_blast_radius_names_the_model_versions(shop: Shop) -> None:
    email = column_blast_radius(shop.graph, "file", f"{shop.wh}/raw/users", "email")
    assert [(v.label, v.basis) for v in email.models] == [("churn v1", "columns")]
    assert email.models[0].via == f"file:{shop.wh}/ml/user_features.email"
    orders = dataset_blast_radius(shop.graph, "file", f"{shop.wh}/raw/orders")
    assert [v.label for v in orders.models] == ["churn v1", "churn v2"]


def test_where_says_which_versions_saw_the_raw_email(shop: Shop) -> None:
    report = where(shop.graph, "file", f"{shop.wh}/raw/users", "email")
    assert [(v.label, v.saw) for v in report.models] == [("churn v1", "raw")]
    amounts = where(shop.graph, "file", f"{shop.wh}/raw/orders", "amount")
    # lifetime_value is an aggregate of the order amounts: what both versions trained on
    assert [(v.label, v.saw) for v in amounts.models] == [("churn v1", "aggregated"),
                                                          ("churn v2", "aggregated")]


def test_check_names_the_model_behind_a_breaking_change(shop: Shop) -> None:
    change = Change("drop_column", "file", f"{shop.wh}/ml/user_features", "country")
    report = check(shop.graph, [change])
    models = [f for f in report.findings if f.consumer_kind == "model"]
    assert [(f.severity, f.consumer) for f in models] == [("BREAKING", "churn v2")]
    assert report.verdict == "BREAKING"
    # version 2, the model's current lineage, trains without the e-mail: dropping it breaks no
    # training (version 1's is history, in the blast radius of the raw e-mail as of its time)
    email = check(shop.graph, [Change("drop_column", "file", f"{shop.wh}/ml/user_features", "email")])
    assert [f for f in email.findings if f.consumer_kind == "model"] == []


def test_provenance_of_a_version_reaches_the_sources(shop: Shop) -> None:
    p = provenance(shop.graph, "churn", "1")
    assert p.label == "churn v1" and p.run["state"] == "COMPLETE"
    keys = {f"{s.namespace}:{s.name}": s for s in p.sources}
    features = keys[f"file:{shop.wh}/ml/user_features"]
    assert features.distance == 1 and features.version_read
    assert features.last_write and features.last_write["job"].startswith("shop:")
    assert keys[f"file:{shop.wh}/raw/users"].distance == 2
    assert p.run["params"]["features"] == "country,order_count,lifetime_value,email"
    email = next(f for f in p.fields if f.field == "email")
    names = [i.name for i in email.steps]
    assert names[0] == f"{shop.wh}/ml/user_features.email" and f"{shop.wh}/raw/users.email" in names
    text = provenance_markdown(p)
    assert "```mermaid" in text and f"{shop.wh}/raw/users" in text and "| 2 (this)" not in text
    assert p.model["registry"]["status"] == "READY"
    assert p.model.get("version", "1") == "1"  # never the newest write's facts (version 2)
    newest = provenance(shop.graph, "churn")
    assert newest.version == "2"  # the newest by default
    # version 2 was trained without the e-mail: its fields are exactly those its run stated
    assert {f.field for f in newest.fields} == {"country", "order_count", "lifetime_value"}


@pytest.fixture(scope="module")
def spec() -> Path:
    """OpenLineage's JSON Schemas, read in place from the corpus (asked before the ML demo runs)."""
    if not (SPEC / "OpenLineage.json").exists():
        pytest.skip(f"OpenLineage's JSON Schemas are read from the corpus, not found at {SPEC} "
                    "(set LINEAGE_CORPUS to a checkout holding spec/)")
    return SPEC


def test_the_events_validate_against_the_spec(spec: Path, shop: Shop) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    resources = []
    for path in [spec / "OpenLineage.json", *sorted((spec / "facets").glob("*.json"))]:
        schema = json.loads(path.read_text("utf-8"))
        resources.append((schema["$id"], referencing.Resource.from_contents(schema)))
    registry = referencing.Registry().with_resources(resources)

    def valid(instance: Any, ref: str) -> None:
        jsonschema.Draft202012Validator({"$ref": ref}, registry=registry).validate(instance)

    events = [e for _, evs in Translator(Tracking(shop.tracking).read()).events() for e in evs]
    assert [e.get("eventType") for e in events] == ["START", "COMPLETE", "START", "COMPLETE", None]
    core = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/"
    for event in events:
        valid(event, event["schemaURL"])
        if "dataset" in event:  # the registry's DatasetEvent
            for facet in event["dataset"]["facets"].values():
                ours = not facet["_schemaURL"].startswith("https://openlineage.io/")
                valid(facet, core + "DatasetFacet" if ours else facet["_schemaURL"])
            continue
        for holder, base in [(event["run"]["facets"], "RunFacet"), (event["job"]["facets"], "JobFacet"),
                             *[(d.get("facets") or {}, "DatasetFacet")
                               for d in event["inputs"] + event["outputs"]],
                             *[(d.get("inputFacets") or {}, "InputDatasetFacet") for d in event["inputs"]],
                             *[(d.get("outputFacets") or {}, "OutputDatasetFacet")
                               for d in event["outputs"]]]:
            for facet in holder.values():
                ours = not facet["_schemaURL"].startswith("https://openlineage.io/")
                valid(facet, core + base if ours else facet["_schemaURL"])


def test_a_run_deleted_in_mlflow_keeps_its_lineage_and_says_so(shop: Shop) -> None:
    v1 = rows(shop.graph, "MATCH (r:Run)-[w:WROTE {version: '1'}]->(:Dataset {datasetType: 'MODEL'}) "
                          "RETURN r.`facet.mlflowRun` AS run")[0]
    mlflow_id = json.loads(v1["run"])["runId"]
    request = urllib.request.Request(f"{shop.tracking}/api/2.0/mlflow/runs/delete", method="POST",
                                     data=json.dumps({"run_id": mlflow_id}).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()
    report = shop.sync()
    assert report.sent == 1  # the deleted run's events changed: its lifecycle stage
    after = rows(shop.graph, "MATCH (r:Run)-[w:WROTE {version: '1'}]->(:Dataset {datasetType: 'MODEL'}) "
                             "RETURN r.`facet.mlflowRun` AS run")
    assert json.loads(after[0]["run"])["lifecycleStage"] == "deleted"
    assert [v.label for v in where(shop.graph, "file", f"{shop.wh}/raw/users", "email").models] == ["churn v1"]


def test_the_provenance_route_answers_json_and_markdown(shop: Shop) -> None:
    base = f"{shop.url}/api/v1/provenance/model"
    with urllib.request.urlopen(f"{base}?name=churn&version=1", timeout=30) as answer:
        body = json.loads(answer.read())
    assert body["version"] == "1" and body["run"]["state"] == "COMPLETE"
    assert any(s["name"] == f"{shop.wh}/raw/users" for s in body["sources"])
    with urllib.request.urlopen(f"{base}?name=churn&format=markdown", timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/markdown")
        assert "```mermaid" in answer.read().decode()
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{base}?name=churn&version=9", timeout=30)
    assert missing.value.code == 404


def test_gdpr_reach_of_a_tag_names_the_models_and_the_provenance_shows_the_tag(shop: Shop) -> None:
    from urllib.parse import quote

    from impact.tag_reach import tag_reach

    users = quote(f"{shop.wh}/raw/users", safe="")
    request = urllib.request.Request(
        f"{shop.url}/api/v1/namespaces/file/datasets/{users}/fields/email/tags/PII", method="POST")
    urllib.request.urlopen(request, timeout=30).read()
    report = tag_reach(shop.graph, "PII")
    assert [(v.label, v.saw) for v in report.models] == [("churn v1", "raw")]
    assert "models trained on it: churn v1 (raw)" in report.summary()
    p = provenance(shop.graph, "churn", "1")
    email = next(f for f in p.fields if f.field == "email")
    assert email.tagged == (f"file:{shop.wh}/raw/users.email=PII",)


def test_the_cli_syncs_and_prints_the_provenance(shop: Shop, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from api.cli import app
    from tests.helpers import point_cli_at_test_server

    point_cli_at_test_server(monkeypatch)
    before = canonical_dump(shop.graph)
    runner = CliRunner()
    done = runner.invoke(app, ["mlflow", "sync", "--tracking-uri", shop.tracking, "--resend"])
    assert done.exit_code == 0, done.output
    assert "2 runs read, 3 sent" in done.output and "0 rejected" in done.output
    assert canonical_dump(shop.graph) == before
    shown = runner.invoke(app, ["provenance", "model", "churn", "1"])
    assert shown.exit_code == 0, shown.output
    assert "provenance of model churn v1" in shown.output and "version read" in shown.output
    missing = runner.invoke(app, ["provenance", "model", "no-such-model"])
    assert missing.exit_code == 1 and "no model no-such-model" in missing.output
    cause = runner.invoke(app, ["root-cause", "model", "churn", "2", "--format", "json"])
    assert cause.exit_code == 0, cause.output


def test_the_sync_process_lineage_up_runs_loads_a_new_version(
        shop: Shop, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With LINEAGE_MLFLOW_URI set, `lineage up` runs `lineage mlflow sync --watch`: a model
    version trained while it runs reaches the graph without anyone asking. (Last in the module:
    it adds a third version.)"""
    import time

    from api.cli.stack import up_state
    from api.local import processes
    from graph.settings import get_settings
    from tests.helpers import point_cli_at_test_server

    point_cli_at_test_server(monkeypatch)
    monkeypatch.setenv("LINEAGE_MLFLOW_URI", shop.tracking)
    monkeypatch.setenv("LINEAGE_MLFLOW_INTERVAL", "1")
    monkeypatch.setenv("LINEAGE_LOG_FILE", str(tmp_path / "events.db"))
    get_settings.cache_clear()
    settings = get_settings()
    sync_process = processes.Process(settings, "mlflow-sync")
    sync_process.start()
    try:
        assert up_state(settings)["mlflow-sync"]["running"]
        features = shop.wh / "ml" / "user_features"
        assert "version 3" in train(shop.settings, shop.tracking, features, without_email=True)
        versions: list[str] = []
        deadline = time.monotonic() + 90
        while "3" not in versions and time.monotonic() < deadline:
            time.sleep(0.5)
            versions = [r["v"] for r in rows(shop.graph, """
                MATCH (:Run)-[w:WROTE]->(:Dataset {name: 'models/churn'}) RETURN w.version AS v""")]
        log = sync_process.log.read_text("utf-8", errors="replace")
        assert "3" in versions, log[-3000:]
        assert "0 rejected" in log
    finally:
        sync_process.stop()
    assert not sync_process.status().running

"""MLflow's records as OpenLineage events (ingest.mlflow.events): the identities, the run states,
the models and their column lineage, from records shaped as MLflow 3.17's REST API answers them
(the integration test reads a real server)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ingest.mlflow.events import Translator, dataset_identity, run_uuid
from ingest.mlflow.records import MlflowError, Records, Tracking
from ingest.transform import trained_on
from ingest.validate import ValidEvent, validate

NS = "mlflow://127.0.0.1:5055"
RUN_ID = "ed2d96cfcf734a208babcbc6cbb9b322"


@pytest.mark.parametrize(("source_type", "source", "expected"), [
    ("local", {"uri": "/lake/ml/user_features"}, ("file", "/lake/ml/user_features")),
    ("local", {"uri": "file:///lake/ml/user%20features/"}, ("file", "/lake/ml/user features")),
    ("s3", {"uri": "s3a://bucket/ml/features.parquet"}, ("s3://bucket", "ml/features.parquet")),
    ("gs", {"uri": "gs://b/k/v"}, ("gs://b", "k/v")),
    ("hdfs", {"uri": "hdfs://nn:8020/warehouse/t"}, ("hdfs://nn:8020", "/warehouse/t")),
    ("http", {"url": "https://example.com/data/x.csv"}, ("https://example.com", "/data/x.csv")),
    ("huggingface", {"path": "org/reviews", "split": "train"}, ("huggingface", "org/reviews")),
    ("delta_table", {"delta_table_name": "main.ml.features"}, (NS, "datasets/features")),
    ("code", {"tags": {}}, (NS, "datasets/features")),
    ("local", "not json", (NS, "datasets/features")),
])
def test_sources_map_onto_the_writers_names(source_type: str, source: Any,
                                            expected: tuple[str, str]) -> None:
    text = source if isinstance(source, str) else json.dumps(source)
    assert dataset_identity(source_type, text, "features", NS) == expected


def test_a_table_takes_the_namespace_given() -> None:
    source = json.dumps({"delta_table_name": "main.ml.features"})
    assert dataset_identity("delta_table", source, "f", NS, "spark_catalog") == (
        "spark_catalog", "main.ml.features")


def test_run_ids_are_mlflows_own_as_uuids() -> None:
    assert run_uuid(RUN_ID) == "ed2d96cf-cf73-4a20-8bab-cbc6cbb9b322"
    assert run_uuid("not-hex") == run_uuid("not-hex")  # derived, stable


def _run(status: str, end: int | None, *, deleted: bool = False, parent: str | None = None,
         models: list[str] | None = None) -> dict[str, Any]:
    tags = [{"key": "mlflow.runName", "value": "train"}]
    if parent:
        tags.append({"key": "mlflow.parentRunId", "value": parent})
    colspec = [{"type": "long", "name": "order_count"}, {"type": "string", "name": "email"}]
    return {
        "info": {"run_id": RUN_ID, "experiment_id": "1", "status": status, "start_time": 1000,
                 "end_time": end, "lifecycle_stage": "deleted" if deleted else "active",
                 "user_id": "ana"},
        "data": {"params": [{"key": "C", "value": "1.0"}],
                 "metrics": [{"key": "acc", "value": 0.5, "timestamp": 1500, "step": 0},
                             {"key": "acc", "value": 0.9, "timestamp": 1800, "step": 1}],
                 "tags": tags},
        "inputs": {"dataset_inputs": [
            {"tags": [{"key": "mlflow.data.context", "value": "training"}],
             "dataset": {"name": "features", "digest": "d1", "source_type": "local",
                         "source": json.dumps({"uri": "/lake/features"}),
                         "schema": json.dumps({"mlflow_colspec": colspec}), "profile": "{}"}},
            {"tags": [{"key": "mlflow.data.context", "value": "evaluation"}],
             "dataset": {"name": "holdout", "digest": "d2", "source_type": "local",
                         "source": json.dumps({"uri": "/lake/holdout"}),
                         "schema": json.dumps({"mlflow_colspec": colspec}), "profile": "{}"}}]},
        "outputs": {"model_outputs": [{"model_id": m, "step": 0} for m in models or []]},
    }


def _records(run: dict[str, Any], *, registered: bool = True) -> Records:
    records = Records("http://127.0.0.1:5055")
    records.experiments = {"1": {"experiment_id": "1", "name": "churn"}}
    records.runs = [run]
    for model_id in [o["model_id"] for o in run["outputs"]["model_outputs"]]:
        records.logged_models[model_id] = {"info": {"model_id": model_id, "name": "model",
                                                    "source_run_id": RUN_ID,
                                                    "creation_timestamp_ms": 1700}}
        records.signatures[model_id] = {
            "inputs": [{"type": "long", "name": "order_count"}, {"type": "string", "name": "email"}],
            "outputs": [{"type": "tensor", "tensor-spec": {"dtype": "int64", "shape": [-1]}}]}
        if registered:
            records.versions.append({"name": "churn", "version": "3", "source": f"models:/{model_id}",
                                     "run_id": RUN_ID, "current_stage": "Production",
                                     "status": "READY", "last_updated_timestamp": 2500})
    if registered and records.versions:
        records.registered = {"churn": {"name": "churn", "last_updated_timestamp": 2400,
                                        "aliases": [{"alias": "champion", "version": "3"}]}}
    return records


def test_a_finished_run_reads_its_datasets_and_writes_its_model_version() -> None:
    events = Translator(_records(_run("FINISHED", 2000, models=["m-1"]))).events()
    (run_id, run_events), (registry, registry_events) = events
    assert run_id == RUN_ID and registry == "registry:churn"
    start, complete = run_events
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert complete["eventTime"] == "1970-01-01T00:00:02.000Z"
    assert [i["name"] for i in complete["inputs"]] == ["/lake/features", "/lake/holdout"]
    assert start["outputs"] == []
    (model,) = complete["outputs"]
    assert (model["namespace"], model["name"]) == (NS, "models/churn")
    assert model["facets"]["version"]["datasetVersion"] == "3"
    assert model["facets"]["datasetType"]["datasetType"] == "MODEL"
    assert [f["name"] for f in model["facets"]["schema"]["fields"]] == ["order_count", "email",
                                                                        "prediction"]
    lineage = model["facets"]["columnLineage"]["fields"]
    # only the training dataset's columns trained the model, not the evaluation set's
    assert [i["name"] for i in lineage["email"]["inputFields"]] == ["/lake/features"]
    assert lineage["email"]["inputFields"][0]["transformations"] == [
        {"type": "DIRECT", "subtype": "AGGREGATION", "masking": False, "description": "trained on"}]
    assert model["outputFacets"]["mlflowModel"]["aliases"] == ["champion"]
    assert complete["run"]["facets"]["mlflowMetrics"]["metrics"] == {"acc": 0.9}  # the latest
    assert trained_on(model) == ["file:/lake/features.email", "file:/lake/features.order_count"]
    (registry_event,) = registry_events
    assert registry_event["eventTime"] == "1970-01-01T00:00:02.500Z"
    assert registry_event["dataset"]["facets"]["mlflowRegistry"]["versions"] == [
        {"version": "3", "stage": "Production", "status": "READY", "aliases": ["champion"]}]
    for event in run_events + registry_events:
        valid = validate(event)
        assert isinstance(valid, ValidEvent), valid


@pytest.mark.parametrize(("status", "end", "kinds"), [
    ("FAILED", 2000, ["START", "FAIL"]),
    ("KILLED", 2000, ["START", "ABORT"]),
    ("RUNNING", None, ["START", "RUNNING"]),
    ("SCHEDULED", None, []),
])
def test_each_mlflow_status_gives_its_events(status: str, end: int | None, kinds: list[str]) -> None:
    events = Translator(_records(_run(status, end, models=["m-1"]))).run_events(
        _run(status, end, models=["m-1"]))
    assert [e["eventType"] for e in events] == kinds
    if status == "RUNNING":  # timed at the last thing it logged: the metric at 1800
        assert events[1]["eventTime"] == "1970-01-01T00:00:01.800Z"


def test_a_deleted_run_keeps_its_lineage_and_says_so_last() -> None:
    run = _run("FINISHED", 2000, deleted=True, models=["m-1"])
    events = Translator(_records(run)).run_events(run)
    assert [e["eventType"] for e in events] == ["START", "COMPLETE", "OTHER"]
    assert events[2]["eventTime"] == "1970-01-01T00:00:02.001Z"
    assert events[2]["run"]["facets"]["mlflowRun"]["lifecycleStage"] == "deleted"
    assert events[1]["outputs"]  # the COMPLETE still writes the model


def test_an_unregistered_model_is_named_by_its_experiment_and_versioned_by_its_id() -> None:
    run = _run("FINISHED", 2000, models=["m-7"])
    (model,) = Translator(_records(run, registered=False)).run_events(run)[1]["outputs"]
    assert model["name"] == "experiments/churn/models/model"
    assert model["facets"]["version"]["datasetVersion"] == "m-7"


def test_a_nested_run_names_its_parent() -> None:
    run = _run("FINISHED", 2000, parent="0" * 32)
    parent = Translator(_records(run)).run_events(run)[0]["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == "00000000-0000-0000-0000-000000000000"
    assert parent["job"] == {"namespace": NS, "name": "churn"}


def test_a_tracking_uri_must_be_a_server() -> None:
    with pytest.raises(MlflowError, match="http"):
        Tracking("databricks")


def test_an_unreachable_server_is_a_clear_error() -> None:
    with pytest.raises(MlflowError, match="could not reach MLflow"):
        Tracking("http://127.0.0.1:9", timeout=2).experiments()


def test_a_tracking_uri_that_names_no_server_is_a_usage_error() -> None:
    from typer.testing import CliRunner

    from api.cli import app

    done = CliRunner().invoke(app, ["mlflow", "sync", "--tracking-uri", "databricks"])
    assert done.exit_code == 2 and "--tracking-uri" in done.output

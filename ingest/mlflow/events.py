"""MLflow's records as the OpenLineage events they mean (docs/producers.md, "MLflow").

- An **experiment** is a job: namespace ``mlflow://HOST:PORT`` of the tracking server (or the one
  given), name the experiment's name; job type ``EXPERIMENT``, integration ``MLFLOW``.
- An MLflow **run** is a run whose id is MLflow's own run id read as a UUID (MLflow's ids are 32
  hexadecimal digits), so syncing again names the same run. It gives a START at its start time
  and, once it ended, a COMPLETE (FINISHED), FAIL (FAILED) or ABORT (KILLED) at its end time. A
  run still running gives a START and a RUNNING event timed at the last thing it logged; a
  scheduled run that has not started gives nothing yet. Nested runs name their parent.
- Each **logged input dataset** is an input: its ``source`` mapped onto the name the pipeline that
  wrote it uses (``dataset_identity``), its MLflow schema as the input's schema, its digest as the
  version read, its context (training, evaluation) and profile in an ``mlflowDataset`` input facet.
- Each **model** the run logged is an output of ``datasetType`` MODEL: a registered model's
  version (``models/NAME``, version N), or a logged model no one registered
  (``experiments/EXPERIMENT/models/NAME``, version its model id). Its signature is its schema;
  each signature input named like a column of a training dataset has that column as its input,
  typed DIRECT / AGGREGATION and not masking: training reads every value of the column and keeps
  an aggregate of them in the model's parameters, never a value as is (not IDENTITY), nor one
  value per row (not TRANSFORMATION), and the values themselves shape the output (not INDIRECT).
- Params, metrics (their latest values) and MLflow's own run fields are the run facets
  ``mlflowParams``, ``mlflowMetrics`` and ``mlflowRun``. A registered version's stage, aliases and
  status go into the model's ``mlflowModel`` output facet; a registered model's description and
  tags into its documentation and tags facets.

Pure functions of the records: the same records give the same events, byte for byte.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from ingest.mlflow.records import Records

# the producer these events name: kept as first published (stores hold it), though the module moved
PRODUCER = "https://github.com/lineage-graph/lineage-graph/blob/main/ingest/mlflow_events.py"
_SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_FACETS = "https://openlineage.io/spec/facets/"
_OURS = "https://github.com/lineage-graph/lineage-graph/blob/main/docs/producers.md#mlflow"
ENDED = {"FINISHED": "COMPLETE", "FAILED": "FAIL", "KILLED": "ABORT"}
TRAINING = {"training", "train", ""}  # dataset contexts whose columns a model is trained on
_OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "wasbs": "wasbs",
                  "abfss": "abfss", "abfs": "abfss"}


def tracking_namespace(tracking_uri: str) -> str:
    """The default namespace of an MLflow server's jobs and models: ``mlflow://HOST:PORT``."""
    return f"mlflow://{urlsplit(tracking_uri).netloc or tracking_uri}"


def run_uuid(mlflow_run_id: str) -> str:
    """The OpenLineage run id of an MLflow run: its id as a UUID when it is one (MLflow's are),
    else a UUID derived from it (the same every time)."""
    try:
        return str(uuid.UUID(hex=mlflow_run_id))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"mlflow-run:{mlflow_run_id}"))


def dataset_identity(source_type: str, source: str, name: str, namespace: str,
                     table_namespace: str | None = None) -> tuple[str, str]:
    """The (namespace, name) of an MLflow dataset, as the pipeline that wrote its source names it
    (OpenLineage's naming conventions, the way the Spark listener applies them):

    - a local path or ``file://`` URI: ``file``, the absolute path;
    - ``s3://b/k`` (s3a, s3n), ``gs://b/k``, ``abfss://c@acct.dfs.core.windows.net/k``: the scheme
      and bucket (container) as namespace, the key as name;
    - ``hdfs://host:port/p`` (and other URIs with a host): ``scheme://host:port``, the path;
    - ``http(s)://host/p``: ``https://host``, the path;
    - a table (Delta, Spark, Unity Catalog): ``table_namespace`` when given, the table's name;
    - a Hugging Face dataset: ``huggingface``, its path;
    - anything else (code, a table with no namespace given): the tracking server's namespace,
      ``datasets/NAME``.
    """
    try:
        fields = json.loads(source) if source else {}
    except ValueError:
        fields = {}
    if not isinstance(fields, dict):
        fields = {}
    table = fields.get("delta_table_name") or fields.get("table_name")
    if table and table_namespace:
        return table_namespace, str(table)
    if source_type == "huggingface" and fields.get("path"):
        return "huggingface", str(fields["path"])
    location = fields.get("uri") or fields.get("url") or fields.get("path")
    if location and not table:
        return _location(str(location))
    return namespace, f"datasets/{name}"


def _location(location: str) -> tuple[str, str]:
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if scheme in ("", "file") or (len(scheme) == 1 and location[1:3] in (":\\", ":/")):
        path = unquote(parts.path) if scheme == "file" else location
        return "file", path.rstrip("/") or "/"
    if scheme in _OBJECT_STORES:
        return f"{_OBJECT_STORES[scheme]}://{parts.netloc}", parts.path.strip("/")
    if scheme in ("http", "https"):
        return f"{scheme}://{parts.netloc}", parts.path.rstrip("/") or "/"
    if scheme == "dbfs":
        return "dbfs", parts.path.rstrip("/")
    return f"{scheme}://{parts.netloc}", parts.path.rstrip("/") or "/"


def _facet(schema: str, **fields: Any) -> dict[str, Any]:
    """A facet of the spec's ``schema`` ("VERSION/NAME")."""
    name = schema.split("/")[1]
    return {"_producer": PRODUCER, "_schemaURL": f"{_FACETS}{schema}.json#/$defs/{name}", **fields}


def _ours(facet: str, **fields: Any) -> dict[str, Any]:
    """One of our own facets (documented in docs/producers.md)."""
    return {"_producer": PRODUCER, "_schemaURL": f"{_OURS}-{facet.lower()}", **fields}


def _time(ms: int | str | None) -> str:
    when = datetime.fromtimestamp(int(ms or 0) / 1000, UTC)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _pairs(items: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {i["key"]: i.get("value") for i in items or [] if "key" in i}


def _colspec_type(spec: dict[str, Any]) -> str:
    """A column or tensor spec's type as text: ``long``, ``string``, ``tensor<int64>[-1]``."""
    if spec.get("type") == "tensor":
        tensor = spec.get("tensor-spec") or {}
        shape = ",".join(str(s) for s in tensor.get("shape") or [])
        return f"tensor<{tensor.get('dtype', '?')}>[{shape}]"
    kind = spec.get("type")
    return kind if isinstance(kind, str) else json.dumps(kind, sort_keys=True)


def _dataset_columns(dataset: dict[str, Any]) -> list[dict[str, Any]]:
    """An MLflow dataset's columns (its ``mlflow_colspec`` schema), [] when it has none."""
    try:
        schema = json.loads(dataset.get("schema") or "{}")
    except ValueError:
        return []
    specs = schema.get("mlflow_colspec") if isinstance(schema, dict) else None
    return [s for s in specs or [] if isinstance(s, dict) and s.get("name")]


def _schema_facet(specs: list[dict[str, Any]], outputs: list[dict[str, Any]] = ()  # type: ignore[assignment]
                  ) -> dict[str, Any] | None:
    fields = [{"name": str(s["name"]), "type": _colspec_type(s)} for s in specs if s.get("name")]
    unnamed = [s for s in outputs if not s.get("name")]
    for i, spec in enumerate(outputs):
        label = spec.get("name") or ("prediction" if len(unnamed) == 1 else f"prediction_{i}")
        fields.append({"name": str(label), "type": _colspec_type(spec),
                       "description": "model output (signature)"})
    return _facet("1-2-0/SchemaDatasetFacet", fields=fields) if fields else None


class Translator:
    """Turns one tracking server's records into OpenLineage events."""

    def __init__(self, records: Records, namespace: str | None = None,
                 table_namespace: str | None = None) -> None:
        self.records = records
        self.namespace = namespace or tracking_namespace(records.tracking_uri)
        self.table_namespace = table_namespace
        self.versions_of: dict[str, list[dict[str, Any]]] = {}  # logged model id -> versions
        for v in records.versions:
            model_id = str(v.get("source") or "").removeprefix("models:/")
            self.versions_of.setdefault(model_id, []).append(v)
        self.versions_by_run: dict[str, list[dict[str, Any]]] = {}
        for v in records.versions:
            if v.get("run_id"):
                self.versions_by_run.setdefault(v["run_id"], []).append(v)

    def job_name(self, experiment_id: str) -> str:
        experiment = self.records.experiments.get(experiment_id)
        return str(experiment["name"]) if experiment else f"experiment-{experiment_id}"

    def run_events(self, run: dict[str, Any]) -> list[dict[str, Any]]:
        """The events of one MLflow run (none for a run that has not started)."""
        info = run["info"]
        status = info.get("status")
        if status == "SCHEDULED" or not info.get("start_time"):
            return []
        inputs, trained_on = self._inputs(run)
        outputs = self._outputs(run, trained_on)
        job = {"namespace": self.namespace, "name": self.job_name(info["experiment_id"]),
               "facets": {"jobType": _facet("2-0-4/JobTypeJobFacet", processingType="BATCH",
                                            integration="MLFLOW", jobType="EXPERIMENT")}}
        facets = self._run_facets(run)
        run_part = {"runId": run_uuid(info["run_id"]), "facets": facets}

        def event(kind: str, ms: int, with_outputs: bool) -> dict[str, Any]:
            return {"eventType": kind, "eventTime": _time(ms), "producer": PRODUCER,
                    "schemaURL": _SPEC, "run": run_part, "job": job, "inputs": inputs,
                    "outputs": outputs if with_outputs else []}

        events = [event("START", int(info["start_time"]), False)]
        if status in ENDED and info.get("end_time"):
            events.append(event(ENDED[status], int(info["end_time"]), True))
        elif outputs or status == "RUNNING":
            events.append(event("RUNNING", self._last_logged(run), True))
        if info.get("lifecycle_stage") == "deleted":
            # MLflow keeps no deletion time: one millisecond after the run's last event, so that
            # this facet is the newest (the run's state and lineage stay as they were)
            last = max(int(info.get("end_time") or 0), self._last_logged(run)) + 1
            events.append({"eventType": "OTHER", "eventTime": _time(last), "producer": PRODUCER,
                           "schemaURL": _SPEC, "run": run_part, "job": job,
                           "inputs": [], "outputs": []})
        return events

    def registry_events(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """Per registered model, a DatasetEvent with the registry as it stands (its versions'
        stages, aliases and statuses: ``mlflowRegistry``), timed at the registry's last change, so
        a stage move or a deleted version shows as the newest facts of the model."""
        found = []
        for name, entry in sorted(self.records.registered.items()):
            versions = sorted((v for v in self.records.versions if v.get("name") == name),
                              key=lambda v: int(v["version"]) if str(v["version"]).isdigit() else 0)
            aliases: dict[str, list[str]] = {}
            for a in entry.get("aliases") or []:
                aliases.setdefault(str(a.get("version")), []).append(str(a.get("alias")))
            when = max([int(entry.get("last_updated_timestamp") or 0)]
                       + [int(v.get("last_updated_timestamp") or 0) for v in versions])
            registry = _ours("mlflowRegistry", versions=[
                {"version": str(v["version"]), "stage": v.get("current_stage"),
                 "status": v.get("status"), "aliases": sorted(aliases.get(str(v["version"]), []))}
                for v in versions])
            facets: dict[str, Any] = {
                "datasetType": _facet("1-0-1/DatasetTypeDatasetFacet", datasetType="MODEL"),
                "mlflowRegistry": registry}
            found.append((f"registry:{name}", [{
                "eventTime": _time(when), "producer": PRODUCER,
                "schemaURL": _SPEC.replace("RunEvent", "DatasetEvent"),
                "dataset": {"namespace": self.namespace, "name": f"models/{name}", "facets": facets}}]))
        return found

    def _last_logged(self, run: dict[str, Any]) -> int:
        """A running run's last sign of life: its start, its metrics, the models it logged."""
        times = [int(run["info"]["start_time"])]
        times += [int(m.get("timestamp") or 0) for m in (run.get("data") or {}).get("metrics") or []]
        for out in (run.get("outputs") or {}).get("model_outputs") or []:
            model = self.records.logged_models.get(out.get("model_id", ""))
            if model:
                times.append(int(model["info"].get("creation_timestamp_ms") or 0))
        return max(times)

    def _run_facets(self, run: dict[str, Any]) -> dict[str, Any]:
        info, data = run["info"], run.get("data") or {}
        tags = _pairs(data.get("tags"))
        facets: dict[str, Any] = {
            "mlflowRun": _ours("mlflowRun", runId=info["run_id"], experimentId=info["experiment_id"],
                               runName=info.get("run_name") or tags.get("mlflow.runName"),
                               user=info.get("user_id") or tags.get("mlflow.user"),
                               status=info.get("status"),
                               lifecycleStage=info.get("lifecycle_stage"),
                               artifactUri=info.get("artifact_uri"),
                               sourceName=tags.get("mlflow.source.name"),
                               sourceType=tags.get("mlflow.source.type"),
                               trackingUri=self.records.tracking_uri),
        }
        params = _pairs(data.get("params"))
        if params:
            facets["mlflowParams"] = _ours("mlflowParams", params=dict(sorted(params.items())))
        latest: dict[str, tuple[int, int, float]] = {}
        for m in data.get("metrics") or []:
            key = (int(m.get("step") or 0), int(m.get("timestamp") or 0), m.get("value"))
            if m["key"] not in latest or key[:2] >= latest[m["key"]][:2]:
                latest[m["key"]] = key
        if latest:
            facets["mlflowMetrics"] = _ours("mlflowMetrics", metrics={
                k: v[2] for k, v in sorted(latest.items())})
        parent = tags.get("mlflow.parentRunId")
        if parent:
            parent_run = next((r for r in self.records.runs if r["info"]["run_id"] == parent), None)
            parent_job = (self.job_name(parent_run["info"]["experiment_id"]) if parent_run
                          else self.job_name(info["experiment_id"]))
            facets["parent"] = _facet("1-2-0/ParentRunFacet", run={"runId": run_uuid(parent)},
                                      job={"namespace": self.namespace, "name": parent_job})
        return facets

    def _inputs(self, run: dict[str, Any]
                ) -> tuple[list[dict[str, Any]], list[tuple[str, str, dict[str, str]]]]:
        """The run's inputs, and for each training dataset (namespace, name, {column: type})."""
        inputs: list[dict[str, Any]] = []
        trained_on: list[tuple[str, str, dict[str, str]]] = []
        seen: set[tuple[str, str]] = set()
        for item in (run.get("inputs") or {}).get("dataset_inputs") or []:
            ds = item.get("dataset") or {}
            context = str(_pairs(item.get("tags")).get("mlflow.data.context") or "")
            ns, name = dataset_identity(str(ds.get("source_type") or ""), str(ds.get("source") or ""),
                                        str(ds.get("name") or "dataset"), self.namespace,
                                        self.table_namespace)
            columns = _dataset_columns(ds)
            if context.lower() in TRAINING:
                trained_on.append((ns, name, {str(c["name"]): _colspec_type(c) for c in columns}))
            if (ns, name) in seen:  # the same table logged twice (training and evaluation)
                continue
            seen.add((ns, name))
            facets: dict[str, Any] = {}
            schema = _schema_facet(columns)
            if schema:
                facets["schema"] = schema
            if ds.get("digest"):
                facets["version"] = _facet("1-0-1/DatasetVersionDatasetFacet",
                                           datasetVersion=str(ds["digest"]))
            try:
                profile = json.loads(ds.get("profile") or "null")
            except ValueError:
                profile = None
            inputs.append({"namespace": ns, "name": name, "facets": facets, "inputFacets": {
                "mlflowDataset": _ours("mlflowDataset", name=ds.get("name"), digest=ds.get("digest"),
                                       context=context or None, sourceType=ds.get("source_type"),
                                       source=ds.get("source"), profile=profile)}})
        return inputs, trained_on

    def _outputs(self, run: dict[str, Any], trained_on: list[tuple[str, str, dict[str, str]]]
                 ) -> list[dict[str, Any]]:
        """The model versions the run logged or registered, each an output of type MODEL."""
        info = run["info"]
        model_ids = [o["model_id"] for o in (run.get("outputs") or {}).get("model_outputs") or []]
        model_ids += sorted(m for m, logged in self.records.logged_models.items()
                            if logged["info"].get("source_run_id") == info["run_id"]
                            and m not in model_ids)
        outputs: list[dict[str, Any]] = []
        registered_here: set[tuple[str, str]] = set()
        for model_id in dict.fromkeys(model_ids):
            logged = self.records.logged_models.get(model_id)
            signature = self.records.signatures.get(model_id)
            versions = self.versions_of.get(model_id, [])
            if versions:
                for v in versions:
                    registered_here.add((v["name"], str(v["version"])))
                    outputs.append(self._model(f"models/{v['name']}", str(v["version"]), signature,
                                               trained_on, model_id, v))
            elif logged is not None:
                experiment = self.job_name(info["experiment_id"])
                outputs.append(self._model(f"experiments/{experiment}/models/{logged['info']['name']}",
                                           model_id, signature, trained_on, model_id, None))
        # a version registered from this run's artifacts (MLflow 2: runs:/ID/path), not a logged model
        for v in self.versions_by_run.get(info["run_id"], []):
            if (v["name"], str(v["version"])) not in registered_here:
                outputs.append(self._model(f"models/{v['name']}", str(v["version"]), None, trained_on,
                                           None, v))
        return outputs

    def _model(self, name: str, version: str, signature: dict[str, Any] | None,
               trained_on: list[tuple[str, str, dict[str, str]]], model_id: str | None,
               registered: dict[str, Any] | None) -> dict[str, Any]:
        facets: dict[str, Any] = {
            "datasetType": _facet("1-0-1/DatasetTypeDatasetFacet", datasetType="MODEL"),
            "version": _facet("1-0-1/DatasetVersionDatasetFacet", datasetVersion=version),
        }
        if signature:
            schema = _schema_facet(signature.get("inputs") or [], signature.get("outputs") or [])
            if schema:
                facets["schema"] = schema
            lineage = {}
            for spec in signature.get("inputs") or []:
                column = str(spec.get("name") or "")
                sources = [{"namespace": ns, "name": ds, "field": column, "transformations": [{
                    "type": "DIRECT", "subtype": "AGGREGATION", "masking": False,
                    "description": "trained on"}]}
                    for ns, ds, columns in trained_on if column and column in columns]
                if sources:
                    lineage[column] = {"inputFields": sources}
            if lineage:
                facets["columnLineage"] = _facet("1-2-0/ColumnLineageDatasetFacet", fields=lineage)
        model_name = registered["name"] if registered else None
        entry = self.records.registered.get(model_name) if model_name else None
        if entry and entry.get("description"):
            facets["documentation"] = _facet("1-1-0/DocumentationDatasetFacet",
                                             description=str(entry["description"]))
        tags = [{"key": t["key"], "value": str(t.get("value", "")), "source": "MLFLOW"}
                for t in (entry or {}).get("tags") or [] if t.get("key")]
        if tags:
            facets["tags"] = _facet("1-0-0/TagsDatasetFacet", tags=tags)
        details: dict[str, Any] = {"modelId": model_id, "version": version}
        if registered:
            aliases = sorted(a.get("alias") for a in (entry or {}).get("aliases") or []
                             if a.get("version") == str(registered["version"]))
            details |= {"registeredName": registered["name"], "stage": registered.get("current_stage"),
                        "status": registered.get("status"), "source": registered.get("source"),
                        "aliases": aliases,
                        "createdAt": _time(registered.get("creation_timestamp"))}
        return {"namespace": self.namespace, "name": name, "facets": facets,
                "outputFacets": {"mlflowModel": _ours("mlflowModel", **details)}}

    def events(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """(MLflow run id, its events) for every run read, oldest first."""
        runs = sorted(self.records.runs, key=lambda r: (int(r["info"].get("start_time") or 0),
                                                        r["info"]["run_id"]))
        return [(r["info"]["run_id"], self.run_events(r)) for r in runs] + self.registry_events()

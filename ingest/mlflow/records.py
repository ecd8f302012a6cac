"""What an MLflow tracking server records, read over its REST API (MLflow 3; verified with 3.17).

The sync (``ingest.mlflow.sync``) needs four kinds of records, each read here as MLflow returns
it, untouched:

- experiments (``experiments/search``, deleted ones too);
- runs with their params, metrics, tags, logged input datasets and logged models
  (``runs/search``, deleted runs too, so that a deletion is seen);
- logged models (``logged-models/search``: MLflow 3's models, each with the run that logged it);
- registered model versions (``model-versions/search``) and registered models
  (``registered-models/search``), with their stages and aliases;

and a logged model's ``MLmodel`` file, whose ``signature`` is the model's schema. That file is
served by the ``logged-models/{id}/artifacts/files`` route of MLflow's ``ajax-api`` (the one its
own UI reads), so the sync needs nothing but the server's URL.

No MLflow package is needed: MLflow's Python client pins its own stack, and the REST API is what
every client of the server speaks.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from graph.errors import LineageError

PAGE = 500  # the largest page MLflow's search routes give


class MlflowError(LineageError):
    """MLflow's tracking server could not be read (down, refused, or answered something else)."""


@dataclass
class Records:
    """Everything the sync reads from one tracking server."""

    tracking_uri: str
    experiments: dict[str, dict[str, Any]] = field(default_factory=dict)  # by experiment id
    runs: list[dict[str, Any]] = field(default_factory=list)
    logged_models: dict[str, dict[str, Any]] = field(default_factory=dict)  # by model id
    versions: list[dict[str, Any]] = field(default_factory=list)  # registered model versions
    registered: dict[str, dict[str, Any]] = field(default_factory=dict)  # by registered name
    signatures: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # by model id


class Tracking:
    """A client of one tracking server's REST API (``http(s)://host:port``)."""

    def __init__(self, tracking_uri: str, timeout: float = 30.0) -> None:
        parts = urllib.parse.urlsplit(tracking_uri)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise MlflowError(f"the tracking URI must be http(s)://HOST:PORT of an MLflow tracking "
                              f"server, not {tracking_uri!r}")
        self.base = tracking_uri.rstrip("/")
        self.timeout = timeout

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None,
              api: str = "api") -> bytes:
        url = f"{self.base}/{api}/2.0/mlflow/{path}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                payload: bytes = answer.read()
                return payload
        except urllib.error.HTTPError as e:
            detail = e.read()[:500].decode("utf-8", "replace")
            raise MlflowError(f"MLflow at {self.base} answered {e.code} to {method} {path}: "
                              f"{detail}") from e
        except OSError as e:
            raise MlflowError(f"could not reach MLflow at {self.base} ({path}): {e}") from e

    def _json(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        raw = self._call(method, path, body)
        try:
            answer = json.loads(raw or b"{}")
        except ValueError as e:
            raise MlflowError(f"MLflow at {self.base} answered {path} with something not JSON") from e
        if not isinstance(answer, dict):
            raise MlflowError(f"MLflow at {self.base} answered {path} with {type(answer).__name__}")
        return answer

    def _pages(self, method: str, path: str, body: dict[str, Any], key: str
               ) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            page = dict(body)
            if token:
                page["page_token"] = token
            if method == "GET":
                query = urllib.parse.urlencode({k: v for k, v in page.items()
                                                if not isinstance(v, list | dict)})
                answer = self._json("GET", f"{path}?{query}")
            else:
                answer = self._json("POST", path, page)
            yield from answer.get(key) or []
            token = answer.get("next_page_token")
            if not token:
                return

    def experiments(self) -> list[dict[str, Any]]:
        return list(self._pages("POST", "experiments/search",
                                {"max_results": 1000, "view_type": "ALL"}, "experiments"))

    def runs(self, experiment_ids: list[str], since_ms: int | None = None) -> list[dict[str, Any]]:
        """Every run of the experiments (deleted ones too); with ``since_ms`` only those that
        started at or after it, or ended at or after it, or have not ended."""
        found: list[dict[str, Any]] = []
        for start in range(0, len(experiment_ids), 100):  # MLflow takes at most 100 ids per search
            ids = experiment_ids[start:start + 100]
            found += self._pages("POST", "runs/search",
                                 {"experiment_ids": ids, "max_results": PAGE, "run_view_type": "ALL"},
                                 "runs")
        if since_ms is None:
            return found
        return [r for r in found
                if (r["info"].get("end_time") is None
                    or max(int(r["info"].get("start_time") or 0),
                           int(r["info"]["end_time"])) >= since_ms)]

    def run(self, run_id: str) -> dict[str, Any]:
        answer = self._json("GET", "runs/get?" + urllib.parse.urlencode({"run_id": run_id}))
        run: dict[str, Any] = answer.get("run") or {}
        return run

    def logged_models(self, experiment_ids: list[str]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for start in range(0, len(experiment_ids), 100):
            found += self._pages("POST", "logged-models/search",
                                 {"experiment_ids": experiment_ids[start:start + 100],
                                  "max_results": 100}, "models")
        return found

    def model_versions(self) -> list[dict[str, Any]]:
        return list(self._pages("GET", "model-versions/search", {"max_results": 10_000},
                                "model_versions"))

    def registered_models(self) -> list[dict[str, Any]]:
        return list(self._pages("GET", "registered-models/search", {"max_results": 1000},
                                "registered_models"))

    def signature(self, model_id: str) -> dict[str, Any] | None:
        """A logged model's signature (``{"inputs": [...], "outputs": [...]}``, each a list of
        column or tensor specs), or None when it was logged without one."""
        path = (f"logged-models/{urllib.parse.quote(model_id)}/artifacts/files?"
                + urllib.parse.urlencode({"artifact_file_path": "MLmodel"}))
        try:
            text = self._call("GET", path, api="ajax-api")
        except MlflowError as e:
            if " 404 " in f" {e} ":
                return None
            raise
        try:
            mlmodel = yaml.safe_load(text)
        except yaml.YAMLError:
            return None
        signature = (mlmodel or {}).get("signature") if isinstance(mlmodel, dict) else None
        if not isinstance(signature, dict):
            return None
        return {side: _specs(signature.get(side)) for side in ("inputs", "outputs")}

    def read(self, since_ms: int | None = None) -> Records:
        """Everything the sync needs; ``since_ms`` narrows the runs (registered versions and
        models are few and always read whole)."""
        records = Records(self.base)
        records.experiments = {e["experiment_id"]: e for e in self.experiments()}
        ids = sorted(records.experiments)
        records.runs = self.runs(ids, since_ms)
        records.logged_models = {m["info"]["model_id"]: m for m in self.logged_models(ids)}
        records.versions = self.model_versions()
        records.registered = {m["name"]: m for m in self.registered_models()}
        if since_ms is not None:  # an older run whose model was registered or moved since
            have = {r["info"]["run_id"] for r in records.runs}
            for v in records.versions:
                run_id = v.get("run_id")
                if (run_id and run_id not in have
                        and int(v.get("last_updated_timestamp") or 0) >= since_ms):
                    records.runs.append(self.run(run_id))
                    have.add(run_id)
        wanted = {o["model_id"] for r in records.runs
                  for o in (r.get("outputs") or {}).get("model_outputs") or []}
        wanted |= {m["info"]["model_id"] for m in records.logged_models.values()
                   if m["info"].get("source_run_id") in {r["info"]["run_id"] for r in records.runs}}
        for model_id in sorted(wanted):
            records.signatures[model_id] = self.signature(model_id)
        return records


def _specs(value: Any) -> list[dict[str, Any]]:
    """A signature side: MLflow writes it as a JSON string inside the YAML."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

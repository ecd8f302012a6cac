"""``lineage demo --ml``: the Spark demo, then a churn model trained on its feature table and logged
to a local MLflow (examples/ml_shop), synced into the lineage; then the feature table is written
again and a second version is trained without the e-mail column.

The sync's events are posted to the running API (``POST /api/v1/lineage``), the way a producer's
are: the event log, the worker, the graph.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from api.local import mlflow_server
from api.local.demo import demo, post_events
from graph.errors import ConfigError
from graph.settings import Settings
from ingest.mlflow.sync import SyncReport, sync
from ingest.pipeline import IngestReport
from ingest.read import RawItem
from ingest.worker import caught_up

TRAIN = Path(__file__).resolve().parents[2] / "examples" / "ml_shop" / "train.py"


@dataclass
class MlDemo:
    tracking_uri: str
    warehouse: Path
    trained: list[str] = field(default_factory=list)  # what each training printed
    syncs: list[SyncReport] = field(default_factory=list)
    loaded: bool = False


def train(settings: Settings, tracking_uri: str, features: Path, without_email: bool,
          say: Callable[[str], None] = lambda line: None) -> str:
    """examples/ml_shop/train.py in MLflow's environment; returns what it printed last."""
    if not TRAIN.is_file():
        raise ConfigError(f"the ML example is not at {TRAIN}: run the demo from a clone")
    args = [str(mlflow_server.python(settings, say)), str(TRAIN), "--tracking-uri", tracking_uri,
            "--features", str(features)] + (["--without-email"] if without_email else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise ConfigError(f"training failed (exit {done.returncode}):\n"
                          f"{(done.stdout + done.stderr).strip()[-3000:]}")
    return next((line for line in done.stdout.splitlines() if line.startswith("trained ")),
                done.stdout.strip()[-200:])


def http_delivery(url: str, api_key: str | None) -> Callable[[list[RawItem], IngestReport],
                                                               IngestReport]:
    """Deliver a sync's events by posting them to the API (which validates and logs them)."""
    def deliver(items: list[RawItem], report: IngestReport) -> IngestReport:
        post_events(url, [i.obj for i in items], api_key)
        report.read += len(items)
        report.loaded += len(items)
        return report
    return deliver


def run_ml(settings: Settings, url: str, *, api_key: str | None = None,
           say: Callable[[str], None] = lambda line: None) -> MlDemo:
    server = mlflow_server.MlflowServer(settings)
    server.start(say)
    deliver = http_delivery(url, api_key)
    result = MlDemo(server.url, settings.state_dir / "demo" / "warehouse")
    features = result.warehouse / "ml" / "user_features"
    for version, without_email in ((1, False), (2, True)):
        say(f"night {version}: the Spark pipeline (writes ml/user_features)")
        demo(settings, url, False, api_key=api_key)
        say(f"training churn version {version}" + (" without the e-mail" if without_email else ""))
        result.trained.append(train(settings, server.url, features, without_email, say))
        result.syncs.append(sync(server.url, deliver, settings.state_dir))
    result.loaded = caught_up(settings)
    return result

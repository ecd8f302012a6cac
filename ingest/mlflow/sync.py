"""``lineage mlflow sync``: an MLflow tracking server's runs, datasets and models into the graph.

The records are read (``ingest.mlflow.records``), turned into OpenLineage events
(``ingest.mlflow.events``) and loaded through the ingest path every event takes: validated,
appended to the event log (so ``lineage replay`` keeps them) and written to Neo4j.

Syncing again changes nothing: the events of a run are the same while MLflow's records of it are,
and the graph's writes are idempotent. To spare the log, the digest of each run's events is kept
in ``<state>/mlflow/<server>.json``; a run whose events have not changed is not sent again
(``resend`` sends everything anyway). A run is sent again when anything of it changed: it ended, it
logged a metric, a version of its model was registered, moved to another stage or deleted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.codec import canonical
from ingest.mlflow.events import Translator
from ingest.mlflow.records import Records, Tracking
from ingest.pipeline import IngestReport
from ingest.read import RawItem

Deliver = Callable[[list[RawItem], IngestReport], IngestReport]


@dataclass
class SyncReport:
    runs: int = 0  # runs read from MLflow
    sent: int = 0  # runs and registered models whose events were sent
    registries: int = 0  # of which registered models (their registry's state)
    unchanged: int = 0  # runs whose events had been sent before, unchanged
    events: int = 0
    models: int = 0  # model versions among the outputs sent
    ingest: IngestReport = field(default_factory=IngestReport)


def state_file(state_dir: Path, tracking_uri: str) -> Path:
    """Where the digests of the runs sent from ``tracking_uri`` are kept."""
    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", tracking_uri.split("://", 1)[-1]).strip("_")
    return state_dir / "mlflow" / f"{slug or 'server'}.json"


def _load(path: Path) -> dict[str, str]:
    try:
        sent = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in sent.items()} if isinstance(sent, dict) else {}


def _digest(events: list[dict[str, Any]]) -> str:
    return hashlib.sha256(canonical(events)).hexdigest()


def sync(tracking_uri: str, deliver: Deliver, state_dir: Path, *, since: datetime | None = None,
         namespace: str | None = None, table_namespace: str | None = None, resend: bool = False,
         records: Records | None = None,
         say: Callable[[str], None] = lambda line: None) -> SyncReport:
    """Read the server, send the events of every run not sent before as it is now; ``deliver``
    loads a list of items (an Ingester's ``ingest`` with the event log as journal)."""
    if records is None:
        since_ms = int(since.timestamp() * 1000) if since else None
        records = Tracking(tracking_uri).read(since_ms)
    translator = Translator(records, namespace, table_namespace)
    path = state_file(state_dir, records.tracking_uri)
    sent = {} if resend else _load(path)
    report = SyncReport(runs=len(records.runs))
    say(f"{len(records.runs)} runs in {len(records.experiments)} experiments, "
        f"{len(records.versions)} registered model versions")
    for run_id, events in translator.events():
        if not events:
            continue
        digest = _digest(events)
        if sent.get(run_id) == digest:
            report.unchanged += 1
            continue
        items = [RawItem(f"mlflow run {run_id} event {i}", obj=e, index=i)
                 for i, e in enumerate(events)]
        before = len(report.ingest.rejected)
        deliver(items, report.ingest)
        if len(report.ingest.rejected) == before:  # a rejected run is tried again next time
            sent[run_id] = digest
        report.sent += 1
        report.registries += run_id.startswith("registry:")
        report.events += len(events)
        report.models += len(events[-1].get("outputs") or [])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sent, sort_keys=True, indent=0), encoding="utf-8")
    return report

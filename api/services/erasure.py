"""Opening an erasure request (docs/graph-model.md, "Erasure"): its plan recorded as a command
in the event log, like any write, under the salted hash of the subject's reference, so that
neither the log, the graph nor an export holds the reference (or the key) in clear."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime

from graph.db import Graph
from graph.private import private_file
from graph.settings import Settings
from impact.erasure.plan import ErasurePlan
from ingest import commands
from ingest.log.protocol import EventLog


@dataclass(frozen=True)
class Opened:
    ref: str  # the salted hash
    created: bool  # False: a request with this reference was open already (it is kept)
    applied_by: str  # "worker" or "here"
    opened_at: datetime | None


def subject_hash(settings: Settings, reference: str) -> str:
    """The reference as the store keeps it: HMAC-SHA256 with the installation's salt."""
    return hmac.new(_salt(settings), reference.encode("utf-8"), hashlib.sha256).hexdigest()


def _salt(settings: Settings) -> bytes:
    if settings.erasure_salt:
        return settings.erasure_salt.encode("utf-8")
    path = settings.state_dir / "erasure-salt"
    if not path.is_file() or not path.read_text(encoding="utf-8").strip():
        private_file(path).write_text(secrets.token_hex(32) + "\n", encoding="utf-8")
    return path.read_text(encoding="utf-8").strip().encode("utf-8")


def open_request(graph: Graph, events: EventLog, settings: Settings, plan: ErasurePlan,
                 reference: str, deadline_days: float | None = None) -> Opened:
    """Record ``plan`` as the request of the subject ``reference``."""
    ref = subject_hash(settings, reference)
    places = [{"step": p.step, "dataset": p.dataset, "namespace": p.namespace, "name": p.name,
               "action": p.action, "keyColumns": list(p.key_columns),
               "producers": list(p.producers), "after": list(p.after)} for p in plan.places]
    models = [{"namespace": v.namespace, "name": v.name, "version": v.version}
              for v in plan.models]
    # whether this opens it is known before: the worker and this process may both apply the
    # command (this one after waiting for the worker), and the second finds it open
    created = not graph.read("erasure/request", ref=ref)
    rows = commands.submit(graph, events, "erasure_open", {
        "ref": ref, "keys": list(plan.keys), "places": json.dumps(places, sort_keys=True),
        "models": json.dumps(models, sort_keys=True),
        "deadlineDays": float(deadline_days or settings.erasure_deadline_days)},
        settings.command_wait)
    if rows is None:  # the worker applied it in its place: read it back
        found = graph.read("erasure/request", ref=ref)
        return Opened(ref, created, "worker", found[0]["openedAt"] if found else None)
    return Opened(ref, created, "here", rows[0]["openedAt"])

"""The policy webhook (``LINEAGE_POLICY_WEBHOOK``): a JSON document POSTed when a violation of a
policy rule appears or clears (impact.watch), one per change.

Documents are sent in order on a thread of their own; a receiver that is down or answers other
than 2xx is tried again with a growing pause (1 s, 2 s, 4 s ... up to 5 minutes between tries,
for about an hour), then the document is given up with a line in the worker's log. Loading never
waits for the receiver. Documents still queued when the worker stops are not sent: a violation
that appeared is still in the store (``/api/v1/policies/violations``).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import urllib.error
import urllib.request
from typing import Any

from impact.policy_file import Policies
from impact.violations import Change

log = logging.getLogger(__name__)

ATTEMPTS = 16
FIRST_PAUSE = 1.0
LONGEST_PAUSE = 300.0


def document(change: Change, policies: Policies) -> dict[str, Any]:
    """What the receiver gets for one change."""
    rule = next((r for r in policies.rules if r.id == change.rule), None)
    v = change.violation
    return {
        "event": change.event, "at": change.at, "key": change.key, "policies": policies.path,
        "rule": {"id": change.rule,
                 "severity": None if rule is None else rule.severity,
                 "description": None if rule is None else rule.description,
                 "owners": [] if rule is None else list(rule.owners)},
        "violation": None if v is None else {
            "what": v.what(), "source": v.source, "target": v.target, "label": v.label,
            "counts": v.counts, "waiver": None if v.waiver is None else v.waiver.reason,
            "steps": [{"from": s.source, "to": s.target, "job": s.job, "run": s.run,
                       "type": s.type, "subtype": s.subtype, "masking": s.masking}
                      for s in v.steps]},
    }


class Webhook:
    """POSTs documents to ``url`` on a thread of its own (see the module's doc)."""

    def __init__(self, url: str, policies: Policies, first_pause: float = FIRST_PAUSE,
                 attempts: int = ATTEMPTS, timeout: float = 10.0) -> None:
        self.url, self.policies = url, policies
        self.first_pause, self.attempts, self.timeout = first_pause, attempts, timeout
        self.sent = 0
        self.given_up = 0
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="policy-webhook", daemon=True)
        self._thread.start()

    def send(self, changes: list[Change]) -> None:
        """Queue a document per change; returns at once."""
        for change in changes:
            self._queue.put(document(change, self.policies))

    def close(self, wait: float = 0.0) -> None:
        """Stop after the document being sent; ``wait`` seconds for the queue to empty first."""
        self._queue.put(None)
        self._thread.join(wait)
        self._stop.set()

    def _run(self) -> None:
        while (doc := self._queue.get()) is not None:
            for attempt in range(self.attempts):
                problem = self._post(doc)
                if problem is None:
                    self.sent += 1
                    break
                pause = min(LONGEST_PAUSE, self.first_pause * 2 ** attempt)
                log.warning("policy webhook %s: %s; trying again in %.0f s", self.url, problem,
                            pause)
                if self._stop.wait(pause):
                    return
            else:
                self.given_up += 1
                log.error("policy webhook %s: gave up %s of %s after %d tries", self.url,
                          doc["event"], doc["key"], self.attempts)

    def _post(self, doc: dict[str, Any]) -> str | None:
        """None when the receiver took it; else what went wrong."""
        request = urllib.request.Request(
            self.url, data=json.dumps(doc).encode(), method="POST",
            headers={"Content-Type": "application/json", "User-Agent": "lineage-graph"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                return None if 200 <= answer.status < 300 else f"answered {answer.status}"
        except urllib.error.HTTPError as e:
            return f"answered {e.code}"
        except (urllib.error.URLError, OSError) as e:
            return f"unreachable ({e})"

"""The policy webhook (``LINEAGE_POLICY_WEBHOOK``): a JSON document POSTed when a violation of a
policy rule appears or clears (impact.policy.watch), one per change.

Documents are sent on a thread of their own, each on its own schedule: a receiver that is down or
answers other than 2xx is tried again for that document with a growing pause (1 s, 2 s, 4 s ... up
to 5 minutes between tries, for about an hour), then the document is given up with a line in the
worker's log; meanwhile later documents get their own first try, in order (one that never answers
costs each try its timeout, never the others' turn). At most :data:`MOST_WAITING` documents wait:
past it the oldest is dropped, counted (``dropped``, published as the worker's
``policy_webhook_dropped_total`` on ``/metrics``). Redirects are not followed: a receiver that
answers 3xx has not taken the document. Loading never waits for the receiver. Documents still
waiting when the worker stops are not sent: a violation that appeared is still in the store
(``/api/v1/policies/violations``).
"""

from __future__ import annotations

import heapq
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from impact.policy.rules import Policies
from impact.policy.violations import ViolationChange

log = logging.getLogger(__name__)

ATTEMPTS = 16
FIRST_PAUSE = 1.0
LONGEST_PAUSE = 300.0


def document(change: ViolationChange, policies: Policies) -> dict[str, Any]:
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


MOST_WAITING = 10_000
"""Documents waiting to be sent (first tries and retries) at most."""


@dataclass(order=True)
class _Waiting:
    due: float
    order: int  # first queued first, among those due at once
    doc: dict[str, Any] = field(compare=False)
    tries: int = field(default=0, compare=False)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is an answer like any other: not taken


_OPENER = urllib.request.build_opener(_NoRedirects)


class Webhook:
    """POSTs documents to ``url`` on a thread of its own (see the module's doc)."""

    def __init__(self, url: str, policies: Policies, first_pause: float = FIRST_PAUSE,
                 attempts: int = ATTEMPTS, timeout: float = 10.0,
                 most_waiting: int = MOST_WAITING,
                 on_drop: Callable[[int], None] = lambda dropped: None) -> None:
        """``on_drop``: told the count of dropped documents each time one is dropped."""
        self.url, self.policies = url, policies
        self.first_pause, self.attempts, self.timeout = first_pause, attempts, timeout
        self.most_waiting, self.on_drop = most_waiting, on_drop
        self.sent = 0
        self.given_up = 0
        self.dropped = 0
        self._waiting: list[_Waiting] = []  # a heap by due time
        self._queued = 0
        self._lock = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="policy-webhook", daemon=True)
        self._thread.start()

    def send(self, changes: list[ViolationChange]) -> None:
        """Queue a document per change; returns at once."""
        with self._lock:
            for change in changes:
                self._queued += 1
                heapq.heappush(self._waiting, _Waiting(time.monotonic(), self._queued,
                                                       document(change, self.policies)))
                if len(self._waiting) > self.most_waiting:
                    oldest = min(self._waiting, key=lambda w: w.order)
                    self._waiting.remove(oldest)
                    heapq.heapify(self._waiting)
                    self.dropped += 1
                    log.error("policy webhook %s: more than %d documents waiting; dropped %s of %s",
                              self.url, self.most_waiting, oldest.doc["event"], oldest.doc["key"])
                    self.on_drop(self.dropped)
            self._lock.notify()

    def close(self, wait: float = 0.0) -> None:
        """Stop; ``wait`` seconds first for the documents waiting to be sent."""
        deadline = time.monotonic() + wait
        with self._lock:
            while self._waiting and time.monotonic() < deadline:
                self._lock.wait(min(0.1, max(0.0, deadline - time.monotonic())))
            self._closing = True
            self._lock.notify()
        self._thread.join(max(0.0, deadline - time.monotonic()) + self.timeout)

    def _next(self) -> _Waiting | None:
        """The next document due, waiting for it; None once closed."""
        with self._lock:
            while not self._closing:
                if self._waiting:
                    pause = self._waiting[0].due - time.monotonic()
                    if pause <= 0:
                        return heapq.heappop(self._waiting)
                    self._lock.wait(pause)
                else:
                    self._lock.wait()
            return None

    def _run(self) -> None:
        while (item := self._next()) is not None:
            problem = self._post(item.doc)
            with self._lock:
                if problem is None:
                    self.sent += 1
                elif item.tries + 1 >= self.attempts:
                    self.given_up += 1
                    log.error("policy webhook %s: gave up %s of %s after %d tries", self.url,
                              item.doc["event"], item.doc["key"], self.attempts)
                else:
                    pause = min(LONGEST_PAUSE, self.first_pause * 2 ** item.tries)
                    log.warning("policy webhook %s: %s; trying %s of %s again in %.0f s", self.url,
                                problem, item.doc["event"], item.doc["key"], pause)
                    heapq.heappush(self._waiting, _Waiting(time.monotonic() + pause, item.order,
                                                           item.doc, item.tries + 1))
                self._lock.notify_all()

    def _post(self, doc: dict[str, Any]) -> str | None:
        """None when the receiver took it; else what went wrong."""
        request = urllib.request.Request(
            self.url, data=json.dumps(doc).encode(), method="POST",
            headers={"Content-Type": "application/json", "User-Agent": "lineage-graph"})
        try:
            with _OPENER.open(request, timeout=self.timeout) as answer:
                return None if 200 <= answer.status < 300 else f"answered {answer.status}"
        except urllib.error.HTTPError as e:
            return f"answered {e.code}"
        except (urllib.error.URLError, OSError) as e:
            return f"unreachable ({e})"

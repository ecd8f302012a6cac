"""The policy webhook against real receivers on loopback: a receiver that never answers holds no
document but its own, a redirect is not taken for a delivery, and the documents waiting are
bounded (the oldest dropped, counted)."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

from api.services.webhook import Webhook
from impact.policy.rules import parse_policies
from impact.policy.violations import ViolationChange

POLICIES = parse_policies("""\
version: 1
rules:
  - id: r
    flow: {from: {dataset: a}, to: {dataset: b}, must: never}
""")


def _change(key: str) -> ViolationChange:
    return ViolationChange("appeared", key, "r", None, date(2026, 11, 28).isoformat())


class _Receiver(http.server.BaseHTTPRequestHandler):
    got: list[str] = []
    refused: list[str] = []
    status = 200

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        import json

        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(self.status)
        if self.status == 302:
            self.send_header("Location", self.headers.get("X-Elsewhere", "/"))
        self.send_header("Content-Length", "0")
        self.end_headers()
        if self.status == 200:
            _Receiver.got.append(body["key"])
        else:
            _Receiver.refused.append(body["key"])

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    _Receiver.got, _Receiver.refused, _Receiver.status = [], [], 200
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def silent() -> Iterator[str]:
    """A receiver that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(100)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    stop.set()
    for s in held:
        s.close()
    sock.close()


def _until(holds: Any, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not holds():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_document_that_fails_waits_on_its_own_schedule(receiver: str) -> None:
    """The first document meets a receiver that refuses it (retried later); the later documents
    are delivered meanwhile, and the first too once the receiver takes it."""
    hook = Webhook(receiver, POLICIES, first_pause=3)
    _Receiver.status = 500
    hook.send([_change("first")])
    _until(lambda: _Receiver.refused == ["first"])  # refused before the receiver takes any
    _Receiver.status = 200
    hook.send([_change("second"), _change("third")])
    _until(lambda: _Receiver.got[:2] == ["second", "third"])
    _until(lambda: "first" in _Receiver.got)
    hook.close()
    assert hook.sent == 3


def test_a_receiver_that_never_answers_costs_each_try_its_timeout_only(silent: str) -> None:
    hook = Webhook(silent, POLICIES, first_pause=60, timeout=0.3)
    started = time.monotonic()
    hook.send([_change(f"d{i}") for i in range(5)])
    _until(lambda: len(hook._waiting) == 5 and all(w.tries == 1 for w in hook._waiting))
    # five first tries of 0.3 s each, not an hour of retries of the first
    assert time.monotonic() - started < 5
    hook.close()


def test_a_redirect_is_not_a_delivery(receiver: str) -> None:
    _Receiver.status = 302
    hook = Webhook(receiver, POLICIES, first_pause=60)
    hook.send([_change("moved")])
    _until(lambda: len(hook._waiting) == 1 and hook._waiting[0].tries == 1)
    assert hook.sent == 0 and _Receiver.got == []
    hook.close()


def test_the_documents_waiting_are_bounded_the_oldest_dropped_and_counted(silent: str) -> None:
    counted: list[int] = []
    hook = Webhook(silent, POLICIES, first_pause=60, timeout=5, most_waiting=3,
                   on_drop=counted.append)
    hook.send([_change(f"d{i}") for i in range(6)])
    assert hook.dropped >= 2 and counted[-1] == hook.dropped
    kept = {w.doc["key"] for w in hook._waiting}
    assert "d5" in kept and "d0" not in kept
    hook.close()

"""`lineage up` waits until the API says Neo4j is warmed (``/ready``'s ``warmed``), and never
longer than it must: an API that refuses the probe or does not say is not waited for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from api.local.processes import ready_marker, wait_ready, wait_warmed
from graph.local_service import ServiceStatus
from graph.settings import Settings


class _Ready(BaseHTTPRequestHandler):
    answers: list[tuple[int, Any]] = []
    asked = 0

    def do_GET(self) -> None:  # noqa: N802 (the handler's protocol)
        type(self).asked += 1
        status, body = self.answers[min(self.asked, len(self.answers)) - 1]
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[tuple[str, type[_Ready]]]:
    handler = type("Ready", (_Ready,), {"answers": [], "asked": 0})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()


def test_waits_until_warmed(api: tuple[str, type[_Ready]]) -> None:
    url, handler = api
    handler.answers = [(200, {"ready": True, "warmed": False})] * 3 + [(200, {"warmed": True})]
    assert wait_warmed(url, timeout=30) is True
    assert handler.asked == 4


def test_a_503_still_says_whether_warmed(api: tuple[str, type[_Ready]]) -> None:
    url, handler = api
    handler.answers = [(503, {"ready": False, "warmed": False}), (503, {"warmed": True})]
    assert wait_warmed(url, timeout=30) is True


def test_gives_up_at_the_timeout(api: tuple[str, type[_Ready]]) -> None:
    url, handler = api
    handler.answers = [(200, {"warmed": False})]
    assert wait_warmed(url, timeout=1) is False
    assert handler.asked >= 2


@pytest.mark.parametrize("status, body, expected", [
    (401, {"error": "token"}, False),  # refused: cannot tell, do not wait
    (200, {"ready": True}, True),  # an API that does not say (an older one): nothing to wait for
])
def test_an_api_that_cannot_tell_is_not_waited_for(api: tuple[str, type[_Ready]], status: int,
                                                   body: dict[str, object], expected: bool) -> None:
    url, handler = api
    handler.answers = [(status, body)]
    assert wait_warmed(url, timeout=30) is expected
    assert handler.asked == 1


def test_nothing_answering_is_not_waited_for() -> None:
    assert wait_warmed("http://127.0.0.1:9", timeout=30) is False


def test_up_waits_for_the_worker_to_say_it_is_ready_and_not_for_a_worker_gone(
        tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path)
    me = ServiceStatus("worker", "running", os.getpid(), "", tmp_path / "worker.log", "")
    marker = ready_marker(settings, os.getpid())
    marker.parent.mkdir(parents=True, exist_ok=True)
    timer = threading.Timer(0.5, lambda: marker.write_text("ready\n"))
    timer.start()
    started = time.monotonic()
    assert wait_ready(settings, me, timeout=10)
    assert 0.4 < time.monotonic() - started < 5
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not wait_ready(settings, replace(me, name="worker-2", pid=gone.pid), timeout=10)
    assert not wait_ready(settings, replace(me, name="worker-3", pid=None), timeout=1)

"""The gate as the Airflow sensor asks it (api.airflow.sensor.ask_gate), against a real local
HTTP server: an answer is passed on, a refusal or an unreachable API is a closed gate with the
reason (the sensor waits). The sensor itself runs in the real Airflow: tests/integration/test_stack.py."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from api.airflow.sensor import ask_gate
from tests.helpers import free_port


class _Api(http.server.BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        _Api.seen.append((self.path, self.headers.get("Authorization")))
        if "name=broken" in self.path:
            self.send_response(503)
            self.end_headers()
            self.wfile.write(b'{"detail": "Neo4j is not answering"}')
            return
        body = json.dumps({"open": "name=good" in self.path, "why": "as asked", "causes": []})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_the_answer_is_passed_on_with_the_token(api: str) -> None:
    assert ask_gate(api, "duckdb:///x.duckdb", "good", token="secret")["open"] is True
    assert ask_gate(api, "ns", "bad")["open"] is False
    path, auth = _Api.seen[0]
    assert path == "/api/v1/gate?namespace=duckdb%3A%2F%2F%2Fx.duckdb&name=good"
    assert auth == "Bearer secret"


def test_a_refusal_or_no_answer_is_closed_with_the_reason(api: str) -> None:
    refused = ask_gate(api, "ns", "broken")
    assert refused["open"] is False and "503" in refused["why"] and "Neo4j" in refused["why"]
    down = ask_gate(f"http://127.0.0.1:{free_port()}", "ns", "x", timeout=2)
    assert down["open"] is False and "could not be asked" in down["why"]

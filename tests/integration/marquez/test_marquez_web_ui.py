"""Marquez's own web UI, in headless Chromium, in front of our API as a restricted grant's caller
(docs/access.md): its pages render, the lineage graph shows the hidden nodes in place as redacted
ones, and no hidden name reaches the browser.

Marquez's UI is not ours and is not in the repository: the test runs when ``MARQUEZ_WEB`` names
a built copy of Marquez's ``web/`` (``fetch github:MarquezProject/marquez``, then in ``web/``:
``npm ci && npm run build``; docs/marquez.md, "Marquez's web UI on our API"), and skips
otherwise. Its own server (``setupProxy.js``, unchanged) serves the pages and passes ``/api/v1``
to a small proxy here that adds the caller's token, as a sign-in proxy would, in front of our API.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from tests.helpers import free_port, ingest_events, serving
from tests.integration.access.test_redaction import ACCESS, MARK, READER, SEEN, _events
from tests.integration.test_browser import ARTIFACTS, WebDriver

pytestmark = pytest.mark.integration

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "content-length",
              "content-encoding"}


@pytest.fixture
def marquez_web() -> Path:
    given = os.environ.get("MARQUEZ_WEB")
    if not given:
        pytest.skip("MARQUEZ_WEB is not set: build Marquez's web/ (npm ci && npm run build) and "
                    "set MARQUEZ_WEB to it (docs/marquez.md)")
    web = Path(given)
    if not (web / "dist" / "index.html").is_file() or not (web / "node_modules").is_dir():
        pytest.fail(f"MARQUEZ_WEB={web} holds no built UI (dist/index.html) or no node_modules")
    return web


@contextlib.contextmanager
def _signing_proxy(upstream: str, token: str) -> Iterator[int]:
    """A reverse proxy that adds ``Authorization: Bearer TOKEN`` to every request."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in HOP_BY_HOP | {"host", "authorization"}}
            request = urllib.request.Request(upstream + self.path, data=body, method=self.command,
                                             headers={**headers, "Authorization": f"Bearer {token}"})
            try:
                answer = urllib.request.urlopen(request, timeout=60)
            except urllib.error.HTTPError as e:
                answer = e
            with answer:
                data = answer.read()
                self.send_response(answer.status)
                for k, v in answer.headers.items():
                    if k.lower() not in HOP_BY_HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _forward

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()


@contextlib.contextmanager
def _marquez_ui(web: Path, api_port: int, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "marquez-web.log").open("w")
    process = subprocess.Popen(
        ["node", "setupProxy.js"], cwd=web, stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "MARQUEZ_HOST": "127.0.0.1", "MARQUEZ_PORT": str(api_port),
             "WEB_PORT": str(port)})
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert process.poll() is None and time.monotonic() < deadline, \
                (tmp_path / "marquez-web.log").read_text()
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def test_marquez_web_ui_as_a_restricted_grant_shows_hidden_nodes_redacted(
        graph: Graph, marquez_web: Path, tmp_path: Path) -> None:
    ingest_events(graph, _events())
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS, encoding="utf-8")
    settings = Settings(state_dir=tmp_path / "state", access=access)
    shots = ARTIFACTS / "marquez-ui-restricted"
    with serving(create_app(settings, graph)) as api, _signing_proxy(api, READER) as proxy, \
            _marquez_ui(marquez_web, proxy, tmp_path) as ui:
        browser = WebDriver(tmp_path)
        try:
            # the revenue mart's lineage: the ledger it reads (a namespace the analyst may not
            # read) is in the graph, in its place, under its opaque id
            browser.open(f"{ui}/lineage/dataset/{SEEN}/marts.revenue")
            page = browser.wait_for_text("hidden-", seconds=60)
            browser.wait_for_text("shop_enrich")
            browser.screenshot(shots / "dataset-lineage.png")
            assert MARK.decode() not in page.lower()
            for path, shown in [("/datasets", "marts.revenue"), ("/jobs", "shop_enrich"),
                                (f"/lineage/job/{SEEN}/shop_report", "dash.board")]:
                browser.open(ui + path)
                page = browser.wait_for_text(shown, seconds=60)
                time.sleep(1)  # what loads after the first name
                page = browser.wait_for_text(shown)
                browser.screenshot(shots / (path.strip("/").replace("/", "-") + ".png"))
                assert MARK.decode() not in page.lower(), path
                assert MARK.decode() not in browser.visible_text().lower(), path
        finally:
            browser.close()

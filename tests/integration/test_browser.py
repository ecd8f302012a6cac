"""Neo4j Browser, served by our local server at /browser, renders in headless Chromium.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them). The screenshot
is kept as a test artefact in ``tests/artifacts/neo4j-browser.png`` (or
``$LINEAGE_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graph.db import Graph
from graph.local_server import LocalServer
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file

pytestmark = pytest.mark.integration

ARTIFACTS = Path(os.environ.get("LINEAGE_TEST_ARTIFACTS", Path(__file__).parents[1] / "artifacts"))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--no-first-run", "--virtual-time-budget=15000"]


SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
SHIFT, ENTER, RELEASE = "\ue008", "\ue007", "\ue000"  # WebDriver's key codes


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed: apt-get install chromium chromium-driver")
    return found


@pytest.fixture
def browser_url(local_server: LocalServer) -> str:
    if os.environ.get("NEO4J_URI"):
        pytest.skip("an external Neo4j is configured; its Browser is not ours to test")
    return f"{local_server.http_url}/browser/"


def test_browser_renders_and_offers_our_bolt_address(browser_url: str, local_server: LocalServer,
                                                     tmp_path: Path) -> None:
    chromium = _chromium()
    dom = subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                          "--dump-dom", browser_url],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert "Connect to Neo4j" in dom, dom[:500]
    assert 'data-testid="boltaddress"' in dom
    assert f'value="127.0.0.1:{local_server.settings.neo4j_bolt_port}"' in dom

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "neo4j-browser.png"
    shot.unlink(missing_ok=True)
    subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile2'}",
                    "--window-size=1280,800", f"--screenshot={shot}", browser_url],
                   capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000  # a blank page is ~5 KB


def test_the_printed_browser_url_fills_in_the_connection(local_server: LocalServer, tmp_path: Path) -> None:
    """`lineage neo4j status` prints a URL whose form holds our Bolt address, user and database."""
    if os.environ.get("NEO4J_URI"):
        pytest.skip("an external Neo4j is configured; its Browser is not ours to test")
    url = local_server.status().browser_url
    dom = subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    fields = dict(re.findall(r'data-testid="(boltaddress|username|database)"[^>]*value="([^"]*)"', dom))
    assert fields == {"boltaddress": f"127.0.0.1:{local_server.settings.neo4j_bolt_port}",
                      "username": "neo4j", "database": "neo4j"}, dom[:500]


def test_api_docs_render_without_internet(tmp_path: Path) -> None:
    """/docs and /redoc draw the API's operations with every other host unreachable."""
    import socket
    import threading

    import uvicorn

    from api.app import create_app
    from graph.settings import Settings

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(Settings()), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    offline = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"
    try:
        for _ in range(100):
            if server.started:
                break
            time.sleep(0.05)
        pages = {}
        for page in ("docs", "redoc"):
            pages[page] = subprocess.run(
                [_chromium(), *FLAGS, offline, f"--user-data-dir={tmp_path / page}", "--dump-dom",
                 f"http://127.0.0.1:{port}/{page}"],
                capture_output=True, text=True, timeout=120, check=True).stdout
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert 'class="opblock' in pages["docs"] and "/api/v1/lineage" in pages["docs"], pages["docs"][:800]
    assert "Receive OpenLineage events" in pages["redoc"], pages["redoc"][:800]


class WebDriver:
    """Just enough of the W3C WebDriver protocol, spoken to Debian's chromedriver over HTTP."""

    def __init__(self, tmp_path: Path) -> None:
        driver = shutil.which("chromedriver")
        if driver is None:
            if os.environ.get("CI"):
                pytest.fail("chromedriver is not installed (.ci/run installs chromium-driver)")
            pytest.skip("chromedriver is not installed: apt-get install chromium-driver")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.process = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self.base = f"http://127.0.0.1:{port}"
        self._wait(lambda: self._call("GET", "/status"), "chromedriver to answer")
        options = {"binary": _chromium(), "args": [*FLAGS[:-1], "--window-size=1280,900",
                                                    f"--user-data-dir={tmp_path / 'webdriver'}"]}
        self.session = "/session/" + self._call("POST", "/session", {"capabilities": {
            "alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": options}}})["sessionId"]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())["value"]

    @staticmethod
    def _wait(probe: Callable[[], Any], what: str, seconds: float = 30) -> Any:
        deadline = time.monotonic() + seconds
        while True:
            try:
                found = probe()
                if found:
                    return found
            except (OSError, urllib.error.HTTPError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}")
            time.sleep(0.2)

    def open(self, url: str) -> None:
        self._call("POST", self.session + "/url", {"url": url})

    def element(self, css: str) -> str:
        """The id of the first element matching ``css``, waiting for it to appear."""
        found = self._wait(lambda: self._call("POST", self.session + "/element",
                                              {"using": "css selector", "value": css}), css)
        return str(next(iter(found.values())))

    def type(self, css: str, text: str) -> None:
        self._call("POST", f"{self.session}/element/{self.element(css)}/value", {"text": text})

    def click(self, css: str) -> None:
        """Click ``css``, again while the page refuses (an element still covered or re-rendered
        while Browser starts: WebDriver answers 400 then)."""
        def attempt() -> bool:
            self._call("POST", f"{self.session}/element/{self.element(css)}/click", {})
            return True
        self._wait(attempt, f"a click on {css}")

    def wait_for_text(self, text: str, seconds: float = 30) -> str:
        def page() -> str | None:
            source = str(self._call("GET", self.session + "/source"))
            return source if text in source else None
        return str(self._wait(page, repr(text), seconds))

    def visible_text(self) -> str:
        body = self.element("body")
        return str(self._call("GET", f"{self.session}/element/{body}/text"))

    def connect(self, url: str, password: str, tries: int = 3) -> None:
        """Open Browser at ``url``, type the password and connect, as a person would, opening the
        page again when no connection came within a minute (a loaded CI machine can take that long
        to start Browser's scripts and open its Bolt WebSocket). Fails with the page's text and a
        screenshot."""
        for attempt in range(1, tries + 1):
            try:
                self.open(url)
                self.type('input[data-testid="password"]', password)
                self.click('button[data-testid="connect"]')
                self.wait_for_text("You are connected as user", seconds=60)
                return
            except AssertionError:
                if attempt == tries:
                    shot = ARTIFACTS / "neo4j-browser-connect.png"
                    self.screenshot(shot)
                    raise AssertionError(f"Neo4j Browser did not connect after {tries} tries; "
                                         f"screenshot {shot}; the page said:\n"
                                         f"{self.visible_text()[:2000]}") from None

    def screenshot(self, path: Path) -> None:
        import base64

        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self._call("GET", self.session + "/screenshot")))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._call("DELETE", self.session)
        self.process.terminate()
        self.process.wait(timeout=10)


def test_browser_logs_in_and_runs_a_named_query(local_server: LocalServer, graph: Graph,
                                                tmp_path: Path) -> None:
    """What the README tells a user to do: open the printed URL, paste the password, run a file
    of cypher/ as it is. The answer table shows the example graph's namespaces."""
    if os.environ.get("NEO4J_URI"):
        pytest.skip("an external Neo4j is configured; its Browser is not ours to test")
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    query = (Path(__file__).parents[2] / "cypher" / "lookup" / "namespaces.cypher").read_text()
    browser = WebDriver(tmp_path)
    try:
        browser.connect(local_server.status().browser_url, local_server.password())
        # Enter runs the editor's text; Shift+Enter starts a new line, as a person types it
        browser.type('[data-testid="activeEditor"] textarea',
                     query.strip().replace("\n", SHIFT + ENTER + RELEASE))
        browser.click('[data-testid="editor-Run"]')
        try:
            page = browser.wait_for_text("Started streaming")
        except AssertionError:
            browser.screenshot(ARTIFACTS / "neo4j-browser-query.png")
            raise AssertionError("no answer to the query in Neo4j Browser; see "
                                 f"{ARTIFACTS / 'neo4j-browser-query.png'}") from None
    finally:
        browser.close()
    assert "Started streaming 2 records" in page
    assert '"postgres://warehouse:5432"' in page and '"shop-nightly"' in page
    assert "Neo.ClientError" not in page

"""Neo4j Browser, served by our local server at /browser, renders in headless Chromium.

Needs Debian's ``chromium`` (``.ci/run`` installs it). The screenshot is kept as a test artefact in
``tests/artifacts/neo4j-browser.png`` (or ``$LINEAGE_TEST_ARTIFACTS``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from graph.local_server import LocalServer

pytestmark = pytest.mark.integration

ARTIFACTS = Path(os.environ.get("LINEAGE_TEST_ARTIFACTS", Path(__file__).parents[1] / "artifacts"))
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--no-first-run", "--virtual-time-budget=15000"]


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

"""Issue 17, item 3: request heads are bounded and idle connections closed, by the protocol
`lineage serve` runs (api.http_server), over real sockets on loopback; other clients keep being
served meanwhile."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.app import create_app
from api.http_server import limited
from graph.db import Graph
from graph.settings import Settings
from ingest.log.sqlite import SQLiteLog

pytestmark = pytest.mark.integration
IDLE = 1.0


@pytest.fixture
def port(graph: Graph, tmp_path: Path) -> Iterator[int]:
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = int(s.getsockname()[1])
    config = uvicorn.Config(create_app(Settings(), graph, SQLiteLog(tmp_path / "events.db")),
                            host="127.0.0.1", port=free, log_level="warning",
                            http=limited(16 * 1024, 20, IDLE))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield free
    server.should_exit = True
    thread.join(timeout=10)


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _health(port: int) -> float:
    started = time.monotonic()
    with _connect(port) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        assert b" 200 " in _read_all(sock).split(b"\r\n", 1)[0] + b" "
    return time.monotonic() - started


def test_a_huge_header_is_431_before_it_is_read_and_others_are_served(port: int) -> None:
    with _connect(port) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ")
        sent = 0
        try:
            while sent < 64 * 1024 * 1024:  # the server must stop reading long before this
                sock.sendall(b"a" * 65536)
                sent += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = _read_all(sock)
    assert sent < 8 * 1024 * 1024, f"the server read {sent} bytes of header"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 431")
    assert _health(port) < 2


def test_too_many_header_lines_are_431(port: int) -> None:
    with _connect(port) as sock:
        head = b"GET /health HTTP/1.1\r\nHost: localhost\r\n" + b"".join(
            f"X-{i}: 1\r\n".encode() for i in range(50)) + b"\r\n"
        sock.sendall(head)
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 431") and b"header lines" in answer


def test_a_body_with_its_head_in_one_chunk_is_not_taken_for_a_big_head(port: int) -> None:
    import json

    from tests.helpers import new_run_id, run_event

    events = json.dumps([run_event("COMPLETE", new_run_id(), f"j{i}") for i in range(200)]).encode()
    assert len(events) > 16 * 1024
    with _connect(port) as sock:
        sock.sendall(b"POST /api/v1/lineage HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\nContent-Length: "
                     + str(len(events)).encode() + b"\r\n\r\n" + events)
        assert _read_all(sock).startswith(b"HTTP/1.1 201")


@pytest.mark.parametrize("sent", [b"", b"GET /health HTTP/1.1\r\nHost: loc",
                                  b"POST /api/v1/lineage HTTP/1.1\r\nHost: localhost\r\n"
                                  b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\":"])
def test_connections_that_stall_are_closed_after_the_idle_timeout(port: int, sent: bytes) -> None:
    with _connect(port) as sock:
        sock.sendall(sent)
        started = time.monotonic()
        answer = _read_all(sock)  # returns when the server closes the connection
        waited = time.monotonic() - started
    assert IDLE * 0.8 < waited < IDLE + 5
    assert answer == b"" if not sent else answer.startswith(b"HTTP/1.1 408")
    assert _health(port) < 2


@pytest.mark.parametrize("head", [b"", b"POST /api/v1/lineage HTTP/1.1\r\nHost: localhost\r\n"
                                  b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"])
def test_a_request_trickled_a_byte_at_a_time_is_cut_at_its_deadline(port: int, head: bytes) -> None:
    """Slowloris: never idle for IDLE, yet never done: the head (or the body) has its own time."""
    trickle = head or b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 100
    with _connect(port) as sock:
        sock.sendall(trickle[:len(head) + 1])
        started = time.monotonic()
        answer = b""
        for i in range(len(head) + 1, len(trickle) + 100):
            time.sleep(IDLE / 4)
            try:
                sock.sendall(trickle[i:i + 1] or b"a")
            except OSError:  # closed by the server
                break
            if time.monotonic() - started > 3 * IDLE + 5:
                break
        answer = _read_all(sock)
        waited = time.monotonic() - started
    assert waited < (4 if head else 2) * IDLE + 1000 / 16384 + 2, waited
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert _health(port) < 2


def test_a_slow_but_steady_upload_is_not_cut(port: int) -> None:
    body = b'{"eventTime": "2024-01-01T00:00:00Z", "x": "' + b"a" * 40 + b'"}'
    with _connect(port) as sock:
        sock.sendall(b"POST /api/v1/lineage HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n")
        for i in range(0, len(body), 20):  # 2 s in all, never IDLE without data
            time.sleep(IDLE / 2)
            sock.sendall(body[i:i + 20])
        answer = _read_all(sock)
    assert answer.startswith(b"HTTP/1.1 422")  # answered (JSON, not an event), not cut off


def test_the_openlineage_client_reads_the_413_of_an_oversized_event_and_can_compress(
        port: int) -> None:
    """What producers use: the OpenLineage Python client's HTTP transport gets a readable 413
    (not a broken pipe) for an event over the limit, and a gzip-compressed event is accepted."""
    import requests
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    from tests.helpers import new_run_id, run_event

    def transport(compression: str | None) -> HttpTransport:
        return HttpTransport(HttpConfig.from_dict({
            "type": "http", "url": f"http://127.0.0.1:{port}", "endpoint": "api/v1/lineage",
            "timeout": 30, "retry": {"total": 0},
            **({"compression": compression} if compression else {})}))

    huge = run_event("COMPLETE", new_run_id(), "huge",
                     run_facets={"big": {"_producer": "t", "blob": "x" * (12 * 1024 * 1024)}})
    # the client's serde takes a plain dict as well as its event classes
    with pytest.raises(requests.HTTPError) as refused:
        transport(None).emit(huge)  # type: ignore[arg-type]
    response = refused.value.response
    assert response is not None and response.status_code == 413
    assert "limit" in response.json()["detail"]
    answer = transport("gzip").emit(run_event("COMPLETE", new_run_id(), "small"))  # type: ignore[arg-type]
    assert answer.status_code == 201


# what Java's java.net.http.HttpClient sends over http:// by default (it offers HTTP/2)
H2C_OFFER = (b"Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA"
             b"\r\nUpgrade: h2c\r\nUser-Agent: Java-http-client/17.0.15\r\n")


def _event() -> bytes:
    import json

    from tests.helpers import new_run_id, run_event

    return json.dumps(run_event("COMPLETE", new_run_id(), "from_java")).encode()


def _reply(sock: socket.socket) -> bytes:
    """One response on a kept-alive connection (its head, and its body by Content-Length)."""
    got = b""
    while b"\r\n\r\n" not in got:
        got += sock.recv(65536)
    head, _, body = got.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


@pytest.mark.parametrize("split", [None, 20, 120])
def test_an_offer_to_upgrade_to_h2c_is_ignored_and_the_body_read(port: int, split: int | None) -> None:
    """The JDK client's bytes: the event is taken (201) on the ingest route and on a Marquez
    write, and the connection goes on as HTTP/1.1 (a second request on it is answered), whether
    the head comes in one piece or split (even inside the upgrade headers)."""
    event = _event()
    post = (b"POST /api/v1/lineage HTTP/1.1\r\nHost: localhost\r\n" + H2C_OFFER
            + b"Content-Type: application/json\r\nContent-Length: " + str(len(event)).encode()
            + b"\r\n\r\n" + event)
    put = (b"PUT /api/v1/namespaces/from_java HTTP/1.1\r\nHost: localhost\r\n" + H2C_OFFER
           + b'Content-Type: application/json\r\nContent-Length: 21\r\n\r\n{"ownerName": "java"}')
    with _connect(port) as sock:
        for request, status in ((post, b"HTTP/1.1 201"), (put, b"HTTP/1.1 200")):
            if split is None:
                sock.sendall(request)
            else:
                sock.sendall(request[:split])
                time.sleep(0.05)
                sock.sendall(request[split:])
            answer = _reply(sock)
            assert answer.startswith(status), answer[:300]
        assert b'"ownerName":"java"' in answer.replace(b" ", b"")


def test_curl_and_the_jdk_client_offering_http2_are_served(port: int, tmp_path: Path) -> None:
    """The real clients: curl --http2 and a Java program on java.net.http.HttpClient (its
    default: HTTP/2, so an h2c offer over http://)."""
    import shutil
    import subprocess

    event = tmp_path / "event.json"
    event.write_bytes(_event())
    url = f"http://127.0.0.1:{port}/api/v1/lineage"
    if shutil.which("curl"):
        done = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--http2",
                               "-H", "Content-Type: application/json", "--data-binary",
                               f"@{event}", url], capture_output=True, text=True, timeout=60)
        assert done.stdout == "201", done.stdout + done.stderr
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on the PATH (Java 17 is a requirement of the project)")
    program = tmp_path / "Post.java"
    program.write_text("""
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;

public class Post {
    public static void main(String[] args) throws Exception {
        HttpClient client = HttpClient.newHttpClient();  // HTTP/2 by default: offers h2c
        HttpRequest request = HttpRequest.newBuilder(URI.create(args[0]))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(Files.readString(Path.of(args[1]))))
            .build();
        HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
        System.out.print(response.statusCode() + " " + response.version());
    }
}
""")
    done = subprocess.run([java, str(program), url, str(event)], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout == "201 HTTP_1_1", done.stdout + done.stderr


@pytest.mark.parametrize("connection", [b"", b"Connection: close\r\n"])
def test_a_body_too_large_sent_whole_before_reading_gets_a_readable_413(
        port: int, connection: bytes) -> None:
    """A client that sends all of an 81 MB body before it reads (curl, most scripts) reads the
    413: the server answers, then takes in and drops the rest of the body (kept alive, or
    lingering before it closes), never a reset."""
    body = b"[" + b" " * (81 * 2**20) + b"]"
    with _connect(port) as sock:
        sock.sendall(b"POST /api/v1/lineage HTTP/1.1\r\nHost: localhost\r\n" + connection +
                     b"Content-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n")
        sock.sendall(body)
        answer = _read_all(sock) if connection else _reply(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert _health(port) < 5  # the server goes on serving

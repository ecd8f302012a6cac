"""The benches' own logic that a wrong number would hide behind."""

import argparse
import http.server
import json
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from bench.generate import JOB_NS, NS, events, spec_complete, tables
from bench.peer import _depths, renamed
from bench.peer_io import get
from bench.wire import Connection, payloads


def test_renamed_events_are_new_runs_of_new_jobs_on_new_datasets() -> None:
    # bench.peer's arrays row posts renamed copies and counts them queryable once their runs have
    # ended: copies that kept the runs' ids found the originals' runs already ended
    evs = [spec_complete(e) for e in events(tables(30, seed=3), seed=3, starts=True)]
    copies = renamed(evs, "arrays")

    ids = {e["run"]["runId"] for e in evs}
    new_ids = {e["run"]["runId"] for e in copies}
    assert len(new_ids) == len(ids) and not new_ids & ids
    # a START and its COMPLETE still share one run, and a child still names its (renamed) parent
    pairs = {(a["run"]["runId"], b["run"]["runId"]) for a, b in zip(evs, copies, strict=True)}
    assert len(pairs) == len(ids)
    parents = {a["run"]["facets"]["parent"]["run"]["runId"]: b["run"]["facets"]["parent"]["run"]["runId"]
               for a, b in zip(evs, copies, strict=True)}
    assert all(old != new for old, new in parents.items())
    assert renamed(evs, "arrays") == copies  # the same copies every time
    assert {e["job"]["namespace"] for e in copies} == {f"{JOB_NS}-arrays"}
    assert all(o["namespace"] == "warehouse://arrays:5432" for e in copies for o in e["outputs"])
    assert not any(NS in str(e) for e in copies)


def test_depths_are_read_from_a_comma_separated_list() -> None:
    assert _depths("10") == (10,)
    assert _depths("2, 5,10,") == (2, 5, 10)
    for bad in ("", "0,2", "x", "2;5"):
        with pytest.raises(argparse.ArgumentTypeError):
            _depths(bad)


class _Slow(http.server.BaseHTTPRequestHandler):
    """Answers /fast at once and /slow after 1.5 s; counts the requests it got."""

    protocol_version = "HTTP/1.1"  # keeps the connection alive, as Marquez and our API do
    seen: list[str] = []

    def do_GET(self) -> None:
        type(self).seen.append(self.path)
        if self.path == "/slow":
            time.sleep(1.5)
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slow_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    _Slow.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_a_kept_alive_connection_takes_each_requests_own_timeout(slow_server: str) -> None:
    # opened with a short timeout, then asked with a long one: the long one holds
    assert get(slow_server + "/fast", timeout=0.5)[1] == 200
    ms, status, _ = get(slow_server + "/slow", timeout=10)
    assert status == 200 and ms >= 1500
    assert _Slow.seen == ["/fast", "/slow"]


def test_a_request_that_timed_out_is_not_sent_again(slow_server: str) -> None:
    # the peer may still be working on it: sending it again would run it twice at once
    assert get(slow_server + "/fast", timeout=10)[1] == 200
    ms, status, _ = get(slow_server + "/slow", timeout=0.3)
    assert status == 0 and ms < 1500
    time.sleep(1.6)
    assert _Slow.seen == ["/fast", "/slow"]


class _Raw(socketserver.BaseRequestHandler):
    """Answers each request on a connection with the next of ``answers`` (raw bytes), reading the
    request's head and content-length body first; closes after the last answer."""

    answers: list[bytes] = []
    bodies: list[bytes] = []

    def handle(self) -> None:
        buf = b""
        for answer in type(self).answers:
            while b"\r\n\r\n" not in buf:
                chunk = self.request.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, _, buf = buf.partition(b"\r\n\r\n")
            length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), b"0"))
            while len(buf) < length:
                buf += self.request.recv(65536)
            type(self).bodies.append(buf[:length])
            buf = buf[length:]
            self.request.sendall(answer)


@pytest.fixture
def raw_server() -> Iterator[tuple[str, int]]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Raw)
    server.daemon_threads = True
    _Raw.bodies = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield "127.0.0.1", server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_lean_client_reads_bodies_by_length_in_chunks_and_up_to_the_close(
        raw_server: tuple[str, int]) -> None:
    _Raw.answers = [
        b"HTTP/1.1 201 Created\r\nContent-Length: 15\r\n\r\n{\"last_seq\": 7}",
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nabcd\r\n3\r\nefg\r\n0\r\nT: 1\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.0 200 OK\r\n\r\nuntil the end",
    ]
    conn = Connection(*raw_server, timeout=5)
    assert conn.request("POST", "/api/v1/lineage", b'{"a": 1}') == (201, b'{"last_seq": 7}')
    assert conn.request("GET", "/x") == (200, b"abcdefg")
    assert conn.request("POST", "/y", b"") == (204, b"")
    assert conn.request("GET", "/z") == (200, b"until the end")
    assert _Raw.bodies == [b'{"a": 1}', b"", b"", b""]


def test_the_lean_client_opens_again_a_kept_alive_connection_the_server_closed(
        raw_server: tuple[str, int]) -> None:
    # each connection answers one request and closes without saying so, as a server does with
    # an idle kept-alive connection: the next request goes out once more on a new connection
    _Raw.answers = [b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}"]
    conn = Connection(*raw_server, timeout=5)
    for _ in range(3):
        assert conn.request("POST", "/api/v1/lineage", b"[]") == (201, b"{}")
    assert _Raw.bodies == [b"[]"] * 3


def test_the_lean_client_does_not_send_again_a_request_that_timed_out(slow_server: str) -> None:
    host, port = slow_server.removeprefix("http://").split(":")
    conn = Connection(host, int(port), timeout=0.3)
    with pytest.raises(TimeoutError):
        conn.request("GET", "/slow")
    time.sleep(1.6)
    assert _Slow.seen == ["/slow"]
    conn.timeout = 5
    assert conn.request("GET", "/fast") == (200, b"{}")


def test_each_clients_bodies_are_its_share_of_the_events_encoded() -> None:
    evs = [{"n": i} for i in range(7)]
    one = payloads(evs, 3, 1)
    assert [[json.loads(b)["n"] for b in bodies] for bodies in one] == [[0, 3, 6], [1, 4], [2, 5]]
    two = payloads(evs, 2, 2)
    assert [[[e["n"] for e in json.loads(b)] for b in bodies] for bodies in two] == [
        [[0, 2], [4, 6]], [[1, 3], [5]]]

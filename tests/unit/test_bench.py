"""The benches' own logic that a wrong number would hide behind."""

import argparse
import http.server
import threading
import time
from collections.abc import Iterator

import pytest

from bench.generate import JOB_NS, NS, events, spec_complete, tables
from bench.peer import _depths, _renamed
from bench.peer_io import get


def test_renamed_events_are_new_runs_of_new_jobs_on_new_datasets() -> None:
    # bench.peer's arrays row posts renamed copies and counts them queryable once their runs have
    # ended: copies that kept the runs' ids found the originals' runs already ended
    evs = [spec_complete(e) for e in events(tables(30, seed=3), seed=3, starts=True)]
    copies = _renamed(evs, "arrays")

    ids = {e["run"]["runId"] for e in evs}
    new_ids = {e["run"]["runId"] for e in copies}
    assert len(new_ids) == len(ids) and not new_ids & ids
    # a START and its COMPLETE still share one run, and a child still names its (renamed) parent
    pairs = {(a["run"]["runId"], b["run"]["runId"]) for a, b in zip(evs, copies, strict=True)}
    assert len(pairs) == len(ids)
    parents = {a["run"]["facets"]["parent"]["run"]["runId"]: b["run"]["facets"]["parent"]["run"]["runId"]
               for a, b in zip(evs, copies, strict=True)}
    assert all(old != new for old, new in parents.items())
    assert _renamed(evs, "arrays") == copies  # the same copies every time
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

"""Issue 17, items 1 and 2: no event, accepted or not, stops ingestion or wedges the event log.

Against a real API (uvicorn on loopback), the real worker and the real Neo4j."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import ingest.pipeline as pipeline_module
import ingest.transform as transform_module
from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.limits import MAX_DEPTH
from ingest.log.sqlite import SQLiteLog
from ingest.worker import CONSUMER, Worker
from tests.helpers import dataset, new_run_id, rows, run_event

pytestmark = pytest.mark.integration
BIG = 1180591620717411303424  # 2**70


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def log(tmp_path: Path) -> SQLiteLog:
    return SQLiteLog(tmp_path / "events.db")


@pytest.fixture
def url(graph: Graph, log: SQLiteLog) -> Iterator[str]:
    """A real uvicorn server on loopback with the app on the test graph and log."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(Settings(), graph, log), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def _post(url: str, body: bytes, ctype: str = "application/json") -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(f"{url}/api/v1/lineage", data=body, method="POST",
                                 headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _good(name: str) -> dict[str, Any]:
    return run_event("COMPLETE", new_run_id(), name, outputs=[dataset(f"{name}_out", columns=["a"])])


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth):
        value = {"x": value}
    return value


def _poisons() -> dict[str, dict[str, Any]]:
    """Events each of which stopped the worker for ever before issue 17."""
    def out(**facets: Any) -> dict[str, Any]:
        return run_event("COMPLETE", new_run_id(), "poison", outputs=[{
            "namespace": "ns", "name": "poisoned", **facets}])
    return {
        "rowCount beyond 64 bits": out(outputFacets={"outputStatistics": {"rowCount": BIG}}),
        "2**64 - 1 (orjson takes it)": out(outputFacets={"outputStatistics": {"size": 2**64 - 1}}),
        "below -2**63": out(outputFacets={"outputStatistics": {"rowCount": -(2**63) - 1}}),
        "dataQualityMetrics": run_event("COMPLETE", new_run_id(), "poison", inputs=[{
            "namespace": "ns", "name": "in", "inputFacets": {"dataQualityMetrics": {"rowCount": BIG}}}]),
        "dataSource.name": out(facets={"dataSource": {"name": BIG, "uri": "x"}}),
        "600 deep custom facet": run_event("COMPLETE", new_run_id(), "poison",
                                           run_facets={"custom": _nested(600)}),
        "lone surrogate": run_event("COMPLETE", new_run_id(), "poison \ud800"),
        "surrogate in a key": run_event("COMPLETE", new_run_id(), "poison",
                                        run_facets={"custom": {"k\udfff": 1}}),
    }


def _drain(graph: Graph, log: SQLiteLog) -> Worker:
    worker = Worker(graph, log)
    for _ in range(100):
        if worker.lag() == 0:
            break
        worker.run_once()
    assert worker.lag() == 0, "the worker did not get through the log"
    return worker


def _jobs(graph: Graph) -> set[str]:
    return {r["n"] for r in rows(graph, "MATCH (j:Job) RETURN j.name AS n")}


def test_each_poison_event_among_good_ones_is_refused_with_its_path_and_the_good_ones_load(
        url: str, graph: Graph, log: SQLiteLog) -> None:
    poisons = _poisons()
    body: list[Any] = []
    for i, event in enumerate(poisons.values()):
        body += [_good(f"good_{i}"), event]
    # json.dumps writes a lone surrogate as the escape \ud800, as a producer's JSON library would
    status, answer = _post(url, json.dumps(body).encode())
    assert status == 201, answer
    assert answer["accepted"] == len(poisons)
    rejected = {r["index"]: " ".join(r["reasons"]) for r in answer["rejected"]}
    assert sorted(rejected) == [2 * i + 1 for i in range(len(poisons))]
    reasons = list(rejected.values())
    assert "outputs[0].outputFacets.outputStatistics.rowCount" in reasons[0] and "64-bit" in reasons[0]
    assert "outputStatistics.size" in reasons[1] and "below" not in reasons[1]
    assert "inputs[0].inputFacets.dataQualityMetrics.rowCount" in reasons[3]
    assert "outputs[0].facets.dataSource.name" in reasons[4]
    assert f"deeper than {MAX_DEPTH}" in reasons[5] and "run.facets.custom" in reasons[5]
    assert "job.name" in reasons[6] and "surrogate" in reasons[6]
    assert "surrogate" in reasons[7]
    _drain(graph, log)
    assert _jobs(graph) == {f"good_{i}" for i in range(len(poisons))}


def test_non_finite_numbers_are_not_json(url: str) -> None:
    good = json.dumps(_good("fine"))
    for constant in ("NaN", "Infinity", "-Infinity"):
        status, answer = _post(url, f'{{"eventTime": {constant}}}'.encode())
        assert status == 400 and constant in answer["detail"], answer
    status, answer = _post(url, ("[" + good + ',{"x": 1e999}]').encode())
    assert status == 201 and "not finite" in " ".join(answer["rejected"][0]["reasons"])


def test_poison_events_already_in_the_log_are_dead_lettered_and_the_worker_goes_on(
        graph: Graph, log: SQLiteLog) -> None:
    """A log written before the checks (or with LINEAGE_LOG_RAW_EVENTS) still holds such events:
    the worker dead-letters each and loads everything after it."""
    poisons = [e for name, e in _poisons().items() if "surrogate" not in name]  # not encodable
    events: list[Any] = []
    for i, event in enumerate(poisons):
        events += [_good(f"good_{i}"), event]
    log.append(events)
    _drain(graph, log)
    assert _jobs(graph) == {f"good_{i}" for i in range(len(poisons))}
    letters = log.dead_letters()
    assert [d.seq for d in letters] == [2 * i + 2 for i in range(len(poisons))]
    assert all(d.reason for d in letters)


def test_an_event_that_breaks_the_transform_is_dead_lettered_alone(
        graph: Graph, log: SQLiteLog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong with one event's preparation (a bug of ours) costs that event only."""
    real = transform_module.transform

    def fragile(event: Any, cap: int = 16_384, received: float | None = None) -> Any:
        if event.raw["job"]["name"] == "boom":
            raise RuntimeError("transform bug")
        return real(event, cap, received)

    monkeypatch.setattr(pipeline_module, "transform", fragile)
    log.append([_good("a"), _good("boom"), _good("b")])
    _drain(graph, log)
    assert _jobs(graph) == {"a", "b"}
    [letter] = log.dead_letters()
    assert letter.seq == 2 and "RuntimeError: transform bug" in letter.reason


def test_a_batch_failing_for_an_unexpected_reason_is_retried_in_parts(
        graph: Graph, log: SQLiteLog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even an error outside the pipeline's own handling (here: in writing the dead letters of a
    batch) does not stop the worker: the batch is retried in halves."""
    log.append([_good("one"), _good("two"), {"not": "an event"}, _good("three")])
    real = log.add_dead_letter
    calls = {"n": 0}

    def flaky(seq: int, event: Any, reason: str) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("unexpected")
        real(seq, event, reason)

    monkeypatch.setattr(log, "add_dead_letter", flaky)
    _drain(graph, log)
    assert _jobs(graph) == {"one", "two", "three"}
    assert [d.seq for d in log.dead_letters()] == [3]
    assert log.position(CONSUMER) == 4


def test_a_batch_failing_for_an_unexpected_reason_is_bisected_then_full_batches_again(
        graph: Graph, log: SQLiteLog, monkeypatch: pytest.MonkeyPatch) -> None:
    """One event that breaks the load of any batch holding it (a bug of ours) among 256: the
    worker halves its batches until that event is alone, dead-letters it, and takes full batches
    again at once; every other event loads."""
    real = pipeline_module.Ingester.load

    def fragile(self: Any, prepared: Any, report: Any) -> Any:
        if any(r["name"] == "job_100" for r in prepared.plan.rows.jobs):
            raise RuntimeError("load bug")
        return real(self, prepared, report)

    monkeypatch.setattr(pipeline_module.Ingester, "load", fragile)
    log.append([_good(f"job_{i}") for i in range(256)])
    worker = Worker(graph, log, batch=64)
    sizes = []
    for _ in range(40):
        result = worker.run_once()
        sizes.append(None if result is None else result.events)
        if worker.lag() == 0:
            break
    assert worker.lag() == 0
    # the first full batch (1-64) loads; 65-128 fails and is halved (at most log2(64) failures)
    # down to the one event, dead-lettered; then a full batch at once
    assert sizes[:2] == [64, None], sizes
    found = sizes.index(1)
    assert sizes.count(None) <= 6 and sizes[found + 1] == 64, sizes
    assert sum(s or 0 for s in sizes) == 256 and len(sizes) <= 16, sizes
    assert _jobs(graph) == {f"job_{i}" for i in range(256)} - {"job_100"}
    [letter] = log.dead_letters()
    assert letter.seq == 101 and "RuntimeError: load bug" in letter.reason


def test_lone_surrogates_under_concurrent_load_fail_alone_and_leave_the_log_usable(
        url: str, graph: Graph, log: SQLiteLog, tmp_path: Path) -> None:
    """48 clients post good events while three post lone surrogates: every good request is 201,
    each bad one 400 with the reason; another process's log connection and the worker go on."""
    bad = json.dumps(run_event("COMPLETE", new_run_id(), "x", run_facets={"c": {"x": "\ud800"}}))

    def client(k: int) -> tuple[int, int, dict[str, Any]]:
        if k % 17 == 5:
            status, answer = _post(url, bad.encode())
        else:
            status, answer = _post(url, json.dumps([_good(f"c{k}_{j}") for j in range(3)]).encode())
        return k, status, answer

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(client, range(51)))
    bad_ones = [r for r in results if r[0] % 17 == 5]
    good_ones = [r for r in results if r[0] % 17 != 5]
    assert len(bad_ones) == 3 and len(good_ones) == 48
    assert all(s == 422 and "surrogate" in json.dumps(a) for _, s, a in bad_ones)
    assert all(s == 201 and a["accepted"] == 3 for _, s, a in good_ones), good_ones
    other = SQLiteLog(log.path)  # another process's connection: not blocked by a stuck transaction
    assert other.writable() and other.count() == 144
    status, _ = _post(url, json.dumps(_good("after")).encode())
    assert status == 201
    with urllib.request.urlopen(f"{url}/ready", timeout=10) as r:
        assert r.status == 200
    _drain(graph, log)
    assert len(_jobs(graph)) == 145


def test_a_log_append_that_fails_midway_rolls_back_and_the_log_stays_usable(log: SQLiteLog) -> None:
    """Whatever an append raises, its transaction is rolled back: nothing half-written, and the
    same connection and others can append at once."""
    with pytest.raises(UnicodeEncodeError):  # what a lone surrogate did in the API before
        log.append_encoded(['{"a":1}', '"\ud800"'])
    assert log.count() == 0
    assert log.append([{"b": 2}]) == [1]
    assert SQLiteLog(log.path).append([{"c": 3}]) == [2]


def _indexed() -> list[tuple[str, str]]:
    """Every (label, property) the schema indexes, read from cypher/schema/constraints.cypher."""
    import re

    text = (Path(__file__).parents[2] / "cypher" / "schema" / "constraints.cypher").read_text()
    found = []
    for label, props in re.findall(r"FOR \(\w+:([\w|]+)\)\s+(?:REQUIRE|ON(?: EACH)?)\s+\[?\(?([^)\]]+)",
                                   text):
        for one in label.split("|"):
            found += [(one, p.strip().split(".", 1)[1]) for p in props.split(",")]
    return sorted(set(found))


def _at(path: list[Any], value: str) -> dict[str, Any]:
    """An event with ``value`` at ``path`` (keys and list indexes; a missing step is made)."""
    event = run_event("COMPLETE", new_run_id(), "job", inputs=[dataset("in", columns=["a"])],
                      outputs=[dataset("out", columns=["a"])])
    holder: Any = event
    for step, nxt in zip(path, path[1:], strict=False):
        if isinstance(holder, dict) and step not in holder:
            holder[step] = [] if isinstance(nxt, int) else {}
        if isinstance(holder, list) and step >= len(holder):
            holder.append([] if isinstance(nxt, int) else {})
        holder = holder[step]
    if isinstance(holder, list):
        holder.append(value)
    else:
        holder[path[-1]] = value
    return event


def _filled(path: list[Any], value: str) -> dict[str, Any]:
    """The event of :func:`_at` with what the facet around the value needs to be read."""
    event = _at(path, value)
    run = event["run"]["facets"]
    out = event["outputs"][0]["facets"]
    if "parent" in run:
        run["parent"].setdefault("run", {"runId": new_run_id()})
        run["parent"]["job"].setdefault("namespace", "ns")
        run["parent"]["job"].setdefault("name", "parent")
    for ident in out.get("symlinks", {}).get("identifiers", []):
        ident.setdefault("namespace", "ns")
        ident.setdefault("name", "alias")
        ident.setdefault("type", "TABLE")
    if "lifecycleStateChange" in out:
        out["lifecycleStateChange"]["lifecycleStateChange"] = "RENAME"
        out["lifecycleStateChange"]["previousIdentifier"].setdefault("namespace", "ns")
        out["lifecycleStateChange"]["previousIdentifier"].setdefault("name", "old")
    lineage = out.get("columnLineage")
    if lineage:
        for spec in lineage.get("fields", {}).values():
            for source in spec["inputFields"]:
                for key, default in (("namespace", "ns"), ("name", "in"), ("field", "a")):
                    source.setdefault(key, default)
        for source in lineage.get("dataset", []):
            for key, default in (("namespace", "ns"), ("name", "in"), ("field", "a")):
                source.setdefault(key, default)
    schema = out.get("schema")
    if schema and len(schema["fields"]) > 1:
        schema["fields"][1].setdefault("type", "STRUCT")
        schema["fields"][1].setdefault("name", "nested")
    return event


IN_OUT = ["outputs", 0, "facets"]
NAMED_PLACES: dict[str, list[Any]] = {
    "the parent's job namespace": ["run", "facets", "parent", "job", "namespace"],
    "the parent's job name": ["run", "facets", "parent", "job", "name"],
    "a symlink's namespace": [*IN_OUT, "symlinks", "identifiers", 0, "namespace"],
    "a symlink's name": [*IN_OUT, "symlinks", "identifiers", 0, "name"],
    "a column lineage input's namespace": [*IN_OUT, "columnLineage", "fields", "a", "inputFields", 0,
                                           "namespace"],
    "a column lineage input's dataset": [*IN_OUT, "columnLineage", "fields", "a", "inputFields", 0,
                                         "name"],
    "a column lineage input's field": [*IN_OUT, "columnLineage", "fields", "a", "inputFields", 0,
                                       "field"],
    "a dataset-wide column lineage input": [*IN_OUT, "columnLineage", "dataset", 0, "field"],
    "a nested schema field": [*IN_OUT, "schema", "fields", 1, "fields", 0, "name"],
    "the dataset type": [*IN_OUT, "datasetType", "datasetType"],
    "a renamed dataset's previous name": [*IN_OUT, "lifecycleStateChange", "previousIdentifier",
                                          "name"],
}


@pytest.mark.parametrize("place", sorted(NAMED_PLACES))
def test_every_name_the_graph_indexes_is_bounded_at_the_door(graph: Graph, place: str) -> None:
    """Each place an event names something: a short marker there lands in a property the schema
    indexes (so the place matters), and 9 KB there is refused by validation with its path, never
    acknowledged and then dead-lettered by Neo4j ("Property value is too large to index")."""
    from ingest.validate import validate
    from tests.helpers import ingest_events

    path = NAMED_PLACES[place]
    marker = f"marker_{abs(hash(place)) % 10**8}"
    assert ingest_events(graph, [_filled(path, marker)]).rejected == []
    landed = [(label, prop) for label, prop in _indexed() if rows(
        graph, f"MATCH (n:{label}) WHERE toLower(toString(n.`{prop}`)) CONTAINS $m RETURN n LIMIT 1",
        m=marker)]
    assert landed, f"{place}: the marker is in no indexed property"
    refused = validate(_filled(path, "x" * 9000))
    assert isinstance(refused, list) and any("over the limit" in r for r in refused), refused

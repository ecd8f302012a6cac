"""Policy rules kept checked as the worker loads (impact.policy.watch), against the real Neo4j: after
every batch, whatever the order the events arrive in and however they are batched, the stored
violations are those a full check finds; each violation's first and last sighting and its
clearing are kept."""

from __future__ import annotations

import http.server
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graph.db import Graph
from impact.policy.check import check
from impact.policy.rules import Policies, parse_policies, read_policies
from impact.policy.watch import PolicyWatch
from ingest import commands
from ingest.log.sqlite import SQLiteLog
from ingest.worker import Worker
from tests.helpers import dataset, new_run_id, rows, run_event

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parents[3]
SHOP = ROOT / "examples" / "events" / "shop.ndjson"
WH = "postgres://warehouse:5432"
DAY = date(2026, 11, 27)

MORE_RULES = """
  - id: users-cleaned-first
    flow: {from: {dataset: raw.users}, to: {dataset: "*"}, must: through,
           through: {job: clean_users}}
  - id: pii-never-in-marts
    flow: {from: {tag: PII}, to: {dataset: "marts.*"}, must: never}
  - id: eu-in-eu
    residency:
      regions: {eu: {tag: region:eu}, us: {tag: region:us}}
      unregioned: allowed
  - id: dashboards-from-orders
    sources: {sinks: {dataset: "dashboards.*"}, allow: {dataset: raw.orders}}
  - id: marts-documented
    metadata: {datasets: {tag: tier:critical}, require: [owner, description]}
  - id: copied-email-masked
    flow: {from: {dataset: src, column: email}, to: {dataset: dst}, must: masked}
"""


def _policies() -> Policies:
    text = (ROOT / "examples" / "policies" / "shop.yaml").read_text() + MORE_RULES
    return parse_policies(text, "watched.yaml")


def _restated(events: list[dict[str, Any]], days: int) -> list[dict[str, Any]]:
    """``events`` again ``days`` later, as the next nights' runs: new run ids (the same for a
    run's START and COMPLETE, and for a parent and its children), the same lineage."""
    ids: dict[str, str] = {}
    later = []
    for event in events:
        text = json.dumps(event)
        for run_id in re.findall(r'"runId": "([0-9a-f-]{36})"', text):
            ids.setdefault(run_id, new_run_id())
            text = text.replace(run_id, ids[run_id])
        again = json.loads(text)
        at = datetime.fromisoformat(again["eventTime"].replace("Z", "+00:00"))
        again["eventTime"] = (at + timedelta(days=days)).isoformat().replace("+00:00", "Z")
        later.append(again)
    return later


def _entries() -> list[dict[str, Any]]:
    """The shop's events and its next night's (the same lineage), events that place some of it
    in regions and send EU data to a US table, a copy that is raw, then masked, then raw again,
    and tags set through the API (commands) on the way."""
    shop = [json.loads(line) for line in SHOP.read_text().splitlines() if line.strip()]
    events = shop + _restated(shop, 1)
    events += [_copy_email(day, masking=day == 2) for day in (1, 2, 3)]
    events.append(run_event("COMPLETE", new_run_id(), "ship_us", ns="shop-nightly", inputs=[
        dataset("marts.revenue_by_country", WH)], outputs=[dataset(
            "us.revenue_copy", WH, tags={"tags": [{"key": "region", "value": "us"}]})]))
    events.append(run_event("COMPLETE", new_run_id(), "mark_eu", ns="shop-nightly", outputs=[
        dataset("marts.revenue_by_country", WH,
                tags={"tags": [{"key": "region", "value": "eu"}]})],
        time="2024-06-01T01:00:00Z"))
    tags = [commands.command("tag_add", {"kind": "dataset", "namespace": WH, "name": name,
                                         "field": None, "tag": "tier:critical", "by": "api"}).body()
            for name in ("marts.orders_enriched", "raw.orders")]
    return events + tags


def _stored(graph: Graph) -> set[tuple[str, str, bool]]:
    return {(r["key"], r["label"], r["counts"])
            for r in graph.read("policies/open_violations", rules=None, anchors=None)}


def _full(graph: Graph, policies: Policies) -> set[tuple[str, str, bool]]:
    return {(v.key, v.label, v.counts) for v in check(graph, policies, today=DAY).violations}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_every_batch_the_stored_violations_are_a_full_checks(
        graph: Graph, tmp_path: Path, seed: int) -> None:
    chance = random.Random(seed)
    entries = _entries()
    chance.shuffle(entries)
    log = SQLiteLog(tmp_path / "events.db")
    for entry in entries:
        if commands.is_command(entry):
            log.append_command(entry)
        else:
            log.append([entry])
    policies = _policies()
    _watched_in_random_batches(graph, log, policies, chance, 1, 6)
    # the graph ends with violations of most rules (so the comparison was not of empty sets)
    found = {key.split("|")[0] for key, _, _ in _stored(graph)}
    assert {"pii-masked-in-features", "users-cleaned-first", "eu-in-eu",
            "dashboards-from-orders", "marts-documented"} <= found, found


def test_a_night_that_restates_the_lineage_checks_nothing_again(graph: Graph,
                                                                 tmp_path: Path) -> None:
    """The shop loaded and checked, then its next night's runs (the same lineage): the check
    after that batch prints its datasets, finds none changed and checks no rule, and each
    open violation anchored at a dataset the night touched is last seen then; a night that
    changes one job's lineage is checked for what that job touched."""
    shop = [json.loads(line) for line in SHOP.read_text().splitlines() if line.strip()]
    policies = _policies()
    log = SQLiteLog(tmp_path / "events.db")
    log.append(shop)
    worker = Worker(graph, log, batch=1000)
    watch = PolicyWatch(graph, policies, today=lambda: DAY)
    first = worker.run_once()
    assert first is not None
    watch.full()
    # the full check read the graph after that batch, and its prints: nothing to check again
    assert watch.after(first).changed == 0
    before = {r["key"]: r["lastSeen"] for r in graph.read("policies/violations", rule=None,
              dataset=None, severity=None, state="open", limit=1000, offset=0)[0]["violations"]}
    assert before and _stored(graph) == _full(graph, policies)
    log.append(_restated(shop, 2))
    night = worker.run_once()
    assert night is not None and night.loaded == len(shop)
    done = watch.after(night)
    assert (done.changed, done.rules, done.anchors, done.changes) == (0, 0, 0, [])
    assert done.printed >= len(night.datasets) > 0
    after = {r["key"]: r["lastSeen"] for r in graph.read("policies/violations", rule=None,
             dataset=None, severity=None, state="open", limit=1000, offset=0)[0]["violations"]}
    assert after.keys() == before.keys() and any(after[k] > before[k] for k in after)
    assert _stored(graph) == _full(graph, policies)
    # the night after, one job starts masking: only what it touched is checked again
    log.append([run_event("COMPLETE", new_run_id(), "ml_user_features", ns="shop-nightly",
                          time="2024-06-05T02:34:00Z",
                          inputs=[dataset("raw.users", WH), dataset("raw.orders", WH)],
                          outputs=[dataset("ml.user_features", WH, columns=["email"], lineage={
                              "email": [("raw.users", "email", "DIRECT", "MASKED")]})])])
    changed = worker.run_once()
    assert changed is not None
    done = watch.after(changed)
    assert 0 < done.changed <= done.printed and done.rules > 0
    assert _stored(graph) == _full(graph, policies)


def _watched_in_random_batches(graph: Graph, log: SQLiteLog, policies: Policies,
                               chance: random.Random, fewest: int, most: int) -> int:
    """Load ``log`` in batches of random sizes, the rules kept checked after each, and compare
    the stored violations with a full check's after every batch; how many batches."""
    watch = PolicyWatch(graph, policies, today=lambda: DAY)
    watch.full()
    assert _stored(graph) == _full(graph, policies)
    worker = Worker(graph, log)
    batches = 0
    while True:
        worker.limit = chance.randint(fewest, most)
        result = worker.run_once()
        if result is None:
            return batches
        batches += 1
        watch.after(result)
        assert _stored(graph) == _full(graph, policies), f"after batch {batches}"


def test_first_seen_last_seen_and_cleared(graph: Graph, tmp_path: Path) -> None:
    policies = parse_policies("""\
version: 1
rules:
  - id: nothing-to-exports
    flow: {from: {dataset: src}, to: {dataset: "exports.*"}, must: never}
""")
    watch = PolicyWatch(graph, policies, today=lambda: DAY)
    log = SQLiteLog(tmp_path / "events.db")
    worker = Worker(graph, log)

    def load(event: dict[str, Any]) -> None:
        log.append([event])
        result = worker.run_once()
        assert result is not None and result.loaded == 1
        round_ = watch.after(result)
        changes.extend(round_.changes)

    changes: list[Any] = []
    watch.full()
    run = new_run_id()
    load(run_event("COMPLETE", run, "export", inputs=[dataset("src")],
                   outputs=[dataset("exports.a")]))
    assert [(c.event, c.key) for c in changes] == [("appeared", "nothing-to-exports|ns:src|ns:exports.a")]
    [first] = rows(graph, "MATCH (v:PolicyViolation) RETURN v.firstSeen AS f, v.lastSeen AS l, "
                          "v.clearedAt AS c, v.what AS what")
    assert first["c"] is None and first["f"] == first["l"]
    assert first["what"] == "ns:src reaches ns:exports.a reaches"
    changes.clear()
    # the job runs again, the same lineage: still open, last seen later
    load(run_event("COMPLETE", new_run_id(), "export", time="2024-05-02T02:00:00Z",
                   inputs=[dataset("src")], outputs=[dataset("exports.a")]))
    [again] = rows(graph, "MATCH (v:PolicyViolation) RETURN v.firstSeen AS f, v.lastSeen AS l, "
                          "v.clearedAt AS c")
    assert changes == [] and again["f"] == first["f"] and again["l"] > first["l"]
    # the job now reads something else: its old edge is retired, the violation clears
    load(run_event("COMPLETE", new_run_id(), "export", time="2024-05-03T02:00:00Z",
                   inputs=[dataset("other")], outputs=[dataset("exports.a")]))
    assert [(c.event, c.key) for c in changes] == [("cleared", "nothing-to-exports|ns:src|ns:exports.a")]
    [cleared] = rows(graph, "MATCH (v:PolicyViolation) RETURN v.clearedAt AS c")
    assert cleared["c"] is not None
    assert _stored(graph) == set() == _full(graph, policies)


def test_a_rule_taken_out_of_the_file_clears_its_violations(graph: Graph) -> None:
    graph_events = [run_event("COMPLETE", new_run_id(), "export", inputs=[dataset("src")],
                              outputs=[dataset("exports.a")])]
    from tests.helpers import ingest_events

    assert ingest_events(graph, graph_events).loaded == 1
    rule = "  - id: {0}\n    flow: {{from: {{dataset: src}}, to: {{dataset: \"exports.*\"}}, must: never}}\n"
    both = parse_policies("version: 1\nrules:\n" + rule.format("a") + rule.format("b"))
    one = parse_policies("version: 1\nrules:\n" + rule.format("a"))
    assert len(PolicyWatch(graph, both).full().changes) == 2
    [gone] = PolicyWatch(graph, one).full().changes
    assert (gone.event, gone.rule) == ("cleared", "b")
    assert {k for k, _, _ in _stored(graph)} == {"a|ns:src|ns:exports.a"}


def test_the_example_rules_watch_the_shop(graph: Graph, tmp_path: Path) -> None:
    """The example policy file as `lineage worker` would use it: a full check finds what
    `lineage policy check` reports."""
    log = SQLiteLog(tmp_path / "events.db")
    log.append([json.loads(line) for line in SHOP.read_text().splitlines() if line.strip()])
    while Worker(graph, log).run_once():
        pass
    policies = read_policies(ROOT / "examples" / "policies" / "shop.yaml")
    done = PolicyWatch(graph, policies).full()
    assert {c.key for c in done.changes} == {v.key for v in check(graph, policies).violations}
    assert f"pii-masked-in-features|{WH}:raw.users.email|{WH}:ml.user_features.email" in {
        c.key for c in done.changes}


class _Receiver(http.server.BaseHTTPRequestHandler):
    """A webhook receiver: refuses the first POST (503), takes the others."""

    got: list[dict[str, Any]] = []
    refused = 0

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if _Receiver.refused == 0:
            _Receiver.refused += 1
            self.send_response(503)
        else:
            _Receiver.got.append(json.loads(body))
            self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_the_worker_keeps_the_rules_checked_serves_them_and_tells_a_webhook(
        graph: Graph, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from api.app import create_app
    from graph.settings import Settings
    from tests.conftest import server_settings
    from tests.helpers import free_port, wait_loaded

    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    example = ROOT / "examples" / "policies" / "shop.yaml"
    env = {**os.environ, "LINEAGE_LOG_FILE": str(tmp_path / "events.db"),
           "LINEAGE_POLICIES": str(example),
           "LINEAGE_POLICY_WEBHOOK": f"http://127.0.0.1:{receiver.server_port}/hook"}
    if not os.environ.get("NEO4J_URI"):
        s = server_settings()
        env |= {"LINEAGE_STATE_DIR": str(s.state_dir),
                "LINEAGE_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port),
                "LINEAGE_NEO4J_HTTP_PORT": str(s.neo4j_http_port)}
    log = SQLiteLog(tmp_path / "events.db")
    worker = subprocess.Popen([sys.executable, "-m", "api.cli", "worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        log.append([json.loads(line) for line in SHOP.read_text().splitlines() if line.strip()])
        wait_loaded(log, timeout=120)
        deadline = time.monotonic() + 60
        wanted = f"pii-masked-in-features|{WH}:raw.users.email|{WH}:ml.user_features.email"
        while wanted not in {d["key"] for d in _Receiver.got} and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        worker.terminate()
        _, stderr = worker.communicate(timeout=30)
        receiver.shutdown()
    sent = {d["key"]: d for d in _Receiver.got}
    assert wanted in sent, stderr.decode()[-3000:]
    assert _Receiver.refused == 1  # the first try was refused: it came again
    doc = sent[wanted]
    assert doc["event"] == "appeared" and doc["rule"]["severity"] == "error"
    assert doc["rule"]["owners"] == ["privacy@shop.example", "ml-platform@shop.example"]
    assert doc["violation"]["label"] == "raw" and doc["violation"]["steps"][0]["subtype"] == "IDENTITY"
    # the API serves what the worker keeps
    api = TestClient(create_app(Settings(policies=example), graph, log),
                     base_url="http://localhost", client=("127.0.0.1", 40001))
    listed = api.get("/api/v1/policies").json()
    counts = {r["id"]: r["openViolations"] for r in listed["rules"]}
    assert counts == {"pii-masked-in-staging": 0, "pii-masked-in-features": 1,
                      "features-stay-out-of-dashboards": 0, "marts-owned-and-traced": 1}
    found = api.get("/api/v1/policies/violations", params={"dataset": "ml.user_features"}).json()
    assert found["totalCount"] == 1
    [v] = found["violations"]
    assert v["key"] == wanted and v["firstSeen"] and v["clearedAt"] is None
    assert [(h["job"], h["subtype"]) for h in v["steps"]] == [
        ("shop-nightly:ml_user_features", "IDENTITY")]
    assert api.get("/api/v1/policies/violations",
                   params={"severity": "warning"}).json()["totalCount"] == 1
    assert api.get("/api/v1/policies/violations", params={"state": "cleared"}).json() == {
        "totalCount": 0, "violations": []}
    assert api.get("/api/v1/policies/violations", params={"state": "gone"}).status_code == 422
    metrics = api.get("/metrics").text
    assert ('lineage_policy_violations{rule="pii-masked-in-features",severity="error"} 1'
            in metrics)
    assert ('lineage_policy_violations{rule="pii-masked-in-staging",severity="error"} 0'
            in metrics)
    without = TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                         client=("127.0.0.1", 40001))
    assert without.get("/api/v1/policies").status_code == 404
    assert "lineage_policy_violations" not in without.get("/metrics").text


CORPUS_RULES = """\
version: 1
rules:
  - id: customer-email-masked
    flow: {from: {column: "customer_*"}, to: {dataset: "*"}, must: masked}
  - id: ids-never-in-delivery-stats
    severity: warning
    flow: {from: {column: "*_id"}, to: {dataset: "*delivery*"}, must: never}
  - id: orders-through-the-staging-models
    flow: {from: {dataset: "*orders*"}, to: {dataset: "*"}, must: through,
           through: [{job: "model.*stg*"}, {dataset: "*stg*"}]}
  - id: clouds-keep-their-data
    residency:
      regions: {google: {namespace: "bigquery*"}, snowflake: {namespace: "snowflake*"},
                postgres: {namespace: "postgres*"}}
      unregioned: allowed
  - id: food-delivery-from-postgres
    sources: {sinks: {namespace: "food_delivery*"}, allow: {namespace: "postgres*"}}
  - id: everything-owned
    severity: warning
    metadata: {datasets: {dataset: "*"}, require: [owner, schema]}
"""


def _corpus_events(corpus: Path) -> list[dict[str, Any]]:
    """Every valid event of the shared corpus, templates filled as test_corpus fills them."""
    from ingest.read import read_payload
    from ingest.validate import ValidEvent, validate
    from tests.integration.test_corpus import INVALID, INVALID_JSON, _manifest, _substitute

    found = []
    for entry in _manifest(corpus):
        name = entry["file"]
        if name in INVALID or name == INVALID_JSON:
            continue
        text = (corpus / name).read_text(encoding="utf-8")
        for item in read_payload(_substitute(text) if entry["placeholders"] else text, name):
            if item.error is None and isinstance(validate(item.obj), ValidEvent):
                found.append(item.obj)
    return found


def test_on_the_shared_corpus_incremental_equals_full_after_every_batch(
        graph: Graph, corpus: Path, tmp_path: Path) -> None:
    """Real producers' events (Spark, Hive, Flink, dbt, Airflow, Marquez's demo ...) in a random
    order and random batches: after each, the stored violations are a full check's."""
    items = _corpus_events(corpus)
    chance = random.Random(11)
    chance.shuffle(items)
    log = SQLiteLog(tmp_path / "events.db")
    log.append(items)
    batches = _watched_in_random_batches(graph, log, parse_policies(CORPUS_RULES), chance, 10, 60)
    rules_found = {key.split("|")[0] for key, _, _ in _stored(graph)}
    assert batches >= 10 and len(rules_found) >= 4, (batches, rules_found)


def _copy_email(day: int, masking: bool, column: str = "email") -> dict[str, Any]:
    """A completed run of job ``copy``: src.email into dst.<column>, raw or masked."""
    out = dataset("dst", columns=[column])
    out["facets"]["columnLineage"] = {"fields": {column: {"inputFields": [{
        "namespace": "ns", "name": "src", "field": "email", "transformations": [
            {"type": "DIRECT", "subtype": "TRANSFORMATION" if masking else "IDENTITY",
             "masking": masking}]}]}}}
    return run_event("COMPLETE", new_run_id(), "copy", time=f"2026-11-0{day}T02:00:00Z",
                     inputs=[dataset("src", columns=["email"])], outputs=[out])


@pytest.mark.parametrize("column", ["email", "email_hash"])
def test_a_job_that_starts_masking_clears_the_violation_everywhere(
        graph: Graph, tmp_path: Path, column: str) -> None:
    """Run 1 copies src.email raw; run 2 masks it (into the same column, or into email_hash
    with email dropped). The rehearsal of run 2 predicts the clearing, the continuous watch
    clears it within the batch, the full check agrees, and dst's gate opens again; src's gate
    never closes (a violation is about where the data arrived)."""
    from api.services.rehearsal import rehearse_policies
    from impact.policy.gate import gate

    policies = parse_policies("""\
version: 1
rules:
  - id: email-masked
    flow: {from: {dataset: src, column: email}, to: {dataset: dst}, must: masked}
""")
    watch = PolicyWatch(graph, policies, today=lambda: DAY)
    log = SQLiteLog(tmp_path / "events.db")
    worker = Worker(graph, log)
    changes: list[Any] = []

    def load(event: dict[str, Any]) -> None:
        log.append([event])
        result = worker.run_once()
        assert result is not None and result.loaded == 1
        changes.extend(watch.after(result).changes)

    watch.full()
    load(_copy_email(1, masking=False))
    assert [c.event for c in changes] == ["appeared"]
    assert not gate(graph, "ns", "dst", policies).open
    source_gate = gate(graph, "ns", "src", policies)
    assert source_gate.open and [c.severity for c in source_gate.causes] == ["note"]
    masked = _copy_email(2, masking=True, column=column)
    delta = rehearse_policies(graph, policies, [masked], today=DAY)
    assert [v.key for v in delta.removed] == ["email-masked|ns:src.email|ns:dst.email"]
    assert delta.new == ()
    changes.clear()
    load(masked)
    assert [(c.event, c.key) for c in changes] == [
        ("cleared", "email-masked|ns:src.email|ns:dst.email")]
    assert _stored(graph) == _full(graph, policies)
    assert {v.key for v in check(graph, policies, today=DAY).violations} == set()
    assert gate(graph, "ns", "dst", policies).open


def test_a_command_is_applied_by_the_running_worker_before_the_api_answers(
        graph: Graph, tmp_path: Path) -> None:
    """One writer: with a worker consuming the log, a tag set or removed through the API is
    applied by the worker in its place (its batch says so, and its watch clears the violation),
    and is visible when the API answers. With no worker, the API applies it itself."""
    from fastapi.testclient import TestClient

    from api.app import create_app
    from graph.settings import Settings
    from ingest.worker import CONSUMER

    policies = parse_policies("""\
version: 1
rules:
  - id: pii-nowhere
    flow: {from: {tag: PII}, to: {dataset: dst}, must: never}
""")
    log = SQLiteLog(tmp_path / "events.db")
    log.append([run_event("COMPLETE", new_run_id(), "copy", inputs=[dataset("src", columns=["phone"])],
                          outputs=[dataset("dst", columns=["phone"], lineage={
                              "phone": [("src", "phone", "DIRECT", "IDENTITY")]})])])
    watch = PolicyWatch(graph, policies, today=lambda: DAY)
    applied: list[bool] = []

    def on_batch(result: Any) -> None:
        applied.append(result.commands)
        watch.after(result)

    api = TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                     client=("127.0.0.1", 40001))
    tag = "/api/v1/namespaces/ns/datasets/src/fields/phone/tags/PII"
    stop = threading.Event()
    worker = Worker(graph, log)
    with log.claim(CONSUMER):
        thread = threading.Thread(target=worker.run, args=(stop, 0.05, on_batch), daemon=True)
        thread.start()
        try:
            _eventually(lambda: len(applied) >= 1)  # the event's batch: ns/src is there
            assert api.post(tag).status_code == 200
            assert "PII" in _tags(api)  # applied before the answer
            # by the worker: a batch of its says so (it reports after committing its position,
            # which is what the answer waited for)
            _eventually(lambda: applied.count(True) == 1)
            _eventually(lambda: {k.split("|")[0] for k, _, _ in _stored(graph)} == {"pii-nowhere"})
            assert api.delete(tag).status_code == 200
            assert "PII" not in _tags(api)
            _eventually(lambda: applied.count(True) == 2)
            _eventually(lambda: _stored(graph) == set())  # the watch checked the removal
        finally:
            stop.set()
            thread.join(timeout=30)
    # no worker: the API applies the command itself, visible at once
    assert api.post(tag).status_code == 200
    assert "PII" in _tags(api)


def _tags(api: Any) -> list[str]:
    """The tags of ns/src's column phone, as Marquez's API answers them."""
    fields = api.get("/api/v1/namespaces/ns/datasets/src").json()["fields"]
    return list(next(f for f in fields if f["name"] == "phone")["tags"])


def _eventually(holds: Any, timeout: float = 10.0) -> None:
    """The worker's watch checks after the batch's position is committed: wait for it."""
    deadline = time.monotonic() + timeout
    while not holds():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)


def test_a_gate_reads_the_watchs_store_while_it_is_current_and_answers_as_a_check_would(
        graph: Graph, tmp_path: Path) -> None:
    """impact.policy.kept: with the watch on a thread marking how far it has checked, a gate
    given the worker's position reads the stored violations when the mark is through it (and
    checks the rules itself when not); either way every dataset's gate, after every batch, has
    the causes a gate that checks every rule finds."""
    from impact.policy import kept
    from impact.policy.gate import gate
    from impact.policy.watch import Watching

    chance = random.Random(5)
    log = SQLiteLog(tmp_path / "events.db")
    for entry in _entries():
        if commands.is_command(entry):
            log.append_command(entry)
        else:
            log.append([entry])
    policies = _policies()
    now = datetime(DAY.year, DAY.month, DAY.day, 12, tzinfo=UTC)
    watching = Watching(PolicyWatch(graph, policies, today=lambda: DAY), busy_share=1.0,
                        through=kept.LogState(0)).start()
    worker = Worker(graph, log)
    read_from_store = 0
    try:
        assert watching.wait_idle(60)
        while True:
            worker.limit = chance.randint(2, 8)
            result = worker.run_once()
            if result is None:
                break
            position = kept.LogState(log.position("neo4j"))
            # loaded, not yet offered: the mark is behind, so a gate checks the rules itself
            assert not kept.current(graph, policies, position)
            watching.offer(result)
            assert watching.wait_idle(60)
            assert kept.current(graph, policies, position)
            names = [(r["ns"], r["name"]) for r in rows(
                graph, "MATCH (d:Dataset) RETURN d.namespace AS ns, d.name AS name")]
            for ns, name in chance.sample(names, min(6, len(names))):
                stored = gate(graph, ns, name, policies, now=now, position=position)
                checked = gate(graph, ns, name, policies, now=now)
                assert stored.causes == checked.causes, f"{ns}:{name} at {position}"
                read_from_store += 1
        assert kept.current(graph, policies, kept.LogState(log.position("neo4j")))
        # a bulk load beside the log since the watch began: the store may miss what it loaded
        assert not kept.current(graph, policies, kept.LogState(log.position("neo4j"), 1))
        # other rules (the shop's alone): the store is not theirs
        fewer = parse_policies((ROOT / "examples" / "policies" / "shop.yaml").read_text(),
                               "shop.yaml")
        assert not kept.current(graph, fewer, kept.LogState(0))
    finally:
        watching.stop()
    assert read_from_store > 20
    # the gates compared closed for some datasets: the comparison was not of empty answers
    closed = [name for ns, name in [(r["ns"], r["name"]) for r in rows(
        graph, "MATCH (d:Dataset) RETURN d.namespace AS ns, d.name AS name")]
        if not gate(graph, ns, name, policies, now=now,
                    position=kept.LogState(log.position("neo4j"))).open]
    assert closed, "no gate closed"

"""Repeated schemas and column lineage are written once and touched after: the answers stay exact.

A job that reports the schema and column lineage it reported before only moves the Dataset's
schemaLastSeen and the Job's lineageLastSeen (ingest/schemas, ingest/lineages); the
columns and edges are written one by one only for a new version or an older event. The times and
runs that questions report must still be those of the events: checked here against an oracle
computed from the events alone, for streams that change versions, go back to an earlier one and
arrive out of order, loaded one event per batch, three per batch and all in one batch.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graph.db import Graph
from impact.blast_radius import column_blast_radius
from impact.where import where
from tests.conftest import wipe
from tests.helpers import PRODUCER, ingest_events, rows

pytestmark = pytest.mark.integration

NS = "versions"
T0 = datetime(2024, 5, 1, tzinfo=UTC)
# (job, output, input): j2 reads what j1 writes
JOBS = (("j1", "mid", "src"), ("j2", "out", "mid"))
SCHEMAS = (("a", "b", "c"), ("a", "b"), ("a", "b", "c", "d"))
# each lineage: output column -> (input column, subtype, masking)
LINEAGES = (
    {"a": ("a", "IDENTITY", False), "b": ("b", "IDENTITY", False)},
    {"a": ("a", "IDENTITY", False), "b": ("b", "TRANSFORMATION", True)},
    {"a": ("a", "IDENTITY", False), "c": ("b", "AGGREGATION", False)},
)


def _stream(seed: int, runs: int = 14) -> list[dict[str, Any]]:
    """Events of both jobs in random arrival order; each run picks a schema and a lineage version
    (mostly the previous one, as real jobs do), a START has the schema but no lineage."""
    rng = random.Random(seed)
    minutes = rng.sample(range(10_000), 2 * runs * len(JOBS))
    events = []
    for job, out, src in JOBS:
        schema, lineage = 0, 0
        for _ in range(runs):
            if rng.random() < 0.3:
                schema = rng.randrange(len(SCHEMAS))
            if rng.random() < 0.3:
                lineage = rng.randrange(len(LINEAGES))
            run_id = str(uuid.UUID(int=rng.getrandbits(128)))
            start, end = sorted(minutes.pop() for _ in range(2))
            fields = {"schema": {"fields": [{"name": c, "type": "STRING"} for c in SCHEMAS[schema]]}}
            for kind, minute, facets in (
                    ("START", start, fields),
                    ("COMPLETE", end, fields | {"columnLineage": {"fields": {
                        o: {"inputFields": [{"namespace": NS, "name": src, "field": i,
                                             "transformations": [{"type": "DIRECT", "subtype": st,
                                                                  "masking": m}]}]}
                        for o, (i, st, m) in LINEAGES[lineage].items()}}})):
                events.append({
                    "eventType": kind, "producer": PRODUCER,
                    "eventTime": (T0 + timedelta(minutes=minute)).isoformat().replace("+00:00", "Z"),
                    "run": {"runId": run_id}, "job": {"namespace": NS, "name": job},
                    "inputs": [{"namespace": NS, "name": src}],
                    "outputs": [{"namespace": NS, "name": out, "facets": facets}]})
    rng.shuffle(events)
    return events


def _oracle(events: list[dict[str, Any]]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """From the events alone: each written column's (first, last) time; each column edge's
    (first, last, run of the last, masking of the last)."""
    columns: dict[Any, Any] = {}
    edges: dict[Any, Any] = {}
    for e in events:
        t = datetime.fromisoformat(e["eventTime"])
        out = e["outputs"][0]
        for f in out["facets"]["schema"]["fields"]:
            first, last = columns.get((out["name"], f["name"]), (t, t))
            columns[(out["name"], f["name"])] = (min(first, t), max(last, t))
        for o, spec in out["facets"].get("columnLineage", {}).get("fields", {}).items():
            for i in spec["inputFields"]:
                tr = i["transformations"][0]
                key = (e["job"]["name"], out["name"], o, i["name"], i["field"], tr["subtype"])
                first, last, run, masking = edges.get(key, (t, t, e["run"]["runId"], tr["masking"]))
                if t >= last:
                    last, run, masking = t, e["run"]["runId"], tr["masking"]
                edges[key] = (min(first, t), last, run, masking)
    return columns, edges


def _effective(graph: Graph) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Every written column's and column edge's times as docs/graph-model.md says to read them."""
    columns = {(r["d"], r["c"]): (r["first"].to_native(), r["last"].to_native()) for r in rows(graph, """
        MATCH (d:Dataset)-[:HAS_COLUMN]->(c:Column) WHERE c.writtenLastSeen IS NOT NULL
        RETURN d.name AS d, c.name AS c, c.writtenFirstSeen AS first,
               CASE WHEN c.schemaDigest = d.schemaDigest AND d.schemaLastSeen > c.writtenLastSeen
                    THEN d.schemaLastSeen ELSE c.writtenLastSeen END AS last""")}
    edges = {}
    for r in rows(graph, """
            MATCH (o:Column)-[e:DERIVED_FROM]->(i:Column)
            OPTIONAL MATCH (j:Job {namespace: e.jobNamespace, name: e.jobName})
              WHERE j.lineageDigest = e.lineageDigest
            RETURN e.jobName AS job, o.dataset AS out, o.name AS o, i.dataset AS src, i.name AS i,
                   e.subtype AS subtype, e.firstSeen AS first, e.masking AS masking,
                   CASE WHEN j.lineageLastSeen > e.lastSeen THEN j.lineageLastSeen ELSE e.lastSeen END AS last,
                   CASE WHEN j.lineageLastSeen >= e.lastSeen AND j.lineageRunId IS NOT NULL
                        THEN j.lineageRunId ELSE e.runId END AS run"""):
        key = (r["job"], r["out"], r["o"], r["src"], r["i"], r["subtype"])
        edges[key] = (r["first"].to_native(), r["last"].to_native(), r["run"], r["masking"])
    return columns, edges


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_times_and_runs_are_those_of_the_events_whatever_the_batches(
        session_graph: Graph, seed: int) -> None:
    shuffled = _stream(seed)
    expected = _oracle(shuffled)
    in_order = sorted(shuffled, key=lambda e: e["eventTime"])
    for events, batch_size in ((in_order, 1), (shuffled, 1), (shuffled, 3), (shuffled, len(shuffled))):
        wipe(session_graph)
        report = ingest_events(session_graph, events, batch_size=batch_size)
        assert (report.loaded, report.rejected) == (len(events), [])
        assert _effective(session_graph) == expected, \
            f"{'in order' if events is in_order else 'shuffled'}, batches of {batch_size}"


def test_questions_report_the_latest_run_of_a_repeated_lineage(graph: Graph) -> None:
    events = sorted(_stream(4), key=lambda e: e["eventTime"])
    ingest_events(graph, events, batch_size=1)
    _, edges = _oracle(events)
    # touched, not rewritten: the edges' own lastSeen is behind for most of them
    [behind] = rows(graph, """MATCH (:Column)-[e:DERIVED_FROM]->(:Column), (j:Job {name: e.jobName})
                             WHERE e.lineageDigest = j.lineageDigest AND e.lastSeen < j.lineageLastSeen
                             RETURN count(*) AS n""")
    assert behind["n"] > 0
    report = where(graph, NS, "src", "a", depth=5)
    steps = [s for reach in report.reaches for s in reach.steps]
    assert steps, "the GDPR walk from src.a found nothing"
    for step in steps:
        out, col = step.target.split(":", 1)[1].split(".")
        src, field = step.source.split(":", 1)[1].split(".")
        _, last, run, _ = edges[(step.job, out, col, src, field, step.subtype)]
        assert (step.last_seen, step.run) == (last, run), step


def test_blast_radius_and_column_lineage_report_the_latest_sighting(graph: Graph) -> None:
    events = sorted(_stream(5), key=lambda e: e["eventTime"])
    ingest_events(graph, events, batch_size=1)
    _, edges = _oracle(events)
    radius = column_blast_radius(graph, NS, "src", "a", depth=5)
    assert radius.impacted, "the blast radius of src.a is empty"
    for hit in radius.impacted:
        out, col = hit.name.split(".")
        src, field = hit.path[-2].split(".")
        subtype = hit.why.split()[2]
        assert hit.last_seen == edges[(hit.job, out, col, src, field, subtype)][1], hit
    found = graph.read("lineage/columns", columns=[{"namespace": NS, "dataset": "out", "name": "a"}],
                       depth=1, withDownstream=False, includeRetired=False)
    [row] = [r for r in found if (r["dataset"], r["field"]) == ("out", "a")]
    assert row["inputs"]
    for i in row["inputs"]:
        key = (i["job"], "out", "a", i["dataset"], i["field"], i["subtype"])
        assert i["lastSeen"].to_native() == edges[key][1], key


def test_an_older_reader_does_not_override_the_type_of_a_touched_column(graph: Graph) -> None:
    def written(minute: int) -> dict[str, Any]:
        return {"eventType": "COMPLETE", "producer": PRODUCER,
                "eventTime": (T0 + timedelta(minutes=minute)).isoformat(),
                "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": NS, "name": "writer"},
                "outputs": [{"namespace": NS, "name": "t", "facets": {
                    "schema": {"fields": [{"name": "a", "type": "BIGINT"}]}}}]}
    reader = {"eventType": "COMPLETE", "producer": PRODUCER,
              "eventTime": (T0 + timedelta(minutes=15)).isoformat(),
              "run": {"runId": str(uuid.uuid4())}, "job": {"namespace": NS, "name": "reader"},
              "inputs": [{"namespace": NS, "name": "t", "facets": {
                  "schema": {"fields": [{"name": "a", "type": "STRING"}]}}}]}
    # the writer's schema at 10, then touched at 20 and 30: the column's own lastSeen stays 10
    ingest_events(graph, [written(10), written(20), written(30)], batch_size=1)
    ingest_events(graph, [reader], batch_size=1)
    [column] = rows(graph, "MATCH (c:Column {dataset: 't', name: 'a'}) RETURN c.type AS type")
    assert column["type"] == "BIGINT"

"""Each kind of row declares its fields once (ingest/rows.py): every ``row.x`` a Cypher file reads
is declared, every declared field is read, and the rows ingest makes hold nothing else."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from graph.db import QueryStep
from graph.errors import QueryLibraryError
from graph.queries import library, parse_query
from ingest import rows as rows_module
from ingest.combine import combine
from ingest.load import Plan, SeenCurrent
from ingest.rows import KIND, KINDS, Rows, check_library, undeclared
from ingest.transform import transform
from ingest.validate import ValidEvent, validate
from tests.food_delivery import events as food_delivery

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {name: named.row_fields for name, named in library().items()}


def test_every_field_an_ingest_file_reads_is_declared_and_every_declared_one_read() -> None:
    check_library()
    for kind in KINDS:
        assert kind.readers, kind.name
        assert not undeclared(kind, FIELDS), kind.name
        read = {f for reader in kind.readers for f in FIELDS[reader]}
        # every row has its seen times (ingest.combine), read or not
        assert read <= set(kind.fields) and set(kind.fields) - read <= {"firstSeen", "lastSeen"}, (
            kind.name, set(kind.fields) ^ read)
        assert set(kind.key) | set(kind.merged) <= set(kind.fields) | set(kind.local), kind.name
    assert {r for kind in KINDS for r in kind.readers} >= {
        n for n, fields in FIELDS.items() if n.startswith("ingest/") and fields}


def test_a_file_reading_a_field_its_kind_does_not_declare_is_refused_with_its_line() -> None:
    source = (ROOT / "cypher/ingest/renames.cypher").read_text(encoding="utf-8")
    renamed = re.sub(r"row\.oldName\b", "row.previousName", source, count=1)
    assert renamed != source
    named = parse_query("ingest/renames", renamed)
    found = undeclared(KIND["renames"], {**FIELDS, "ingest/renames": named.row_fields})
    assert [(f, name) for f, name, _ in found] == [("ingest/renames", "previousName")]
    line = found[0][2]
    assert "row.previousName" in renamed.splitlines()[line - 1]


def test_the_first_batch_refuses_a_library_naming_an_undeclared_field(
        monkeypatch: pytest.MonkeyPatch) -> None:
    source = (ROOT / "cypher/ingest/renames.cypher").read_text(encoding="utf-8")
    doctored = {**library(), "ingest/renames": parse_query(
        "ingest/renames", re.sub(r"row\.oldName\b", "row.previousName", source, count=1))}
    monkeypatch.setattr(rows_module, "library", lambda: doctored)
    rows_module.check_library.cache_clear()
    try:
        with pytest.raises(QueryLibraryError, match=r"ingest/renames:\d+: reads row.previousName"):
            Plan(Rows(), SeenCurrent())
    finally:
        rows_module.check_library.cache_clear()


def test_the_loader_reads_fields_through_each_name_the_rows_are_unwound_as() -> None:
    named = parse_query("x", "// Answers: a test\n// Param $rows: rows\n// :param rows => []\n"
                             "UNWIND $rows AS wire\nWITH wire {.*, t: 1} AS row\n"
                             "RETURN wire.a, row.b, 'row.c', other.d")
    assert named.row_fields == {"a": 6, "b": 6}


def _events() -> list[ValidEvent]:
    found = [validate(e) for e in food_delivery()]
    for path in (ROOT / "examples/events/shop.ndjson", ROOT / "examples/explicit_lineage.ndjson"):
        found += [validate(json.loads(line)) for line in path.read_text().splitlines() if line]
    return [e for e in found if not isinstance(e, list)]


def _sent(rows: Rows) -> list[QueryStep]:
    """Every step a batch's plan sends to Neo4j, no version of it found current (all written)."""
    plan = Plan(combine(rows), SeenCurrent())
    results: list[list[dict[str, Any]]] = [[{}] for _ in plan.first[:len(plan.first) - len(plan.versions)]]
    results += [[{"missed": [list(k) for k in versions], "current": []}]
                for _, versions in plan.versions]
    return plan.first + plan.then(results)


@pytest.mark.parametrize("by_event", [True, False], ids=["event by event", "one batch"])
def test_the_rows_sent_to_neo4j_hold_only_their_kinds_declared_fields(by_event: bool) -> None:
    events = _events()
    assert len(events) > 40
    kind_of = {reader: kind for kind in KINDS for reader in kind.readers}
    sent: dict[str, set[str]] = {}
    for batch in [[e] for e in events] if by_event else [events]:
        rows = Rows()
        for event in batch:
            rows.extend(transform(event, 16_384, 1.0))
        for name, params in _sent(rows):
            for row in params.get("rows", []):
                sent.setdefault(name, set()).update(row)
    for name, fields in sent.items():
        assert fields <= set(kind_of[name].fields), (name, fields - set(kind_of[name].fields))
    assert {"ingest/datasets", "ingest/runs", "ingest/column_edges", "ingest/flows",
            "ingest/lineages", "ingest/schemas", "ingest/columns"} <= set(sent)


def test_a_column_edge_kept_compact_has_the_declared_parts_in_its_row() -> None:
    """Column edges are tuples until their rows are made, by hand in two places: both rows hold
    each part of the tuple under the name ingest.rows.COLUMN_EDGE_PARTS gives it."""
    from datetime import UTC, datetime

    from ingest.column_lineage import Compact, column_lineage
    from ingest.rows import COLUMN_EDGE_PARTS
    from ingest.transform import edge_key
    from ingest.version_members import edge_rows

    output = {"namespace": "pg", "name": "dst", "facets": {"columnLineage": {"fields": {
        "email_hash": {"inputFields": [{"namespace": "pg", "name": "src", "field": "email",
                                        "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION",
                                                             "masking": True,
                                                             "description": "sha2"}]}]}}}}}
    t = datetime(2024, 5, 1, tzinfo=UTC)
    compact: list[Compact] = []
    column_lineage(output, ("jobs", "hash"), "run-1", t, [], [], compact)
    made: list[dict[str, Any]] = []
    column_lineage(output, ("jobs", "hash"), "run-1", t, made, [])
    [edge] = compact
    assert len(edge) == len(COLUMN_EDGE_PARTS)
    [row] = edge_rows({"jobNamespace": "jobs", "jobName": "hash", "runId": "run-1", "digest": "d",
                       "time": t, "evt": "e", "compact": compact})
    for built in (row, made[0]):
        assert tuple(built[name] for name in COLUMN_EDGE_PARTS) == edge
        assert edge_key(built) == edge[:8]
    assert edge == ("pg", "dst", "email_hash", "pg", "src", "email", "DIRECT", "TRANSFORMATION",
                    True, "sha2")

"""The shared corpus of OpenLineage events written by other projects, loaded as it stands."""

from __future__ import annotations

import csv
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graph.db import Graph
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file, read_payload
from ingest.validate import ValidEvent, validate
from tests.helpers import edges, nodes, rows

pytestmark = pytest.mark.integration

MARQUEZ = "MarquezProject__marquez/docker/metadata.json"
TEMPLATE = "MarquezProject__marquez/docker/metadata.template.json"
INVALID = {
    "OpenLineage__OpenLineage/proxy/fluentd/events/event_invalid_dataset_facet.json":
        "outputs[0].facets.ownership.owners.0.name: Field required",
    "OpenLineage__OpenLineage/proxy/fluentd/events/event_invalid_input_dataset_facet.json":
        "inputs[0].inputFacets.dataQualityMetrics: Value error, needs rowCount or columnMetrics",
    "OpenLineage__OpenLineage/proxy/fluentd/events/event_invalid_job_facet.json":
        "job.facets.ownership.owners.0.name: Field required",
    "OpenLineage__OpenLineage/proxy/fluentd/events/event_invalid_output_dataset_facet.json":
        "outputs[0].outputFacets.outputStatistics.rowCount: Input should be a valid integer",
    "OpenLineage__OpenLineage/proxy/fluentd/events/event_invalid_run_facet.json":
        "run.facets.parent.run.runId: Field required",
    "OpenLineage__OpenLineage/proxy/fluentd/events/event_no_run_id.json":
        "run.runId: missing",
}
INVALID_JSON = ("datahub-project__datahub/metadata-integration/java/acryl-spark-lineage/"
                "src/test/resources/ol_events/flink_job_test.json")


def _manifest(corpus: Path) -> list[dict[str, str]]:
    with (corpus / "MANIFEST.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _complete_files(corpus: Path) -> list[str]:
    return [r["file"] for r in _manifest(corpus)
            if not r["placeholders"] and r["partial_events"] == "0"
            and r["file"] not in INVALID and r["file"] != INVALID_JSON]


def _ingest(graph: Graph, paths: list[Path]) -> IngestReport:
    ingester, report = Ingester(graph), IngestReport()
    for path in paths:
        ingester.ingest(read_file(path), report)
    return report


def test_every_complete_event_loads(graph: Graph, corpus: Path) -> None:
    files = _complete_files(corpus)
    report = _ingest(graph, [corpus / f for f in files])
    assert report.rejected == []
    expected = sum(int(r["events"]) for r in _manifest(corpus) if r["file"] in files)
    assert report.loaded + report.duplicates == expected


def test_marquez_demo_builds_its_known_graph(graph: Graph, corpus: Path) -> None:
    report = _ingest(graph, [corpus / MARQUEZ])
    assert (report.loaded, report.rejected) == (26, [])
    jobs = {n[2] for n in nodes(graph) if n[0] == "Job"}
    assert jobs == {"etl_menus", "etl_categories", "etl_menu_items", "etl_orders",
                    "etl_orders_7_days", "etl_customers", "etl_order_status", "etl_drivers",
                    "etl_restaurants", "etl_delivery_7_days", "delivery_times_7_days",
                    "orders_popular_day_of_week", "email_discounts"}
    states = rows(graph, "MATCH (r:Run) RETURN r.state AS s, count(*) AS n")
    assert states == [{"s": "COMPLETE", "n": 13}]
    column_edges = {(e[3], e[2], e[6], e[5]) for e in edges(graph)
                    if e[0] == "DERIVED_FROM" and e[2]}
    assert ("customer_email", "public.discounts", "customer_email", "public.delivery_7_days") \
        in column_edges
    assert ("order_id", "public.orders_7_days", "id", "public.orders") in column_edges
    dataset_edges = {(e[3], e[6], e[-1]) for e in edges(graph)
                     if e[0] == "DERIVED_FROM" and not e[2]}
    assert ("public.popular_orders_day_of_week", "public.top_delivery_times", "false") \
        in dataset_edges
    # customers is read by that job but its column lineage names no field of it: it may still
    # feed the output, so it keeps a coarse edge (read, no column lineage), never a fine one
    assert ("public.popular_orders_day_of_week", "public.customers", "true") in dataset_edges
    assert ("public.popular_orders_day_of_week", "public.customers", "false") not in dataset_edges


def test_marquez_template_after_the_demo_adds_no_node_and_no_edge(
        graph: Graph, corpus: Path) -> None:
    _ingest(graph, [corpus / MARQUEZ])
    before = (nodes(graph), edges(graph))
    start = datetime.now(UTC).replace(microsecond=0)

    def when(m: re.Match[str]) -> str:
        minutes = int(m.group(1) or 0)
        return (start + timedelta(minutes=minutes)).isoformat().replace("+00:00", "Z")

    text = (corpus / TEMPLATE).read_text(encoding="utf-8")
    text = re.sub(r"\{\{RUN_(?:START_TIME|END_TIME_AFTER_(\d+)_MINUTES)\}\}", when, text)
    report = Ingester(graph).ingest(read_payload(text, TEMPLATE), IngestReport())
    assert (report.loaded, report.rejected) == (26, [])
    assert (nodes(graph), edges(graph)) == before


def test_deliberately_invalid_events_are_rejected_with_reasons(
        graph: Graph, corpus: Path) -> None:
    report = _ingest(graph, [corpus / f for f in INVALID])
    assert report.loaded == 0
    by_file = {r.where.removeprefix(str(corpus) + "/"): r.reasons for r in report.rejected}
    for file, reason in INVALID.items():
        assert any(reason in r for r in by_file[file]), (file, by_file[file])


def test_invalid_json_file_is_reported_not_crashed_on(graph: Graph, corpus: Path) -> None:
    report = _ingest(graph, [corpus / INVALID_JSON, corpus / MARQUEZ])
    [rejection] = report.rejected
    assert rejection.where.endswith("flink_job_test.json")
    assert "invalid JSON at line" in rejection.reasons[0]
    assert report.loaded == 26


_PLACEHOLDER = re.compile(r"\$\{json-unit[^}]*\}|\{\{[^}]*\}\}|\{[A-Z_]+\}")


def _substitute(text: str) -> str:
    run_ids: dict[str, str] = {}

    def fill(m: re.Match[str]) -> str:
        token = m.group(0)
        if "TIME" in token or "datetime" in token:
            return datetime.now(UTC).isoformat()
        return run_ids.setdefault(token, str(uuid.uuid4()))

    return _PLACEHOLDER.sub(fill, text)


def test_templates_parse_after_substitution(corpus: Path) -> None:
    templates = [r["file"] for r in _manifest(corpus) if r["placeholders"]]
    assert templates
    outcomes = {"valid": 0, "rejected": 0}
    for file in templates:
        text = _substitute((corpus / file).read_text(encoding="utf-8"))
        for item in read_payload(text, file):
            assert item.error is None, (file, item.error)
            result = validate(item.obj)
            assert isinstance(result, ValidEvent) or all(isinstance(r, str) for r in result)
            outcomes["valid" if isinstance(result, ValidEvent) else "rejected"] += 1
    assert outcomes["valid"] > 0

"""Writes examples/events/shop.ndjson: OpenLineage events of a small web shop's nightly pipeline.

raw.users ──clean_users──▶ staging.users_clean (email hashed: masked) ─┐
raw.orders ─────────────────────────────────────────────enrich_orders─┴▶ marts.orders_enriched
marts.orders_enriched ──revenue_by_country──▶ marts.revenue_by_country ──▶ dashboards.revenue
raw.users ──ml_user_features──▶ ml.user_features (copies the raw email: the privacy leak)

Deterministic: run it again and the file is byte-for-byte the same.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

NS = "postgres://warehouse:5432"
JOBS_NS = "shop-nightly"
PRODUCER = "https://example.com/lineage-graph/examples/make_shop_events.py"
DAY = "2024-06-0{}T02:{:02d}:00Z"
RUN_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"

SCHEMAS = {
    "raw.users": ["id", "email", "full_name", "country", "created_at"],
    "raw.orders": ["order_id", "user_id", "amount", "currency", "ordered_at"],
    "staging.users_clean": ["id", "email_hash", "country"],
    "marts.orders_enriched": ["order_id", "user_id", "country", "amount"],
    "marts.revenue_by_country": ["country", "revenue", "orders"],
    "dashboards.revenue": ["country", "revenue"],
    "ml.user_features": ["user_id", "email", "order_count"],
}
# the producer marks personal data with the tags facet: `lineage where --tag PII`
PII = {"raw.users": ["email", "full_name"]}
OWNERS = {"raw.users": "team:identity", "raw.orders": "team:checkout",
          "marts.revenue_by_country": "team:finance", "ml.user_features": "team:ml"}


def _facet(schema: str, **fields: Any) -> dict[str, Any]:
    """A facet of the spec's ``schema`` ("VERSION/NAME"), with its producer and schema URL."""
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/"
            f"{schema}.json#/$defs/{schema.split('/')[1]}", **fields}


def _rid(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


Source = tuple[str, str, str, str, bool]
"""A column's input: dataset, field, transformation type, subtype, masking."""


def _dataset(name: str, lineage: dict[str, list[Source]] | None = None) -> dict[str, Any]:
    facets: dict[str, Any] = {"schema": _facet("1-2-0/SchemaDatasetFacet", fields=[
        {"name": c, "type": "VARCHAR" if c in ("email", "email_hash", "country", "full_name",
                                               "currency") else "BIGINT"}
        for c in SCHEMAS[name]])}
    if name in OWNERS:
        facets["ownership"] = _facet("1-0-1/OwnershipDatasetFacet", owners=[
            {"name": OWNERS[name].split(":")[1], "type": "team"}])
    if name in PII:
        facets["tags"] = _facet("1-0-0/TagsDatasetFacet", tags=[
            {"key": "PII", "value": "true", "field": f, "source": "CATALOG"} for f in PII[name]])
    if lineage:
        facets["columnLineage"] = _facet("1-2-0/ColumnLineageDatasetFacet", fields={
            out: {"inputFields": [
                {"namespace": NS, "name": src, "field": field, "transformations": [
                    {"type": kind, "subtype": sub, "masking": masking}]}
                for src, field, kind, sub, masking in sources]}
            for out, sources in lineage.items()})
    return {"namespace": NS, "name": name, "facets": facets}


Step = tuple[str, list[str], list[tuple[str, dict[str, list[Source]] | None]], str | None]
"""A job: its name, inputs, outputs with their column lineage, SQL."""

PIPELINE: list[Step] = [
    ("load_users", [], [("raw.users", None)], None),
    ("load_orders", [], [("raw.orders", None)], None),
    ("clean_users", ["raw.users"], [("staging.users_clean", {
        "id": [("raw.users", "id", "DIRECT", "IDENTITY", False)],
        "email_hash": [("raw.users", "email", "DIRECT", "TRANSFORMATION", True)],
        "country": [("raw.users", "country", "DIRECT", "IDENTITY", False)]})],
     "INSERT INTO staging.users_clean SELECT id, sha256(email), country FROM raw.users"),
    ("enrich_orders", ["raw.orders", "staging.users_clean"], [("marts.orders_enriched", {
        "order_id": [("raw.orders", "order_id", "DIRECT", "IDENTITY", False)],
        "user_id": [("raw.orders", "user_id", "DIRECT", "IDENTITY", False),
                    ("staging.users_clean", "id", "INDIRECT", "JOIN", False)],
        "country": [("staging.users_clean", "country", "DIRECT", "IDENTITY", False)],
        "amount": [("raw.orders", "amount", "DIRECT", "IDENTITY", False)]})], None),
    ("revenue_by_country", ["marts.orders_enriched"], [("marts.revenue_by_country", {
        "country": [("marts.orders_enriched", "country", "DIRECT", "IDENTITY", False),
                    ("marts.orders_enriched", "country", "INDIRECT", "GROUP_BY", False)],
        "revenue": [("marts.orders_enriched", "amount", "DIRECT", "AGGREGATION", False)],
        "orders": [("marts.orders_enriched", "order_id", "DIRECT", "AGGREGATION", False)]})],
     None),
    ("dashboard_revenue", ["marts.revenue_by_country"], [("dashboards.revenue", None)], None),
    ("ml_user_features", ["raw.users", "raw.orders"], [("ml.user_features", {
        "user_id": [("raw.users", "id", "DIRECT", "IDENTITY", False)],
        "email": [("raw.users", "email", "DIRECT", "IDENTITY", False)],
        "order_count": [("raw.orders", "order_id", "DIRECT", "AGGREGATION", False)]})], None),
]


def events() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for day in (1, 2):
        dag_run = _rid("nightly", day)
        parent = {"parent": _facet("1-2-0/ParentRunFacet", run={"runId": dag_run},
                                   job={"namespace": JOBS_NS, "name": "nightly"})}
        for step, (job, inputs, outputs, sql) in enumerate(PIPELINE):
            run_id = _rid(job, day)
            fails = day == 1 and job == "revenue_by_country"
            job_facets = {"jobType": _facet("2-0-4/JobTypeJobFacet", processingType="BATCH",
                                            integration="SPARK", jobType="JOB")}
            if sql:
                job_facets["sql"] = _facet("1-1-0/SQLJobFacet", query=sql)
            base = {"producer": PRODUCER, "schemaURL": RUN_EVENT, "job": {"namespace": JOBS_NS, "name": job,
                                                  "facets": job_facets}}
            start = {**base, "eventType": "START", "eventTime": DAY.format(day, step * 5),
                     "run": {"runId": run_id, "facets": parent},
                     "inputs": [_dataset(i) for i in inputs],
                     "outputs": [{"namespace": NS, "name": o} for o, _ in outputs]}
            end_facets = dict(parent)
            if fails:
                end_facets["errorMessage"] = _facet(
                    "1-0-1/ErrorMessageRunFacet", programmingLanguage="python",
                    message="[UNRESOLVED_COLUMN] A column `amount_eur` cannot be resolved")
            end = {**base, "eventType": "FAIL" if fails else "COMPLETE",
                   "eventTime": DAY.format(day, step * 5 + 4),
                   "run": {"runId": run_id, "facets": end_facets},
                   "inputs": [{"namespace": NS, "name": i} for i in inputs],
                   "outputs": [] if fails else [_dataset(o, cl) for o, cl in outputs]}
            out += [start, end]
    return out


if __name__ == "__main__":
    target = Path(__file__).parent / "events" / "shop.ndjson"
    target.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in events()))
    print(f"wrote {target}")

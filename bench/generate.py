"""Deterministic, realistic OpenLineage lineage at a scale factor (for benchmarks).

Layered pipelines (sources -> staging -> marts -> dashboards and ML features), skewed fan-out (a
few hub tables read by many jobs), schemas of 5-200 columns (most small), column lineage with the
real mix of transformation types (identity, transformation, aggregation, masking, and INDIRECT
join/filter/group-by), parent runs, some failures, and daily runs (optionally with START events).

    python -m bench.generate --datasets 10000 --out /tmp/lineage-10k.ndjson
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

NS = "warehouse://bench:5432"
JOB_NS = "bench"
PRODUCER = "https://github.com/lineage-graph/bench"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
LAYERS = (("src", 0.15), ("stg", 0.35), ("mart", 0.35), ("dash", 0.15))
DIRECT = (("IDENTITY", 0.55), ("TRANSFORMATION", 0.3), ("AGGREGATION", 0.15))
INDIRECT = ("JOIN", "FILTER", "GROUP_BY", "SORT")


@dataclass
class Table:
    name: str
    layer: int
    columns: list[str]
    inputs: list[str] = field(default_factory=list)
    # output column -> [(input table, input column, type, subtype, masking)]
    lineage: dict[str, list[tuple[str, str, str, str, bool]]] = field(default_factory=dict)


def _width(rng: random.Random) -> int:
    """5..200 columns, most around 8-12 (lognormal)."""
    return max(5, min(200, int(rng.lognormvariate(2.25, 0.45))))


def tables(n_datasets: int, seed: int = 7) -> list[Table]:
    rng = random.Random(seed)
    out: list[Table] = []
    by_layer: list[list[Table]] = [[] for _ in LAYERS]
    counts = [max(1, round(n_datasets * share)) for _, share in LAYERS]
    counts[-1] = max(1, n_datasets - sum(counts[:-1]))
    for layer, ((prefix, _), count) in enumerate(zip(LAYERS, counts, strict=True)):
        for i in range(count):
            cols = ["id"] + [f"c{j}" for j in range(_width(rng) - 1)]
            if layer == 0 and rng.random() < 0.1:
                cols[1:2] = ["email"]
            t = Table(f"{prefix}.t{i:06d}", layer, cols)
            if layer:
                _wire(rng, t, by_layer)
            by_layer[layer].append(t)
            out.append(t)
    return out


def _pick(rng: random.Random, by_layer: list[list[Table]], layer: int) -> Table:
    below = rng.choice(range(max(0, layer - 2), layer)) if layer > 1 else 0
    pool = by_layer[below]
    hubs = max(1, len(pool) // 100)
    return pool[rng.randrange(hubs)] if rng.random() < 0.25 else rng.choice(pool)


def _wire(rng: random.Random, t: Table, by_layer: list[list[Table]]) -> None:
    ins = {s.name: s for s in (_pick(rng, by_layer, t.layer) for _ in range(rng.choice((1, 1, 2, 2, 3))))}
    t.inputs = list(ins)
    sources = list(ins.values())
    for col in t.columns:
        s = rng.choice(sources)
        src_col = col if col in s.columns and rng.random() < 0.6 else rng.choice(s.columns)
        subtype = rng.choices([k for k, _ in DIRECT], [w for _, w in DIRECT])[0]
        masking = subtype == "TRANSFORMATION" and (src_col == "email" or rng.random() < 0.05)
        edges = [(s.name, src_col, "DIRECT", subtype, masking)]
        if rng.random() < 0.15:  # a join key or filter column influences it
            o = rng.choice(sources)
            edges.append((o.name, rng.choice(o.columns), "INDIRECT", rng.choice(INDIRECT), False))
        t.lineage[col] = edges


def events(all_tables: list[Table], seed: int = 7, fail_rate: float = 0.03, days: int = 1,
           starts: bool = False) -> Iterator[dict[str, Any]]:
    """The runs of every table's job, one per day for ``days`` days, in event-time order per day.

    Each run ends with a COMPLETE (or, at ``fail_rate``, a FAIL) event carrying the output schema and
    column lineage; with ``starts`` it is preceded by a START event naming the same inputs and
    outputs with the schema but no column lineage, as the Spark listener sends them.
    """
    rng = random.Random(seed + 1)
    first_day = datetime(2024, 6, 1, 1, tzinfo=UTC)
    parents = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(10)]
    for day in range(days):
        start = first_day + timedelta(days=day)
        todays: list[tuple[datetime, int, dict[str, Any]]] = []
        for i, t in enumerate(all_tables):
            run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            failed = t.layer > 0 and rng.random() < fail_rate
            when = start + timedelta(minutes=t.layer * 30, seconds=i)
            done = when + timedelta(seconds=rng.randrange(30, 1200)) if starts else when
            parent = {"parent": {
                "run": {"runId": parents[i % len(parents)]},
                "job": {"namespace": JOB_NS, "name": f"nightly_{i % len(parents)}"}}}
            run_facets: dict[str, Any] = dict(parent)
            if failed:
                run_facets["errorMessage"] = {"message": f"task failed: column {t.columns[-1]} missing",
                                              "programmingLanguage": "python"}
            schema = {"fields": [{"name": c, "type": "STRING" if c == "email" else "BIGINT"}
                                 for c in t.columns]}
            owners = {"owners": [{"name": f"team:{t.name.split('.')[0]}-{i % 7}"}]}
            output: dict[str, Any] = {"namespace": NS, "name": t.name,
                                      "facets": {"schema": schema, "ownership": owners}}
            if t.lineage:
                output["facets"]["columnLineage"] = {"fields": {
                    col: {"inputFields": [
                        {"namespace": NS, "name": src, "field": f, "transformations": [
                            {"type": kind, "subtype": sub, "masking": masked}]}
                        for src, f, kind, sub, masked in edges]}
                    for col, edges in t.lineage.items()}}
            job = {"namespace": JOB_NS, "name": f"build_{t.name}", "facets": {}}
            inputs = [{"namespace": NS, "name": s} for s in t.inputs]
            if starts:
                todays.append((when, 2 * i, {
                    "eventType": "START", "eventTime": _z(when), "producer": PRODUCER,
                    "schemaURL": SCHEMA_URL, "run": {"runId": run_id, "facets": parent}, "job": job,
                    "inputs": inputs,
                    "outputs": [{"namespace": NS, "name": t.name, "facets": {"schema": schema}}]}))
            todays.append((done, 2 * i + 1, {
                "eventType": "FAIL" if failed else "COMPLETE", "eventTime": _z(done),
                "producer": PRODUCER, "schemaURL": SCHEMA_URL,
                "run": {"runId": run_id, "facets": run_facets}, "job": job,
                "inputs": inputs, "outputs": [output]}))
        todays.sort(key=lambda e: (e[0], e[1]))
        yield from (e for _, _, e in todays)


# Each facet's schema, as OpenLineage's clients stamp it (Marquez refuses a facet without
# ``_producer`` and ``_schemaURL``; lineage-graph accepts both)
FACET_SCHEMAS = {
    "parent": "1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet",
    "errorMessage": "1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
    "schema": "1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
    "ownership": "1-0-1/OwnershipDatasetFacet.json#/$defs/OwnershipDatasetFacet",
    "columnLineage": "1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet",
}


def spec_complete(event: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``event`` whose every facet carries ``_producer`` and ``_schemaURL``."""
    def stamp(facets: dict[str, Any]) -> dict[str, Any]:
        return {name: {"_producer": PRODUCER,
                       "_schemaURL": f"https://openlineage.io/spec/facets/{FACET_SCHEMAS[name]}",
                       **facet}
                for name, facet in facets.items()}

    out = dict(event)
    out["run"] = {**event["run"], "facets": stamp(event["run"].get("facets", {}))}
    out["job"] = {**event["job"], "facets": stamp(event["job"].get("facets", {}))}
    for side in ("inputs", "outputs"):
        out[side] = [{**d, "facets": stamp(d.get("facets", {}))} for d in event.get(side, [])]
    return out


def _z(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", type=Path, required=True, help="NDJSON file to write")
    a = p.parse_args()
    ts = tables(a.datasets, a.seed)
    with a.out.open("w") as f:
        for e in events(ts, a.seed):
            f.write(json.dumps(e) + "\n")
    print(f"{len(ts)} datasets, {sum(len(t.columns) for t in ts)} columns -> {a.out}")


if __name__ == "__main__":
    main()

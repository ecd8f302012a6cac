"""The cost of redacting one answer, in process (api.access.guard._redact_body): a Marquez-shaped
lineage graph of 60 nodes (about 50 KB) for a grant of the M estate's size (10,000 datasets, every
tenth hidden, a PII column in every third), each object of the graph walked, against the same
with the objects that name nothing hidden kept whole (``current``: nothing loaded since the
hidden names were read). No Neo4j: the figures are Python's.

    python -m bench.redaction
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from api.access.guard import _redact_body
from api.access.hidden import Hidden, hidden_from_rows
from bench.latency import emit, percentile
from impact.access.grants import read_access

NS = "postgres://warehouse:5432"
ACCESS = """\
contacts:
  "*": owners@example.com
grants:
  - name: analyst
    tokens: [bench-analyst-token-1]
    hide_tags: [finance, PII]
"""


def hidden_names(datasets: int = 10_000) -> Hidden:
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "access.yaml"
        path.write_text(ACCESS, encoding="utf-8")
        access = read_access(path)
    rows = []
    for i in range(datasets):
        rows.append({"kind": "dataset", "namespace": NS, "name": _name(i),
                     "tags": ["finance"] if i % 10 == 0 else [],
                     "fieldTags": [f"email_{i % 7}\u001fPII"] if i % 3 == 0 else []})
        rows.append({"kind": "job", "namespace": NS, "name": f"build_{_name(i)}", "tags": [],
                     "fieldTags": []})
    return hidden_from_rows(access.grants[0], access, b"bench-salt", rows)


def _name(i: int) -> str:
    return f"schema_{i % 50}.t_{i:05d}"


def lineage_answer(first: int = 100, count: int = 30) -> bytes:
    """Marquez's lineage shape: a dataset and its job per table, with fields and edges."""
    graph: list[dict[str, Any]] = []
    for i in range(first, first + count):
        name, job = _name(i), f"build_{_name(i)}"
        graph.append({"id": f"dataset:{NS}:{name}", "type": "DATASET", "inEdges": [],
                      "outEdges": [], "data": {
                          "type": "DB_TABLE", "id": {"namespace": NS, "name": name}, "name": name,
                          "physicalName": name, "namespace": NS, "sourceName": "warehouse",
                          "fields": [{"name": f"email_{i % 7}", "type": "VARCHAR", "tags": [],
                                      "description": None}]
                          + [{"name": f"c{k}", "type": "INT", "tags": [], "description": None}
                             for k in range(6)],
                          "facets": {}, "tags": [], "lastModifiedAt": None, "description": None}})
        graph.append({"id": f"job:{NS}:{job}", "type": "JOB", "data": {
            "type": "BATCH", "id": {"namespace": NS, "name": job}, "name": job, "simpleName": job,
            "namespace": NS, "inputs": [{"namespace": NS, "name": _name(i + 1)}],
            "outputs": [{"namespace": NS, "name": name}], "facets": {},
            "latestRun": {"id": "0190b4e4-0000-7000-8000-000000000001", "state": "COMPLETED"}},
            "inEdges": [{"origin": f"dataset:{NS}:{_name(i + 1)}", "destination": f"job:{NS}:{job}"}],
            "outEdges": [{"origin": f"job:{NS}:{job}", "destination": f"dataset:{NS}:{name}"}]})
    return orjson.dumps({"graph": graph})


def main() -> None:
    hidden, body = hidden_names(), lineage_answer()
    found: dict[str, Any] = {"answer bytes": len(body), "hidden datasets": len(hidden.nodes),
                             "hidden columns": len(hidden.columns)}
    for name, current in (("every object walked", False), ("clean objects kept", True)):
        took = []
        for _ in range(320):
            started = time.perf_counter()
            _, done = _redact_body(body, "application/json", hidden, frozenset(), False, False,
                                   current)
            took.append((time.perf_counter() - started) * 1000)
        took = took[20:]
        found[name] = {"p50 ms": round(statistics.median(took), 2),
                       "p95 ms": round(percentile(took, 95), 2), "redacted": done.count}
    emit(found, None)


if __name__ == "__main__":
    main()

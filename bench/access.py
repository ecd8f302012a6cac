"""Questions with a restricted token against the same questions unrestricted, over HTTP.

One night of the generated estate (bench.generate) in the bench Neo4j, every tenth table tagged
``finance`` and every ``email`` column tagged ``PII`` (DatasetEvents with a tags facet); a real
``lineage serve`` with an access file whose grant ``analyst`` hides both tags, and a token of
``LINEAGE_API_TOKENS`` that sees everything. Each sampled question, of a table the analyst may
see, is asked by both tokens, which one first alternating from one sample to the next, after a
round of every question to warm both (the grant's hidden names are read once, then kept); the
figures are the client's time per request.

    python -m bench.access --datasets 1000                 # S
    python -m bench.access --datasets 10000 --json docs/results/access-m.json   # M
"""

from __future__ import annotations

import http.client
import random
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

from bench.generate import NS
from bench.ingest import free_port, services_env, start_services
from bench.latency import bench_settings, emit, estate_options, loaded_estate, percentile
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem

ADMIN, ANALYST = "bench-admin-token", "bench-analyst-token"
ROUNDS = 3
"""Each sample is asked this many times by each token (the machines are noisy)."""
ACCESS = f"""\
contacts:
  "*": data-owners@example.com
grants:
  - name: analyst
    tokens: [{ANALYST}]
    hide_tags: [finance, PII]
"""


def _tags(ts: list[Any]) -> list[dict[str, Any]]:
    """DatasetEvents tagging every tenth table ``finance`` and every email column ``PII``."""
    out = []
    for i, t in enumerate(ts):
        entries = [{"key": "PII", "value": "true", "field": c} for c in t.columns if "email" in c]
        if i % 10 == 0:
            entries.append({"key": "finance", "value": "true"})
        if entries:
            out.append({"eventTime": "2030-01-01T00:00:00Z", "producer": "bench.access",
                        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json"
                                     "#/$defs/DatasetEvent",
                        "dataset": {"namespace": NS, "name": t.name, "facets": {"tags": {
                            "_producer": "bench.access", "_schemaURL": "https://openlineage.io/"
                            "spec/facets/1-0-0/TagsDatasetFacet.json", "tags": entries}}}})
    return out


def _asks(ts: list[Any], samples: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    ns = urllib.parse.quote(NS, safe="")
    # asked of what the analyst may see (a hidden table asked for is a missing one, 404)
    visible = [t for i, t in enumerate(ts) if i % 10]
    picked = rng.sample(visible, min(samples, len(visible)))
    sources = [(t.name, c) for t in visible if t.layer == 0 for c in t.columns[:1]]
    q = urllib.parse.quote
    return {
        "blast radius, dataset, depth 20": [
            f"/api/v1/impact/dataset?namespace={ns}&name={q(t.name)}&depth=20" for t in picked],
        "upstream, dataset": [f"/api/v1/upstream/dataset?namespace={ns}&name={q(t.name)}"
                              for t in picked],
        "Marquez lineage, depth 5": [f"/api/v1/lineage?nodeId={q(f'dataset:{NS}:{t.name}')}&depth=5"
                                     for t in picked],
        "where, a source's first column": [
            f"/api/v1/where?namespace={ns}&dataset={q(d)}&column={q(c)}"
            for d, c in rng.sample(sources, min(samples, len(sources)))],
        "dataset (Marquez)": [f"/api/v1/namespaces/{ns}/datasets/{q(t.name)}" for t in picked],
    }


def _get(conn: http.client.HTTPConnection, url: str, token: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    conn.request("GET", url, headers={"Authorization": f"Bearer {token}"})
    r = conn.getresponse()
    body = r.read()
    took = (time.perf_counter() - started) * 1000
    if r.status != 200:
        raise SystemExit(f"{url}: {r.status} {body[:300]!r}")
    return took, int(r.getheader("lineage-redacted") or 0), len(body)


def main() -> None:
    a = estate_options(__doc__)
    graph, ts, evs, _ = loaded_estate(a.datasets, a.seed, days=1)
    tags = _tags(ts)
    report = Ingester(graph, batch_size=500).ingest(
        (RawItem(f"tags[{i}]", obj=e) for i, e in enumerate(tags)), IngestReport())
    assert report.loaded == len(tags), report.rejected[:3]
    graph.close()
    settings = bench_settings()
    tmp = Path(tempfile.mkdtemp(prefix="lineage-bench-access-"))
    (tmp / "access.yaml").write_text(ACCESS, encoding="utf-8")
    port = free_port()
    env = services_env(settings, tmp, port) | {"LINEAGE_ACCESS": str(tmp / "access.yaml"),
                                               "LINEAGE_API_TOKENS": f"{ADMIN}:read",
                                               "LINEAGE_AUDIT_DIR": str(tmp / "audit")}
    procs = start_services(env, tmp, port, ("serve",))
    t0 = time.perf_counter()
    while "warmed" not in (tmp / "serve.log").read_text() and time.perf_counter() - t0 < 600:
        time.sleep(0.5)
    results: dict[str, Any] = {"datasets": a.datasets, "events": len(evs) + len(tags),
                               "samples": a.samples, "rounds": ROUNDS, "questions": {}}
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        asks = _asks(ts, a.samples, a.seed)
        for urls in asks.values():  # warm both: pages, plans, the grant's hidden names
            for url in urls[:3]:
                _get(conn, url, ADMIN)
                _get(conn, url, ANALYST)
        for name, urls in asks.items():
            times: dict[str, list[float]] = {ADMIN: [], ANALYST: []}
            redacted, sizes = [], []
            for i, url in enumerate(urls * ROUNDS):
                order = (ADMIN, ANALYST) if i % 2 == 0 else (ANALYST, ADMIN)
                for token in order:
                    took, n, size = _get(conn, url, token)
                    times[token].append(took)
                    if token == ANALYST:
                        redacted.append(n)
                        sizes.append(size)
            row = {"unrestricted_p50_ms": percentile(times[ADMIN], 50),
                   "unrestricted_p95_ms": percentile(times[ADMIN], 95),
                   "restricted_p50_ms": percentile(times[ANALYST], 50),
                   "restricted_p95_ms": percentile(times[ANALYST], 95),
                   "redacted_median": sorted(redacted)[len(redacted) // 2],
                   "answers_redacted": sum(1 for n in redacted if n) // ROUNDS,
                   "answer_kb_median": sorted(sizes)[len(sizes) // 2] / 1024}
            row["p50_ratio"] = row["restricted_p50_ms"] / row["unrestricted_p50_ms"]
            row["p95_ratio"] = row["restricted_p95_ms"] / row["unrestricted_p95_ms"]
            results["questions"][name] = row
            print(f"{name:34s} unrestricted p50 {row['unrestricted_p50_ms']:6.1f} p95 "
                  f"{row['unrestricted_p95_ms']:6.1f} | restricted p50 {row['restricted_p50_ms']:6.1f}"
                  f" p95 {row['restricted_p95_ms']:6.1f} | x{row['p50_ratio']:.2f} / "
                  f"x{row['p95_ratio']:.2f}, {row['answers_redacted']} of {len(urls)} redacted",
                  file=sys.stderr)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=15)
    emit(results, a.json)


if __name__ == "__main__":
    main()

"""The first answers after `lineage up`, and after a load, against the same questions asked warm:
what a user meets first, on the CLI and over HTTP; and the first batch loaded after a start
against later ones.

A stack (`lineage up`, its own state directory and free ports) is loaded with DATASETS generated
tables (bench.generate, one night of runs), stopped and started again (`lineage down`, `lineage
up`: a cold Neo4j). Right after `up` returns, five questions (the README's: blast radius,
upstream, root cause, where, show job) are asked once each, then WARM more times each; the
first ask's time is set against the median of the warm ones. The CLI is measured after one
restart, HTTP after another. Then a night of events is posted and, once the worker has loaded
it, the questions are asked again (first after a load). Last, the first batch posted after a
restart (Lineage-Wait: loaded, so the answer comes when it is in the graph) against the next
ones.

    python -m bench.first_answers                     # 1,000 datasets
    python -m bench.first_answers --datasets 5000 --out docs/results/first-answers.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench.generate import NS, events, tables
from bench.latency import emit
from bench.stack import Stack, scratch

WARM = 5


def _questions(ts: list[Any]) -> dict[str, tuple[list[str], str]]:
    """Each question as (CLI arguments, HTTP path), asked of the example's widest source."""
    source = next(t for t in ts if t.layer == 0)
    derived = next(t for t in ts if t.layer == 3)
    column = source.columns[0]
    q = urllib.parse.quote
    return {
        "blast radius": (["impact", "dataset", NS, source.name],
                         f"/api/v1/impact/dataset?namespace={q(NS)}&name={q(source.name)}"),
        "upstream": (["upstream", "dataset", NS, derived.name],
                     f"/api/v1/upstream/dataset?namespace={q(NS)}&name={q(derived.name)}"),
        "root cause": (["root-cause", "dataset", NS, derived.name],
                       f"/api/v1/root-cause/dataset?namespace={q(NS)}&name={q(derived.name)}"),
        "where": (["where", NS, source.name, column],
                  f"/api/v1/where?namespace={q(NS)}&dataset={q(source.name)}&column={q(column)}"),
        "show job": (["show", "job", "bench", f"build_{derived.name}"],
                     f"/api/v1/namespaces/bench/jobs/{q('build_' + derived.name, safe='')}"),
    }


def _cli(stack: Stack, args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "api.cli", *args, "--format", "json"],
                   env=stack.env, check=True, capture_output=True, timeout=600)
    return time.perf_counter() - started


def _http(stack: Stack, path: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(stack.url + path, timeout=600) as response:
        response.read()
    return time.perf_counter() - started


def _post(stack: Stack, batch: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    request = urllib.request.Request(f"{stack.url}/api/v1/lineage", data=json.dumps(batch).encode(),
                                     headers={"Content-Type": "application/json",
                                              "Lineage-Wait": "loaded"}, method="POST")
    with urllib.request.urlopen(request, timeout=600) as response:
        response.read()
    return time.perf_counter() - started


def first_and_warm(ask: Any, questions: dict[str, Any]) -> dict[str, Any]:
    """Each question asked once, then WARM times more: the first, the warm median, the ratio."""
    first = {what: ask(q) for what, q in questions.items()}
    warm = {what: statistics.median(ask(q) for _ in range(WARM)) for what, q in questions.items()}
    return {what: {"first": round(first[what], 3), "warm": round(warm[what], 3),
                   "ratio": round(first[what] / warm[what], 2)} for what in questions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    ts = tables(args.datasets)
    questions = _questions(ts)
    nights = events(ts, days=5, starts=True)
    per_night = 2 * len(ts)
    with scratch("lineage-first-") as work:
        stack = Stack(work / "state", "sqlite", 1)
        first_night = work / "night-1.ndjson"
        first_night.write_text("\n".join(json.dumps(next(nights)) for _ in range(per_night)))
        results: dict[str, Any] = {"datasets": args.datasets}
        try:
            stack.lineage("up")
            stack.lineage("ingest", str(first_night))
            for door, ask in (("cli", lambda q: _cli(stack, q[0])), ("http", lambda q: _http(stack, q[1]))):
                stack.lineage("down")
                stack.lineage("up")
                results[f"after up, {door}"] = first_and_warm(ask, questions)
            night = [next(nights) for _ in range(per_night)]
            for i in range(0, len(night), 500):
                _post(stack, night[i:i + 500])
            results["after a load, cli"] = first_and_warm(lambda q: _cli(stack, q[0]), questions)
            stack.lineage("down")
            stack.lineage("up")
            batches = [[next(nights) for _ in range(3)] for _ in range(6)]
            took = [_post(stack, b) for b in batches]
            results["batches of 3 after up"] = {"first": round(took[0], 3),
                                                "later median": round(statistics.median(took[1:]), 3),
                                                "ratio": round(took[0] / statistics.median(took[1:]), 2)}
        finally:
            stack.lineage("down")
    emit(results, args.out)


if __name__ == "__main__":
    main()

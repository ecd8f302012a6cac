"""One plot per question: latency (p50 and p95) against graph size, from bench.latency JSON files.

    python -m bench.latency --datasets 1000 --json S.json     # and M (10,000), L (100,000)
    python -m bench.plot S.json M.json L.json --out docs/img   # needs the bench extra (matplotlib)
    python -m bench.plot S.json M.json L.json --table          # the markdown table of all sizes
    python -m bench.plot peer-S.json peer-M.json               # bench.peer files: both servers

Each file is one graph size; its ``meta.datasets`` is the x axis (log scale). A question missing
from a file (an older run) is left out of that file's point. Files written by ``bench.peer`` get one
plot per question with each server's p50 and p95 (``peer-*.png``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any


def slug(question: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", question.lower()).strip("-")


def load(paths: list[Path]) -> list[dict[str, Any]]:
    runs = [json.loads(p.read_text()) for p in paths]
    return sorted(runs, key=lambda r: r["meta"]["datasets"])


def table(runs: list[dict[str, Any]]) -> str:
    """p50 / p95 ms of every question at every size, and the floor at the largest size."""
    sizes = [f"{r['meta']['datasets']:,} datasets" for r in runs]
    lines = ["| question | " + " | ".join(f"{s} p50 / p95 ms" for s in sizes)
             + " | in-memory floor p50 ms (largest) |",
             "|---|" + "---:|" * (len(runs) + 1)]
    for q in dict.fromkeys(q for r in runs for q in r["results"]):
        cells = [f"{r['results'][q]['p50_ms']:.1f} / {r['results'][q]['p95_ms']:.1f}"
                 if q in r["results"] else "-" for r in runs]
        floor = runs[-1]["results"].get(q, {}).get("floor_p50_ms")
        lines.append(f"| {q} | " + " | ".join(cells) + f" | {'-' if floor is None else f'{floor:.2f}'} |")
    return "\n".join(lines)


def _ratio(num: float | None, den: float | None) -> str:
    return f"{num / den:,.1f}x" if num and den else "-"


def _ms(row: dict[str, Any], pct: str) -> str:
    value = row.get(f"{pct}_ms")
    return "-" if value is None else f"{value:,.1f}"


def _differing(row: dict[str, Any]) -> str:
    if not row.get("n"):
        return "-"
    return f"{row['answers_differing']}/{row['n']} ({row['missing_median']} / {row['extra_median']})"


def peer_table(runs: list[dict[str, Any]]) -> str:
    """bench.peer files: per size, ingest and each lineage question on both servers, with ratios."""
    lines = ["| size | measure | lineage-graph | Marquez | ratio |", "|---|---|---:|---:|---:|"]
    for r in runs:
        size = f"{r['meta']['datasets']:,}"
        ours, theirs = r["ingest"]["lineage-graph"], r["ingest"].get("marquez", {})
        for what in ("acknowledged_per_s", "queryable_per_s"):
            lines.append(f"| {size} | ingest, 1 event per request, events/s {what[:-6]} | "
                         f"{ours[what]:,.0f} | {theirs.get(what, 0):,.1f} | "
                         f"{_ratio(ours[what], theirs.get(what))} |")
        arrays = r["ingest"].get("ours, arrays of 100")
        if arrays:
            lines.append(f"| {size} | ingest, arrays of 100, events/s queryable | "
                         f"{arrays['queryable_per_s']:,.0f} | - | - |")
        for q, sides in r["lineage"].items():
            us, them = sides["lineage-graph"], sides.get("marquez", {"n": 0})
            # a request the peer did not answer in time (its budget then stops the question)
            failed = them.get("errors_or_timeouts")
            late = f", {failed} failed or timed out" if failed else ""
            for pct in ("p50", "p95"):
                lines.append(f"| {size} | {q}, {pct} ms (samples {us['n']} / {them['n']}{late}) | "
                             f"{_ms(us, pct)} | {_ms(them, pct)} | "
                             f"{_ratio(them.get(f'{pct}_ms'), us.get(f'{pct}_ms'))} |")
            lines.append(f"| {size} | {q}: differing from the truth (median missing / extra) | "
                         f"{_differing(us)} | {_differing(them)} | - |")
        lines += _footprint_rows(r, size)
    return "\n".join(lines)


def _footprint_rows(r: dict[str, Any], size: str) -> list[str]:
    """Memory, disk, and the questions only we answer (over HTTP, and in process)."""
    mem = r.get("memory_peak_mb", {})
    rows = [f"| {size} | peak memory, MB (summed PSS of each side's processes) | "
            f"{mem.get('lineage-graph', 0):,.0f} | {mem.get('marquez', 0):,.0f} | "
            f"{_ratio(mem.get('lineage-graph'), mem.get('marquez'))} |"]
    disk = r.get("disk", {})
    ours, theirs = disk.get("lineage-graph", {}), disk.get("marquez", {})
    if "mb_per_million_events" in ours:
        theirs_mb = theirs.get("mb_per_million_events")
        rows.append(f"| {size} | disk, MB per million events | {ours['mb_per_million_events']:,.0f} | "
                    f"{'-' if theirs_mb is None else f'{theirs_mb:,.0f}'} | "
                    f"{_ratio(ours['mb_per_million_events'], theirs_mb)} |")
    for q, row in r.get("ours_only", {}).items():
        rows.append(f"| {size} | {q}, over HTTP p50 / p95 ms (in process p50 / p95) | "
                    f"{row['p50_ms']:,.1f} / {row['p95_ms']:,.1f} "
                    f"({row['in_process_p50_ms']:,.1f} / {row['in_process_p95_ms']:,.1f}) | - | - |")
    return rows


def peer_plots(runs: list[dict[str, Any]], out: Path, plt: Any) -> list[Path]:
    """From bench.peer files: per question, both servers' p50 and p95 against graph size."""
    written = []
    for q in dict.fromkeys(q for r in runs for q in r["lineage"]):
        fig, ax = plt.subplots(figsize=(5.5, 3.6), dpi=110)
        for server, mark in (("lineage-graph", "o"), ("marquez", "s")):
            points = [(r["meta"]["datasets"], r["lineage"][q][server]) for r in runs
                      if server in r["lineage"].get(q, {}) and r["lineage"][q][server].get("n")]
            if not points:
                continue
            xs = [x for x, _ in points]
            ax.plot(xs, [v["p50_ms"] for _, v in points], f"{mark}-", label=f"{server} p50")
            ax.plot(xs, [v["p95_ms"] for _, v in points], f"{mark}--", label=f"{server} p95")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("datasets in the graph (about 10 columns each)")
        ax.set_ylabel("milliseconds over HTTP")
        ax.set_title(f"GET /api/v1/{q}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"peer-{slug(q)}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", type=Path, nargs="+", help="JSON files written by bench.latency --json")
    p.add_argument("--out", type=Path, default=Path("docs/img"), help="folder for the PNG files")
    p.add_argument("--table", action="store_true", help="print one markdown table instead of plotting")
    a = p.parse_args()
    if a.table:
        runs = load(a.runs)
        print(peer_table(runs) if all("lineage" in r for r in runs) else table(runs))
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("bench.plot needs matplotlib: pip install -e '.[bench]'")
    runs = load(a.runs)
    a.out.mkdir(parents=True, exist_ok=True)
    if all("lineage" in r for r in runs):
        for out in peer_plots(runs, a.out, plt):
            print(out)
        return
    questions = list(dict.fromkeys(q for r in runs for q in r["results"]))
    for q in questions:
        points = [(r["meta"]["datasets"], r["results"][q]) for r in runs if q in r["results"]]
        xs = [x for x, _ in points]
        fig, ax = plt.subplots(figsize=(5.5, 3.6), dpi=110)
        ax.plot(xs, [v["p50_ms"] for _, v in points], "o-", label="lineage-graph p50")
        ax.plot(xs, [v["p95_ms"] for _, v in points], "s--", label="lineage-graph p95")
        if all("floor_p50_ms" in v for _, v in points):
            ax.plot(xs, [v["floor_p50_ms"] for _, v in points], "^:", label="in-memory floor p50")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("datasets in the graph (about 10 columns each)")
        ax.set_ylabel("milliseconds")
        ax.set_title(q, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        out = a.out / f"latency-{slug(q)}.png"
        fig.savefig(out)
        plt.close(fig)
        print(out)


if __name__ == "__main__":
    main()

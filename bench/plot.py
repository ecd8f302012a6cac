"""One plot per question: latency (p50 and p95) against graph size, from bench.latency JSON files.

    python -m bench.latency --datasets 1000 --json S.json     # and M (10,000), L (100,000)
    python -m bench.plot S.json M.json L.json --out docs/img   # needs the bench extra (matplotlib)
    python -m bench.plot S.json M.json L.json --table          # the markdown table of all sizes

Each file is one graph size; its ``meta.datasets`` is the x axis (log scale). A question missing
from a file (an older run) is left out of that file's point.
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", type=Path, nargs="+", help="JSON files written by bench.latency --json")
    p.add_argument("--out", type=Path, default=Path("docs/img"), help="folder for the PNG files")
    p.add_argument("--table", action="store_true", help="print one markdown table instead of plotting")
    a = p.parse_args()
    if a.table:
        print(table(load(a.runs)))
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("bench.plot needs matplotlib: pip install -e '.[bench]'")
    runs = load(a.runs)
    a.out.mkdir(parents=True, exist_ok=True)
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

"""The README's first commands, timed as a new user runs them: each in turn on one fresh state
directory (its own free ports), with the tools already installed (pip's packages, Maven's cache of
Neo4j's jars), so that the figures say what a user waits for once the downloads are done.

    python -m bench.first_minutes                     # ingest, up, demo, demo --fail
    python -m bench.first_minutes --ml --out docs/results/first-minutes.json

Each step's seconds and its last line of output go to stdout and, with --out, to a JSON file
(with the commit and the machine's cores), for docs/benchmarks.md, "The first minutes".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.stack import Stack

ROOT = Path(__file__).resolve().parents[1]
STEPS: list[tuple[str, list[str]]] = [
    ("lineage ingest examples/events (a fresh state: Neo4j assembled and started)",
     ["ingest", "examples/events"]),
    ("lineage up (Neo4j already running)", ["up"]),
    ("lineage demo", ["demo"]),
    ("lineage demo --fail", ["demo", "--fail"]),
]
ML = ("lineage demo --ml (MLflow installed into the state directory the first time)",
      ["demo", "--ml"])


def run(stack: Stack, what: str, args: list[str]) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "api.cli", *args], env=stack.env, cwd=ROOT,
                          capture_output=True, text=True, timeout=3600)
    seconds = round(time.monotonic() - started, 1)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    step = {"step": what, "seconds": seconds, "exit": done.returncode,
            "last line": lines[-1].strip()[:200] if lines else ""}
    print(f"{seconds:7.1f} s  exit {done.returncode}  {what}", flush=True)
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ml", action="store_true", help="also `lineage demo --ml`")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="lineage-first-minutes-") as tmp:
        stack = Stack(Path(tmp) / "state", "sqlite", 1)
        steps = []
        try:
            for what, command in STEPS + ([ML] if args.ml else []):
                steps.append(run(stack, what, command))
        finally:
            stack.lineage("down")
    result = {"commit": commit, "date": time.strftime("%Y-%m-%d"), "cores": os.cpu_count(),
              "steps": steps}
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

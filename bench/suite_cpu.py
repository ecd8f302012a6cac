"""Where the test suite's CPU goes: run a command (by default the README's test command) and
sample every process on the machine twice a second, adding each process's CPU time (user and
system, from /proc) to the kind of program it is: the test Neo4j servers, Spark, the Kafka
broker, Airflow, dbt, MLflow, our own API and workers, the test processes, Chromium.

A process's last half second is missed (it may end between samples), so the kinds' sum is a
little under the machine's; the machine's own figure (from /proc/stat) is printed beside it.

    python3 -m bench.suite_cpu --json cpu.json -- python3 -m pytest
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")

# the first rule whose every word is in a process's command line names its kind
KINDS = (
    ("neo4j", ("org.neo4j",)),
    ("kafka broker", ("kafka.Kafka",)),
    ("spark", ("org.apache.spark",)),
    ("java (other)", ("java",)),
    ("airflow", ("airflow",)),
    ("dbt", ("dbt",)),
    ("mlflow", ("mlflow",)),
    ("lineage api/worker", ("lineage",)),
    ("pytest", ("pytest",)),
    ("chromium", ("chrom",)),
    ("prometheus", ("prom",)),
    ("python (other)", ("python",)),
)


def kind_of(cmdline: str) -> str:
    for kind, words in KINDS:
        if all(word in cmdline for word in words):
            return kind
    return "other"


def machine_busy_seconds() -> float:
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[:7])
    return (user + nice + system + irq + softirq) / TICK


# per process of these kinds, its command's tell-tale, its CPU in all and in its first 30 s
DETAILED = ("neo4j",)
EARLY_S = 30.0


def sample(seen: dict[int, tuple[str, float]], detail: dict[int, dict[str, object]]) -> None:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        after_name = stat.rsplit(")", 1)[1].split()
        cpu = (int(after_name[11]) + int(after_name[12])) / TICK  # utime, stime
        # read again each time: a launcher script (spark-submit, kafka-server-start) execs java;
        # a process that has ended (a zombie) has no command line left, and keeps its kind
        kind = kind_of(raw.replace(b"\0", b" ").decode(errors="replace")) if raw else "other"
        if kind == "other" and pid in seen:
            kind = seen[pid][0]
        seen[pid] = (kind, cpu)
        if kind in DETAILED:
            started = int(after_name[19]) / TICK  # starttime, seconds after boot
            age = uptime() - started
            row = detail.setdefault(pid, {"kind": kind, "home": home_of(raw), "early_cpu_s": None})
            row["cpu_s"], row["age_s"] = cpu, round(age, 1)
            if row["early_cpu_s"] is None and age >= EARLY_S:
                row["early_cpu_s"] = cpu


def uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def home_of(raw: bytes) -> str:
    """The Neo4j home a server's command line names (its -Dneo4j.home or --home-dir), else ''."""
    for arg in raw.decode(errors="replace").split("\0"):
        for prefix in ("-Dneo4j.home=", "--home-dir="):
            if arg.startswith(prefix):
                return arg.removeprefix(prefix)
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the figures here as well")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="after --, the command to run (default: python3 -m pytest)")
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"] or [sys.executable, "-m", "pytest"]
    seen: dict[int, tuple[str, float]] = {}
    detail: dict[int, dict[str, object]] = {}
    sample(seen, detail)
    before = {pid: cpu for pid, (_, cpu) in seen.items()}
    busy0, wall0 = machine_busy_seconds(), time.monotonic()
    child = subprocess.Popen(command)
    while child.poll() is None:
        sample(seen, detail)
        time.sleep(0.5)
    wall, busy = time.monotonic() - wall0, machine_busy_seconds() - busy0
    by_kind: dict[str, float] = {}
    for pid, (kind, cpu) in seen.items():
        by_kind[kind] = by_kind.get(kind, 0.0) + cpu - before.get(pid, 0.0)
    processes = [row for pid, row in detail.items() if pid not in before]
    figures = {"command": command, "exit": child.returncode, "wall_s": round(wall, 1),
               "machine_cpu_s": round(busy, 1),
               "by_kind_cpu_s": {k: round(v, 1) for k, v in
                                 sorted(by_kind.items(), key=lambda kv: -kv[1])},
               "processes": processes}
    for kind, cpu in figures["by_kind_cpu_s"].items():  # type: ignore[union-attr]
        print(f"{cpu:9.1f} s  {kind}")
    print(f"{busy:9.1f} s  the machine, in {wall:.0f} s")
    for row in processes:
        print(f"  {row['kind']} {row['home']}: {row['cpu_s']:.1f} s CPU in {row['age_s']} s,"
              f" {row['early_cpu_s']} s in its first {EARLY_S:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()

"""``lineage demo``: run the example PySpark pipeline with the OpenLineage listener pointed at the
running lineage-graph, wait until its lineage is queryable, and say what to try."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graph.errors import ConfigError
from graph.settings import Settings
from ingest.log import open_log
from ingest.spark_env import listener_jar, openlineage_conf, properties_text, spark_submit
from ingest.worker import CONSUMER

PIPELINE = Path(__file__).resolve().parents[1] / "examples" / "spark_shop" / "pipeline.py"
NAMESPACE = "shop"


@dataclass
class DemoRun:
    returncode: int
    spark_seconds: float
    events: int
    events_per_job: dict[str, int] = field(default_factory=dict)
    queryable_after: float | None = None  # seconds from the Spark job's end to lag 0
    warehouse: Path = Path()
    failed_jobs: list[str] = field(default_factory=list)


def run_pipeline(settings: Settings, url: str, warehouse: Path, *, nights: int = 1,
                 fail_on_night: int = 0, users: int = 2000, orders: int = 8000,
                 api_key: str | None = None,
                 progress: Callable[[float], None] = lambda seconds: None) -> tuple[int, float, str]:
    """spark-submit the pipeline with the listener; returns (exit code, seconds, its output).
    ``progress`` is called with the seconds elapsed every half second while Spark runs."""
    if not PIPELINE.is_file():
        raise ConfigError(f"the demo pipeline is not at {PIPELINE}: run the demo from a clone")
    conf = openlineage_conf(url, NAMESPACE, api_key, listener_jar(settings)) | {
        "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": "1g"}
    props = settings.state_dir / "demo" / "openlineage.properties"
    props.parent.mkdir(parents=True, exist_ok=True)
    props.write_text(properties_text(conf))
    env = os.environ | {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    output = props.parent / "spark-submit.log"
    started = time.perf_counter()
    # spark-submit passes the Python driver's stderr through its stdout: both go to one file
    with output.open("w", encoding="utf-8") as sink:
        proc = subprocess.Popen(
            [str(spark_submit()), "--master", "local[2]", "--properties-file", str(props),
             str(PIPELINE), "--warehouse", str(warehouse), "--nights", str(nights),
             "--fail-on-night", str(fail_on_night), "--users", str(users), "--orders", str(orders)],
            env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
        try:
            while proc.poll() is None:
                if time.perf_counter() - started > 900:
                    proc.kill()
                    raise ConfigError(f"the Spark pipeline ran past 900 s; its output: {output}")
                progress(time.perf_counter() - started)
                time.sleep(0.5)
        finally:
            if proc.poll() is None:
                proc.kill()
    return proc.wait(), time.perf_counter() - started, output.read_text("utf-8", errors="replace")


def demo(settings: Settings, url: str, fail: bool, users: int = 2000, orders: int = 8000,
         api_key: str | None = None, wait: float = 120.0,
         progress: Callable[[float, int, int], None] = lambda seconds, events, jobs: None) -> DemoRun:
    """Run the pipeline; ``progress`` hears, every half second, the seconds elapsed, the events
    received so far and how many runs have ended (a COMPLETE or FAIL event)."""
    log = open_log(settings.log_path)
    before = log.last_seq()
    warehouse = settings.state_dir / "demo" / "warehouse"

    def seen(seconds: float) -> None:
        entries = log.read(before, 100_000)
        ended = sum(1 for e in entries if e.event.get("eventType") in ("COMPLETE", "FAIL"))
        progress(seconds, len(entries), ended)

    code, seconds, stderr = run_pipeline(settings, url, warehouse, nights=2 if fail else 1,
                                         fail_on_night=2 if fail else 0, users=users, orders=orders,
                                         api_key=api_key, progress=seen)
    ended = time.perf_counter()
    failed = re.findall(r"job (\w+) failed:", stderr)  # the pipeline's own report, amid Spark's logs
    if code not in (0, 1) or (code == 1 and not failed):
        raise ConfigError(f"the Spark pipeline failed (exit {code}):\n{stderr.strip()[-2000:]}")
    last = log.last_seq()
    queryable = None
    while time.perf_counter() - ended < wait:
        if log.position(CONSUMER) >= last:
            queryable = time.perf_counter() - ended
            break
        time.sleep(0.1)
    per_job = Counter(str(e.event.get("job", {}).get("name")) for e in log.read(before, last - before))
    return DemoRun(code, seconds, last - before, dict(per_job), queryable, warehouse, failed)

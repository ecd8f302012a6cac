"""``lineage demo``: run the example PySpark pipeline with the OpenLineage listener pointed at the
running lineage-graph, wait until its lineage is queryable, and say what to try. ``--stack``
(``run_stack``): the same pipeline scheduled by Airflow, with dbt models on top and the aliases that
stitch their names (api/local/producers.py runs the tools)."""

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

from api.local.producers import DAG_ID, AirflowRun, dbt_namespace, run_airflow
from graph.errors import ConfigError
from graph.settings import Settings
from ingest.log.kafka import KafkaAddress, group_lag
from ingest.log.kafka_broker import LocalBroker
from ingest.log.sqlite import open_log
from ingest.spark.env import (
    listener_jar,
    openlineage_conf,
    openlineage_kafka_conf,
    properties_text,
    spark_submit,
)
from ingest.worker import CONSUMER

PIPELINE = Path(__file__).resolve().parents[2] / "examples" / "spark_shop" / "pipeline.py"
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
    if settings.log == "sqlite":
        conf = openlineage_conf(url, NAMESPACE, api_key, listener_jar(settings))
    else:  # the listener sends to the Kafka log's topic itself (docs/kafka.md)
        address = KafkaAddress.parse(settings.log, settings.kafka_port)
        jars = [listener_jar(settings), *LocalBroker(settings).client_jars()]
        conf = openlineage_kafka_conf(address.bootstrap, address.topic, NAMESPACE, jars)
    conf |= {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4",
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
    if settings.log != "sqlite":
        return _demo_on_kafka(settings, url, fail, users, orders, api_key, wait)
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


def _demo_on_kafka(settings: Settings, url: str, fail: bool, users: int, orders: int,
                   api_key: str | None, wait: float) -> DemoRun:
    """The demo with the listener's Kafka transport: events go to the topic, not through the API;
    queryable once the consumer group has committed everything."""
    warehouse = settings.state_dir / "demo" / "warehouse"
    code, seconds, stderr = run_pipeline(settings, url, warehouse, nights=2 if fail else 1,
                                         fail_on_night=2 if fail else 0, users=users, orders=orders,
                                         api_key=api_key)
    ended = time.perf_counter()
    failed = re.findall(r"job (\w+) failed:", stderr)
    if code not in (0, 1) or (code == 1 and not failed):
        raise ConfigError(f"the Spark pipeline failed (exit {code}):\n{stderr.strip()[-2000:]}")
    address = KafkaAddress.parse(settings.log, settings.kafka_port)
    queryable = None
    while time.perf_counter() - ended < wait:
        if group_lag(address) == 0:
            queryable = time.perf_counter() - ended
            break
        time.sleep(0.2)
    return DemoRun(code, seconds, 0, {}, queryable, warehouse, failed)


@dataclass
class StackRun:
    """What ``run_stack`` did: the DAG runs (the second failing when asked), where the data is,
    and the aliases that stitch Spark's file names to dbt's DuckDB names."""

    runs: list[AirflowRun]
    warehouse: Path
    namespace: str  # the DuckDB datasets' namespace
    aliases: list[tuple[str, str, str, str]]


def stack_aliases(warehouse: Path, database: Path) -> list[tuple[str, str, str, str]]:
    """Spark's file names = the DuckDB views dbt reads them through (examples/dbt_shop's
    macros/register_raw.sql): what neither producer can be told (docs/producers.md)."""
    duck = dbt_namespace(database)
    return [("file", f"{warehouse}/raw/users", duck, "shop.raw.users"),
            ("file", f"{warehouse}/raw/orders", duck, "shop.raw.orders"),
            ("file", f"{warehouse}/marts/revenue_by_country", duck, "shop.spark.revenue_by_country")]


def post_events(url: str, events: list[dict[str, object]], api_key: str | None = None) -> None:
    """POST events to our OpenLineage endpoint (as one JSON array)."""
    import json
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json"} | (
        {"Authorization": f"Bearer {api_key}"} if api_key else {})
    request = urllib.request.Request(f"{url.rstrip('/')}/api/v1/lineage", method="POST",
                                     data=json.dumps(events).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
    except urllib.error.HTTPError as e:
        raise ConfigError(f"{url} refused the events ({e.code}): {e.read()[:500]!r}") from e
    except OSError as e:
        raise ConfigError(f"could not post events to {url}: {e}") from e


def run_stack(settings: Settings, url: str, workdir: Path, *, fail: bool = False,
              api_key: str | None = None, say: Callable[[str], None] = lambda line: None) -> StackRun:
    """The whole example: the aliases that stitch the names, then the Airflow DAG (Spark's jobs,
    the dbt build over Spark's files, the overview task) once, and with ``fail`` a second night in
    which Spark's revenue job fails (so the DAG run fails and dbt and the overview do not run)."""
    from ingest.aliases import alias_event

    warehouse = workdir / "warehouse"
    database = workdir / "shop.duckdb"
    aliases = stack_aliases(warehouse, database)
    post_events(url, [alias_event(*a) for a in aliases], api_key)
    say(f"declared {len(aliases)} aliases (Spark's files = dbt's DuckDB views)")
    runs = []
    for night in (1, 2) if fail else (1,):
        failing = night == 2
        say(f"night {night}: airflow dags test {DAG_ID}" + (" (Spark's revenue job fails)" if failing
                                                            else ""))
        run = run_airflow(settings, url, warehouse, workdir, fail_revenue=failing,
                          api_key=api_key, say=say)
        if run.returncode != 0 and not failing:
            raise ConfigError(f"the DAG run failed (exit {run.returncode}):\n{run.output.strip()[-3000:]}")
        say(f"night {night}: the DAG run took {run.seconds:.0f} s"
            + (", and failed as asked" if run.returncode else ""))
        runs.append(run)
    return StackRun(runs, warehouse, dbt_namespace(database), aliases)

"""``lineage ingest --engine spark``: big loads with PySpark.

Reads NDJSON, JSON arrays or single events (any Hadoop file system URI: a local folder,
``hdfs://``, ``s3a://`` with the right jars) or the Parquet that ``lineage export`` writes. The same
pure validation and transform run inside Spark partitions, and each partition writes with its own
Neo4j driver in large batches. Writes are idempotent MERGEs, so partitions may run in any order
(and a retried task re-applies its events harmlessly); concurrent partitions that collide on a
node are retried by the driver. When every partition is done, the coarse dataset edges of every
touched job are recomputed once, since a job's runs may have been split across partitions.

On a cluster: ship this package to the executors (``pip install`` it there, or
``spark-submit --py-files``), give them network access to Neo4j, and set ``NEO4J_URI``. To read
from Kafka instead of files, read the topic with Structured Streaming
(``spark.readStream.format("kafka")``), take ``value`` as the event text, and call
:func:`load_partition` from ``foreachBatch``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from graph.settings import Settings

TEXT_SUFFIXES = (".ndjson", ".jsonl")


@dataclass
class SparkReport:
    read: int = 0
    loaded: int = 0
    duplicates: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (where, reasons)
    partitions: int = 0
    jobs: set[tuple[str, str]] = field(default_factory=set)


def connection(settings: Settings) -> dict[str, Any]:
    """What an executor needs to open its own driver (resolved on the Spark driver)."""
    from graph.local_server import LocalServer

    if settings.uses_local_server:
        server = LocalServer(settings)
        uri, password = server.bolt_uri, server.password()
    else:
        uri, password = str(settings.neo4j_uri), settings.neo4j_password or ""
    return {"uri": uri, "user": settings.neo4j_user, "password": password,
            "batch": settings.batch_size, "facet_max_bytes": settings.facet_max_bytes,
            "timeout": settings.query_timeout}


def load_partition(items: Iterable[tuple[str, str]], conn: dict[str, Any]) -> Iterator[str]:
    """Load (where, text) pairs of one partition; yields one JSON summary for the driver."""
    from neo4j import GraphDatabase, NotificationMinimumSeverity

    from graph.db import Graph
    from ingest.pipeline import Ingester, IngestReport, relax_gc
    from ingest.read import RawItem, read_payload

    relax_gc()

    def raw_items() -> Iterator[RawItem]:
        for where, text in items:
            yield from read_payload(text, where)

    driver = GraphDatabase.driver(conn["uri"], auth=(conn["user"], conn["password"]),
                                  notifications_min_severity=NotificationMinimumSeverity.OFF)
    graph = Graph(driver, timeout=conn["timeout"])
    try:
        report = Ingester(graph, conn["batch"], conn["facet_max_bytes"]).ingest(raw_items(), IngestReport())
    finally:
        driver.close()
    yield json.dumps({"read": report.read, "loaded": report.loaded, "duplicates": report.duplicates,
                      "rejected": [[r.where, "; ".join(r.reasons)] for r in report.rejected[:1000]],
                      "jobs": sorted(report.jobs)})


def _texts(spark: Any, path: str) -> Any:
    """An RDD of (where, text): Parquet rows from `lineage export`, NDJSON lines, or whole files."""
    lowered = path.lower().rstrip("/")
    if lowered.endswith(".parquet") or _is_parquet_dir(spark, path):
        df = spark.read.parquet(path)
        return df.select("seq", "event").rdd.map(lambda r: (f"{path}#seq={r[0]}", r[1]))
    if lowered.endswith(TEXT_SUFFIXES):
        lines = spark.read.text(path).rdd.zipWithIndex()
        return lines.filter(lambda x: x[0][0].strip()).map(lambda x: (f"{path}:{x[1] + 1}", x[0][0]))
    return spark.sparkContext.wholeTextFiles(path)


def _is_parquet_dir(spark: Any, path: str) -> bool:
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    if not fs.exists(hadoop_path) or not fs.getFileStatus(hadoop_path).isDirectory():
        return False
    files = fs.listFiles(hadoop_path, True)
    while files.hasNext():
        name = files.next().getPath().getName()
        if name.endswith(".parquet"):
            return True
        if name.endswith((".json", ".ndjson", ".jsonl")):
            return False
    return False


def spark_ingest(settings: Settings, paths: list[str], master: str = "local[*]",
                 partitions: int | None = None, conf: dict[str, str] | None = None) -> SparkReport:
    """Load every path with Spark; returns the combined report."""
    from pyspark.sql import SparkSession

    from graph.db import open_graph
    from graph.schema import apply_schema

    conn = connection(settings)
    builder = (SparkSession.builder.master(master).appName("lineage-graph-ingest")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "8"))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    report = SparkReport()
    try:
        rdd = None
        for path in paths:
            part = _texts(spark, path)
            rdd = part if rdd is None else rdd.union(part)
        if rdd is None:
            return report
        if partitions:
            rdd = rdd.repartition(partitions)
        report.partitions = rdd.getNumPartitions()
        for summary in rdd.mapPartitions(lambda it: load_partition(it, conn)).collect():
            s = json.loads(summary)
            report.read += s["read"]
            report.loaded += s["loaded"]
            report.duplicates += s["duplicates"]
            report.rejected += [(w, r) for w, r in s["rejected"]]
            report.jobs |= {(ns, name) for ns, name in s["jobs"]}
    finally:
        spark.stop()
    graph = open_graph(settings)
    try:
        apply_schema(graph)
        jobs = [{"namespace": ns, "name": name} for ns, name in sorted(report.jobs)]
        for i in range(0, len(jobs), 1000):
            graph.write([("ingest/coarse_edges", {"jobs": jobs[i:i + 1000]})])
    finally:
        graph.close()
    return report

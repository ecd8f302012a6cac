"""Spark with the OpenLineage listener: the jar, and the configuration that points it at us.

The listener (``io.openlineage:openlineage-spark_<scala>``) is resolved from Maven Central once, by
Maven, into ``<state>/spark/jars`` (and ``~/.m2``), and loaded with ``spark.jars`` from that local
path, so nothing is downloaded when a Spark job runs. Use :func:`openlineage_conf` (or
``lineage spark-conf``, which writes a ``spark-submit --properties-file``) for your own jobs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from graph.errors import ConfigError
from graph.file_lock import held
from graph.settings import Settings

OPENLINEAGE_SPARK = "1.53.0"
"""The newest listener release for Scala 2.13 on Maven Central when this was written; verified end to
end with PySpark 4.3 on Java 17 (column lineage, masking, parent runs, failures)."""


def scala_binary() -> str:
    """The Scala binary version of the installed PySpark (2.13 for Spark 4, 2.12 for most 3.x)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in jars.glob("scala-library-*.jar"):
        m = re.match(r"scala-library-(\d+\.\d+)\.", jar.name)
        if m:
            return m.group(1)
    raise ConfigError(f"cannot tell PySpark's Scala version: no scala-library jar in {jars}")


def listener_jar(settings: Settings, version: str = OPENLINEAGE_SPARK) -> Path:
    """The listener jar on local disk, resolving it with Maven the first time."""
    scala = scala_binary()
    target = settings.state_dir / "spark" / "jars"
    jar = target / f"openlineage-spark_{scala}-{version}.jar"
    if jar.is_file():
        return jar
    with held(target.parent / ".fetching"):
        if not jar.is_file():  # else another process fetched it while this one waited
            _fetch_listener(target, scala, version)
    return jar


def _fetch_listener(target: Path, scala: str, version: str) -> None:
    jar = target / f"openlineage-spark_{scala}-{version}.jar"
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ConfigError("Maven (mvn) is needed once to fetch the OpenLineage Spark listener")
    pom = resources.files("ingest.spark").joinpath("pom.xml")
    with resources.as_file(pom) as pom_path:
        result = subprocess.run(
            [mvn, "-B", "-q", "-f", str(pom_path), "dependency:copy-dependencies",
             f"-Dscala.binary={scala}", f"-Dopenlineage.version={version}",
             f"-DoutputDirectory={target}"], capture_output=True, text=True, timeout=600)
    if result.returncode != 0 or not jar.is_file():
        raise ConfigError(f"Maven could not fetch openlineage-spark_{scala} {version}: "
                          f"{(result.stdout + result.stderr).strip()[-800:]}")


def openlineage_conf(url: str, namespace: str = "spark", api_key: str | None = None,
                     jar: Path | None = None) -> dict[str, str]:
    """Spark settings that make any job report its lineage to lineage-graph at ``url``.

    ``namespace`` names the jobs' namespace; ``api_key`` is a write-scoped token when the server
    has ``LINEAGE_API_TOKENS``. Column lineage is on by default in the listener.
    """
    conf = {
        "spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener",
        "spark.openlineage.transport.type": "http",
        "spark.openlineage.transport.url": url.rstrip("/"),
        "spark.openlineage.transport.endpoint": "/api/v1/lineage",
        "spark.openlineage.namespace": namespace,
    }
    if jar is not None:
        conf["spark.jars"] = str(jar)
    if api_key:
        conf["spark.openlineage.transport.auth.type"] = "api_key"
        conf["spark.openlineage.transport.auth.apiKey"] = api_key
    return conf


def openlineage_kafka_conf(bootstrap: str, topic: str, namespace: str = "spark",
                           jars: list[Path] | None = None) -> dict[str, str]:
    """Spark settings that make the listener send its events to a Kafka topic (the Kafka event
    log: docs/kafka.md) with OpenLineage's Kafka transport. ``jars``: the listener's jar and
    ``kafka-clients`` with its compression libraries (the listener does not bundle them; the
    local broker's ``lib`` folder has them)."""
    serializer = "org.apache.kafka.common.serialization.StringSerializer"
    conf = {
        "spark.extraListeners": "io.openlineage.spark.agent.OpenLineageSparkListener",
        "spark.openlineage.transport.type": "kafka",
        "spark.openlineage.transport.topicName": topic,
        "spark.openlineage.transport.properties.bootstrap.servers": bootstrap,
        "spark.openlineage.transport.properties.acks": "all",
        "spark.openlineage.transport.properties.key.serializer": serializer,
        "spark.openlineage.transport.properties.value.serializer": serializer,
        "spark.openlineage.namespace": namespace,
    }
    if jars:
        conf["spark.jars"] = ",".join(str(j) for j in jars)
    return conf


def properties_text(conf: dict[str, str]) -> str:
    """``conf`` as a ``spark-submit --properties-file`` file."""
    return "".join(f"{k} {v}\n" for k, v in sorted(conf.items()))


def spark_submit() -> Path:
    """The ``spark-submit`` that comes with the installed PySpark."""
    import pyspark

    path = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    if not path.exists():
        raise ConfigError(f"no spark-submit in {path.parent}: is PySpark installed in full?")
    return path

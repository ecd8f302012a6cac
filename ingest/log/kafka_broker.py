"""A local Apache Kafka broker, for the tests, the demo and first use of the Kafka event log: the way
the local Neo4j is, assembled from Maven Central by Maven (``ingest/kafka/pom.xml``: Kafka 4.1,
KRaft, no ZooKeeper) and run from those jars on loopback, one process that is both broker and
controller. A team with its own cluster names it (``LINEAGE_LOG=kafka://HOST:PORT/TOPIC``) and
nothing is started.

Layout under the state directory::

    kafka/lib/          the broker's jars (copied from ~/.m2)
    kafka/conf/         server.properties and log4j2.properties, written on every start
    kafka/data/         the topics (formatted once, with a cluster id of its own)
    kafka/logs/         server.log
    kafka/broker.pid
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from base64 import urlsafe_b64encode
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from graph.errors import ConfigError, ServerError
from graph.file_lock import held
from graph.local_server import java_binary
from graph.local_service import ServiceStatus, status_from_pid, stop_pid, tail
from graph.private import PRIVATE_UMASK, private_dir
from graph.settings import Settings

HOST = "127.0.0.1"
KAFKA_VERSION = "4.1.1"

_SERVER = """# written by lineage-graph (ingest/log/kafka_broker.py) on every start
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@{host}:{controller}
listeners=PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller}
advertised.listeners=PLAINTEXT://{host}:{port}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs={data}
num.partitions={partitions}
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
# a lineage event may be large (the API takes bodies up to 8 MiB)
message.max.bytes=10485760
replica.fetch.max.bytes=10485760
"""

_LOG4J = """# written by lineage-graph (ingest/log/kafka_broker.py)
appender.file.type = File
appender.file.name = file
appender.file.fileName = {logs}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = WARN
logger.apache.name = org.apache.kafka
logger.apache.level = WARN
"""


def answers(host: str, port: int, timeout: float = 1.0) -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class LocalBroker:
    """The broker lineage-graph provisions and runs under ``<state>/kafka`` (a
    graph.local_service.LocalService)."""

    name = "kafka"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.state_dir / "kafka"
        self.port = settings.kafka_port
        self.controller_port = settings.kafka_controller_port

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def pid_file(self) -> Path:
        return self.home / "broker.pid"

    def status(self) -> ServiceStatus:
        return status_from_pid(self.name, self.pid_file, lambda: answers(HOST, self.port),
                               self.bootstrap, self.home / "logs" / "server.log")

    def _assemble(self, say: Callable[[str], None] = lambda line: None) -> None:
        marker = self.home / "lib" / ".assembled"

        def done() -> bool:
            return marker.is_file() and marker.read_text("utf-8") == KAFKA_VERSION

        if done():
            return
        with held(self.home / ".assembling"):
            if not done():  # else another process assembled it while this one waited
                self._assemble_now(marker, say)

    def _assemble_now(self, marker: Path, say: Callable[[str], None]) -> None:
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ConfigError("Maven (`mvn`) is not on PATH; it assembles Kafka from Maven Central")
        lib = self.home / "lib"
        if lib.exists():
            shutil.rmtree(lib)
        lib.mkdir(parents=True)
        say(f"assembling Kafka {KAFKA_VERSION} with Maven (once)")
        pom = resources.files("ingest") / "kafka" / "pom.xml"
        with resources.as_file(pom) as pom_path:
            done = subprocess.run([mvn, "-q", "-B", "-f", str(pom_path),
                                   f"-Dkafka.version={KAFKA_VERSION}",
                                   "dependency:copy-dependencies", f"-DoutputDirectory={lib}"],
                                  capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ServerError(f"Maven could not assemble Kafka (exit {done.returncode}):\n"
                              f"{(done.stdout + done.stderr)[-3000:]}")
        marker.write_text(KAFKA_VERSION, encoding="utf-8")

    def client_jars(self, say: Callable[[str], None] = lambda line: None) -> list[Path]:
        """``kafka-clients`` and the compression libraries it loads, from the broker's jars
        (assembled on first use): what the Spark listener's Kafka transport needs beside it."""
        self._assemble(say)
        wanted = ("kafka-clients-", "lz4-java-", "snappy-java-", "zstd-jni-")
        return sorted(p for p in (self.home / "lib").iterdir() if p.name.startswith(wanted))

    def _java(self, main: str, *args: str, background: bool = False) -> subprocess.Popen[bytes]:
        cmd = [java_binary("Kafka"), f"-Xmx{self.settings.kafka_heap}", f"-Xms{self.settings.kafka_heap}",
               f"-Dlog4j2.configurationFile={self.home / 'conf' / 'log4j2.properties'}",
               "-cp", f"{self.home / 'lib'}/*", main, *args]
        out = (self.home / "logs" / "stdout.log").open("ab")
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=background, umask=PRIVATE_UMASK)

    def _configure(self) -> Path:
        for sub in ("conf", "data", "logs"):
            private_dir(self.home / sub)
        conf = self.home / "conf" / "server.properties"
        conf.write_text(_SERVER.format(host=HOST, port=self.port, controller=self.controller_port,
                                       data=self.home / "data",
                                       partitions=self.settings.kafka_partitions), encoding="utf-8")
        (self.home / "conf" / "log4j2.properties").write_text(
            _LOG4J.format(logs=self.home / "logs"), encoding="utf-8")
        if not (self.home / "data" / "meta.properties").is_file():
            cluster = urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            # "=": an id may begin with "-", which would read as an option
            code = self._java("kafka.tools.StorageTool", "format", f"--cluster-id={cluster}",
                              "-c", str(conf)).wait(timeout=120)
            if code != 0:
                raise ServerError(f"formatting Kafka's storage failed (exit {code}); see "
                                  f"{self.home / 'logs' / 'stdout.log'}")
        return conf

    def start(self, say: Callable[[str], None] = lambda line: None) -> bool:
        """Start the broker and wait until it answers (assembled first on first use); False when
        it was running already."""
        current = self.status()
        if current.state == "running":
            return False
        if current.state != "starting":
            if answers(HOST, self.port):
                raise ServerError(f"something else already answers on {self.bootstrap}; stop it or "
                                  "set LINEAGE_KAFKA_PORT and LINEAGE_KAFKA_CONTROLLER_PORT")
            private_dir(self.home)
            self._assemble(say)
            conf = self._configure()
            say(f"starting Kafka on {self.bootstrap}")
            proc = self._java("kafka.Kafka", str(conf), background=True)
            self.pid_file.write_text(str(proc.pid), encoding="utf-8")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            state = self.status().state
            if state == "running":
                return current.state != "starting"
            if state in ("crashed", "stopped"):
                break
            time.sleep(0.3)
        raise ServerError(f"Kafka did not start on {self.bootstrap}:\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the broker cleanly (SIGTERM: it flushes and closes its logs); False if it was not
        running."""
        return stop_pid(self.pid_file, timeout)

    def log_tail(self, lines: int = 30) -> str:
        return tail([self.home / "logs" / n for n in ("server.log", "stdout.log")], lines)

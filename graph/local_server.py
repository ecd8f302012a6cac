"""The local Neo4j Community server that lineage-graph provisions and runs for the user.

The server is assembled from Maven Central: Maven resolves ``org.neo4j:neo4j`` (runtime scope, so
the record storage engine comes along) and Neo4j Browser into ``~/.m2`` and copies the jars into
``<state>/neo4j/lib``. The launcher class ``Neo4jCommand`` from those jars starts, stops and checks
the server, exactly as the ``neo4j`` script of a packaged distribution does.

Layout under the state directory::

    neo4j/lib/        server and Browser jars (copied from ~/.m2)
    neo4j/conf/       neo4j.conf written from the settings on every start
    neo4j/data/       the database
    neo4j/logs/       neo4j.log, debug.log, query.log
    neo4j/run/        neo4j.pid while the server runs
    neo4j/password    the generated password of user neo4j (mode 0600)
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

from graph.errors import ConfigError, ServerError
from graph.file_lock import held
from graph.local_service import ServiceStatus, status_from_pid, tail
from graph.private import PRIVATE_UMASK, private_dir, private_file
from graph.probes import bolt_ok, http_ok, process_alive, read_pid
from graph.settings import Settings

log = logging.getLogger(__name__)

_LAUNCHER = "org.neo4j.server.startup.Neo4jCommand"
_ADMIN = "org.neo4j.server.startup.Neo4jAdminCommand"
_USER = "neo4j"


@dataclass(frozen=True)
class ServerStatus(ServiceStatus):
    """A Neo4j's status, as ``lineage neo4j status`` reports it: where to connect and as whom."""

    bolt_uri: str
    browser_url: str
    user: str
    password_file: str | None
    home: str | None
    version: str | None

    def to_json(self) -> str:
        return json.dumps(asdict(self) | {"log": str(self.log) if self.log else None}, indent=2)


class LocalServer:
    """Provision, start, stop and inspect the Neo4j server under ``settings.neo4j_home`` (a
    graph.local_service.LocalService)."""

    name = "neo4j"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.neo4j_home

    # -- locations -------------------------------------------------------------------------------
    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.neo4j_bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.settings.neo4j_http_port}"

    @property
    def password_file(self) -> Path:
        return self.home / "password"

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "neo4j.pid"

    @property
    def _marker(self) -> Path:
        return self.home / "lib" / f".assembled-{self.settings.neo4j_version}"

    def password(self) -> str:
        """The generated password; raises if the server was never provisioned."""
        try:
            return self.password_file.read_text(encoding="utf-8").strip()
        except FileNotFoundError as e:
            raise ServerError(
                f"no password at {self.password_file}: run `lineage neo4j start` first"
            ) from e

    # -- provisioning ----------------------------------------------------------------------------
    def provision(self, say: Callable[[str], None] = lambda line: None) -> bool:
        """Assemble jars, write the config and set the password; True if anything was done.
        ``say`` hears how the assembly goes (a first start downloads Neo4j's jars: minutes)."""
        did = self._assemble(say)
        self._write_conf()
        if not (self.home / "data" / "dbms" / "auth.ini").exists():
            say("setting the initial password")
        did = self._set_initial_password() or did
        return did

    def _assemble(self, say: Callable[[str], None] = lambda line: None) -> bool:
        if self._marker.exists():
            return False
        with held(self.home / ".assembling"):
            if self._marker.exists():  # another process assembled it while this one waited
                return False
            self._assemble_now(say)
            return True

    def _assemble_now(self, say: Callable[[str], None]) -> None:
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ConfigError("Maven (`mvn`) is not on PATH; it assembles Neo4j from Maven Central")
        lib = self.home / "lib"
        started = _repository_mb()
        if lib.exists():
            shutil.rmtree(lib)
        lib.mkdir(parents=True)
        pom = resources.files("graph") / "maven" / "pom.xml"
        with resources.as_file(pom) as pom_path:
            cmd = [
                mvn, "-q", "-B", "-f", str(pom_path),
                f"-Dneo4j.version={self.settings.neo4j_version}",
                "dependency:copy-dependencies", f"-DoutputDirectory={lib}",
            ]  # fmt: skip
            log.info("assembling Neo4j %s with Maven into %s", self.settings.neo4j_version, lib)
            done = _watched(cmd, lambda seconds: say(
                f"assembling Neo4j {self.settings.neo4j_version} with Maven (once): "
                f"{_downloaded_mb(started):.0f} MB downloaded, {seconds:.0f} s"))
        if done.returncode != 0:
            tail = (done.stdout + done.stderr)[-3000:]
            raise ServerError(f"Maven could not assemble Neo4j (exit {done.returncode}):\n{tail}")
        self._marker.write_text(self.settings.neo4j_version, encoding="utf-8")

    def _write_conf(self) -> None:
        private_dir(self.settings.state_dir, tighten=True)
        private_dir(self.home, tighten=True)
        for sub in ("conf", "data", "logs", "run", "plugins", "import"):
            private_dir(self.home / sub, tighten=True)
        template = (resources.files("graph") / "conf" / "neo4j.conf.template").read_text("utf-8")
        text = template.format(
            home=self.home,
            bolt_port=self.settings.neo4j_bolt_port,
            http_port=self.settings.neo4j_http_port,
            heap=self.settings.neo4j_heap,
            pagecache=self.settings.neo4j_pagecache,
            tx_memory=self.settings.neo4j_tx_memory,
            tx_log_retention=self.settings.neo4j_tx_log_retention,
            replan_interval=self.settings.neo4j_replan_interval,
        )
        (self.home / "conf" / "neo4j.conf").write_text(text, encoding="utf-8")

    def _set_initial_password(self) -> bool:
        if (self.home / "data" / "dbms" / "auth.ini").exists():
            return False
        password = new_password()
        private_file(self.password_file).write_text(password + "\n", encoding="utf-8")
        # The password never goes on a command line (where /proc/PID/cmdline shows it to every
        # local user): neo4j-admin (picocli) reads its arguments from an @file, 0600 like the rest.
        with tempfile.TemporaryDirectory(dir=self.home) as tmp:
            args = private_file(Path(tmp) / "args")
            args.write_text(f"dbms\nset-initial-password\n{password}\n", encoding="utf-8")
            done = self._java(_ADMIN, f"@{args}")
        if done.returncode != 0:
            raise ServerError(f"setting the initial password failed:\n{done.stdout}{done.stderr}")
        return True

    def _java(self, main: str, *args: str, timeout: float = 120.0,
              nice: int = 0, detached: bool = False) -> subprocess.CompletedProcess[str]:
        """Run a Neo4j entry point at nice value ``nice``, or this process's own if higher;
        ``detached``: in a session of its own, so that what it starts in the background (the
        server) is no part of the terminal's session and outlives its closing (a hang-up)."""
        java = java_binary()
        env = dict(os.environ, NEO4J_HOME=str(self.home), NEO4J_CONF=str(self.home / "conf"))
        cmd = [java, "-cp", f"{self.home / 'lib'}/*", f"-Dbasedir={self.home}", main, *args]
        lower = max(0, nice - os.nice(0)) if hasattr(os, "nice") else 0
        nice_tool = shutil.which("nice") if lower else None
        if nice_tool:  # not preexec_fn: unsafe in a process with threads
            cmd = [nice_tool, "-n", str(lower), *cmd]
        # umask 077: the store, auth.ini and the logs Neo4j writes are private to this user
        return subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False,
            umask=PRIVATE_UMASK, start_new_session=detached, stdin=subprocess.DEVNULL,
        )

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self, say: Callable[[str], None] = lambda line: None) -> bool:
        """Start the server and wait until it answers; False when it was running already. ``say``
        hears each step as it goes (assembling, starting, waiting for it to answer)."""
        current = self.status()
        if current.state == "running":
            return False
        if current.state == "starting":
            # our own server, alive but slow to answer (starting, or too busy to answer the last
            # check within its timeout): wait for it rather than start a second one
            self._wait_until_answering(say)
            return False
        if current.state == "crashed":
            self.pid_file.unlink(missing_ok=True)
        if http_ok(self.http_url):
            raise ServerError(
                f"something else already answers on {self.http_url}; stop it or set "
                "LINEAGE_NEO4J_HTTP_PORT and LINEAGE_NEO4J_BOLT_PORT to free ports"
            )
        self.provision(say)
        say("starting Neo4j")
        # the server's JVM, started by the launcher, inherits the launcher's priority
        done = self._java(_LAUNCHER, "start", nice=self.settings.neo4j_nice, detached=True)
        if done.returncode != 0:
            raise ServerError(f"Neo4j did not start (exit {done.returncode}):\n"
                              f"{done.stdout}{done.stderr}\n{self.log_tail()}")
        self._wait_until_answering(say)
        return True

    def stop(self) -> bool:
        """Stop the server cleanly; False if it was not running."""
        if self.status().state != "running":
            self.pid_file.unlink(missing_ok=True)
            return False
        done = self._java(_LAUNCHER, "stop")
        if done.returncode != 0:
            raise ServerError(f"Neo4j did not stop cleanly:\n{done.stdout}{done.stderr}")
        return True

    @property
    def browser_url(self) -> str:
        """Neo4j Browser with the connection form filled in (our Bolt address, user, database):
        only the password is left to paste (``lineage neo4j password``)."""
        return (f"{self.http_url}/browser/?dbms=neo4j://{_USER}@127.0.0.1:"
                f"{self.settings.neo4j_bolt_port}&db=neo4j&preselectAuthMethod=NATIVE")

    def status(self) -> ServerStatus:
        """Running (process alive and answering), starting, stopped, or crashed (stale pid file)."""
        found = status_from_pid(self.name, self.pid_file, lambda: http_ok(self.http_url),
                                self.http_url, self.home / "logs" / "neo4j.log")
        return ServerStatus(**vars(found), bolt_uri=self.bolt_uri, browser_url=self.browser_url,
                            user=_USER, password_file=str(self.password_file), home=str(self.home),
                            version=self.settings.neo4j_version)

    def _wait_until_answering(self, say: Callable[[str], None] = lambda line: None) -> None:
        started = time.monotonic()
        deadline = started + self.settings.neo4j_start_timeout
        while time.monotonic() < deadline:
            say(f"waiting for Neo4j to answer ({time.monotonic() - started:.0f} s; it takes "
                "10-30 s, more on a first start)")
            if http_ok(self.http_url) and bolt_ok(self.bolt_uri, self.password()):
                return
            pid = read_pid(self.pid_file)
            if pid is not None and not process_alive(pid):
                raise ServerError(f"Neo4j exited while starting:\n{self.log_tail()}")
            time.sleep(0.5)
        raise ServerError(
            f"Neo4j did not answer within {self.settings.neo4j_start_timeout:.0f}s:\n"
            f"{self.log_tail()}"
        )

    def log_tail(self, lines: int = 30) -> str:
        return tail([self.home / "logs" / "neo4j.log"], lines)


def external_status(settings: Settings) -> ServerStatus:
    """Status of a server the user points at with NEO4J_URI (we neither start nor stop it)."""
    assert settings.neo4j_uri is not None
    ok = bolt_ok(settings.neo4j_uri, settings.neo4j_password or "", user=settings.neo4j_user)
    return ServerStatus(
        name="neo4j",
        state="external" if ok else "unreachable",
        address=settings.neo4j_uri,
        log=None,
        bolt_uri=settings.neo4j_uri,
        browser_url="(the server's own Browser)",
        user=settings.neo4j_user,
        password_file=None,
        home=None,
        pid=None,
        version=None,
        detail="configured by NEO4J_URI / LINEAGE_NEO4J_URI",
    )


def java_binary(needed_by: str = "Neo4j 5.26") -> str:
    """JAVA_HOME's java, else the one on PATH (``needed_by`` names what needs it in the error)."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise ConfigError(f"Java 17 is needed to run {needed_by}: no `java` on PATH and no JAVA_HOME")
    return java


def new_password() -> str:
    """A random password for the local server.

    token_urlsafe may start with '-', which neo4j-admin reads as an option (about 1 first start in
    64 failed with the command's usage text); a letter first keeps it a positional argument.
    """
    return "p" + secrets.token_urlsafe(18)


def _watched(cmd: list[str], tick: Callable[[float], None],
             every: float = 2.0) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` to the end, calling ``tick`` with the seconds elapsed every ``every`` s."""
    started = time.monotonic()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        while True:
            try:
                stdout, stderr = proc.communicate(timeout=every)
                break
            except subprocess.TimeoutExpired:
                tick(time.monotonic() - started)
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


def _repository_mb() -> float:
    """MiB in Maven's local repository (~/.m2/repository): what the assembly downloads."""
    root = Path.home() / ".m2" / "repository"
    total = 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            with contextlib.suppress(OSError):
                total += (Path(dirpath) / name).stat().st_size
    return total / 2**20


def _downloaded_mb(before: float) -> float:
    return max(0.0, _repository_mb() - before)

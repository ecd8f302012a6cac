"""Real producers other than Spark, run the way their users run them: dbt through ``dbt-ol``
(openlineage-dbt) and Airflow through ``airflow dags test`` with its OpenLineage provider.

Each tool lives in its own virtual environment under the state directory (``tools/dbt``,
``tools/airflow``), made on first use from PyPI with the versions below, the way the local Neo4j is
assembled from Maven Central on first use: their pins (dbt-core wants an older ``pathspec`` than
mypy, Airflow its own FastAPI) never meet the project's. ``LINEAGE_DBT_BIN`` / ``LINEAGE_AIRFLOW_BIN``
point at an existing environment's ``bin`` directory instead (a team's own dbt install).

The same versions are the ``dbt`` and ``airflow`` extras of pyproject.toml, for a project that wants
the tools in its own environment.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import socket
import sqlite3
import subprocess
import sys
import time
import venv
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from graph.errors import ConfigError
from graph.file_lock import held
from graph.settings import Settings
from ingest.spark.env import listener_jar, openlineage_conf, properties_text, spark_submit

ROOT = Path(__file__).resolve().parents[2]
DBT_PROJECT = ROOT / "examples" / "dbt_shop"
SPARK_PIPELINE = ROOT / "examples" / "spark_shop" / "pipeline.py"

# Verified together in this project's tests (docs/producers.md). dbt-core 1.12 needs a parser wheel
# fetched from GitHub at install time, which not every machine can reach: 1.11 does not.
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "dbt": ("dbt-core>=1.10,<1.12", "dbt-duckdb>=1.10,<1.12", "openlineage-dbt>=1.54,<2"),
    "airflow": ("apache-airflow>=3.1,<3.4", "apache-airflow-providers-openlineage>=2.7,<3",
                "duckdb>=1.1"),
    # the tracking server and what examples/ml_shop trains with (api/local/mlflow_server.py)
    "mlflow": ("mlflow>=3.1,<4", "scikit-learn>=1.4", "pandas>=2", "pyarrow>=15"),
}
EXECUTABLE = {"dbt": "dbt-ol", "airflow": "airflow", "mlflow": "mlflow"}
AIRFLOW_DAGS = ROOT / "examples" / "airflow_shop" / "dags"
DAG_ID = "shop_pipeline"


def tool_bin(settings: Settings, tool: str, say: Callable[[str], None] = lambda line: None) -> Path:
    """The ``bin`` directory holding ``tool``'s executables, making its environment on first use
    (``say`` hears what is being done: installing takes a minute or two)."""
    given = os.environ.get(f"LINEAGE_{tool.upper()}_BIN")
    if given:
        path = Path(given)
        if not (path / EXECUTABLE[tool]).exists():
            raise ConfigError(f"LINEAGE_{tool.upper()}_BIN={given} has no {EXECUTABLE[tool]}")
        return path
    home = settings.state_dir / "tools" / tool
    bin_dir = home / "bin"
    wanted = "\n".join(REQUIREMENTS[tool])
    stamp = home / "requirements.txt"

    def installed() -> bool:
        return (bin_dir / EXECUTABLE[tool]).exists() and stamp.is_file() \
            and stamp.read_text("utf-8") == wanted

    if installed():
        return bin_dir
    with held(home.parent / f".{tool}.installing"):
        if not installed():  # else another process installed it while this one waited
            _install(tool, home, say)
    return bin_dir


def _install(tool: str, home: Path, say: Callable[[str], None]) -> None:
    bin_dir = home / "bin"
    wanted = "\n".join(REQUIREMENTS[tool])
    stamp = home / "requirements.txt"
    say(f"installing {tool} into {home} (once): {', '.join(REQUIREMENTS[tool])}")
    started = time.perf_counter()
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    done = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", *REQUIREMENTS[tool]],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ConfigError(f"could not install {tool} into {home} (pip exit {done.returncode}):\n"
                          f"{(done.stdout + done.stderr).strip()[-3000:]}")
    stamp.write_text(wanted, encoding="utf-8")
    say(f"installed {tool} in {time.perf_counter() - started:.0f} s")


@dataclass(frozen=True)
class DbtRun:
    returncode: int
    seconds: float
    output: str
    namespace: str  # the datasets' namespace: duckdb://<database file>


def dbt_namespace(database: Path) -> str:
    """The namespace openlineage-dbt gives every dataset of the example project (its DuckDB file)."""
    return f"duckdb://{database}"


def run_dbt(settings: Settings, url: str, warehouse: Path, workdir: Path, *, command: str = "build",
            job_namespace: str = "dbt_shop", variables: Mapping[str, object] | None = None,
            api_key: str | None = None,
            say: Callable[[str], None] = lambda line: None, timeout: float = 600.0) -> DbtRun:
    """``dbt-ol COMMAND`` on the example project (examples/dbt_shop), reading the files under
    ``warehouse`` (the Spark demo's layout) into ``workdir/shop.duckdb``, with its OpenLineage
    events sent to ``url``. Returns dbt's exit code (1: a model or test failed) and its output."""
    if not (DBT_PROJECT / "dbt_project.yml").is_file():
        raise ConfigError(f"the dbt example is not at {DBT_PROJECT}: run it from a clone")
    bin_dir = tool_bin(settings, "dbt", say)
    workdir.mkdir(parents=True, exist_ok=True)
    database = workdir / "shop.duckdb"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENLINEAGE_", "DBT_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
            "SHOP_WAREHOUSE": str(warehouse), "DBT_SHOP_DUCKDB": str(database),
            "DBT_PROFILES_DIR": str(DBT_PROJECT), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "OPENLINEAGE_URL": url, "OPENLINEAGE_NAMESPACE": job_namespace,
            "OPENLINEAGE_DBT_LOGGING": "INFO"}
    if api_key:
        env["OPENLINEAGE_API_KEY"] = api_key
    args = [str(bin_dir / "dbt-ol"), command, "--project-dir", str(DBT_PROJECT),
            "--target-path", str(workdir / "target"), "--log-path", str(workdir / "logs")]
    if variables:
        args += ["--vars", _yaml_flow(variables)]
    started = time.perf_counter()
    try:
        done = subprocess.run(args, env=env, cwd=workdir, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise ConfigError(f"dbt-ol {command} ran past {timeout:.0f} s") from e
    output = done.stdout + done.stderr
    if done.returncode not in (0, 1):
        raise ConfigError(f"dbt-ol {command} failed (exit {done.returncode}) before sending its "
                          f"lineage:\n{output.strip()[-3000:]}")
    return DbtRun(done.returncode, time.perf_counter() - started, output, dbt_namespace(database))


def compile_dbt(settings: Settings, project: Path, warehouse: Path, workdir: Path,
                say: Callable[[str], None] = lambda line: None) -> Path:
    """``dbt compile`` of a copy of the example project (a branch): its ``manifest.json``, what
    ``lineage check --dbt-manifest`` reads. No lineage is sent."""
    bin_dir = tool_bin(settings, "dbt", say)
    workdir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENLINEAGE_", "DBT_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env |= {"PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "SHOP_WAREHOUSE": str(warehouse),
            "DBT_SHOP_DUCKDB": str(workdir / "shop.duckdb"), "DBT_PROFILES_DIR": str(project),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    target = workdir / "target"
    _run([str(bin_dir / "dbt"), "compile", "--project-dir", str(project), "--target-path", str(target),
          "--log-path", str(workdir / "logs")], env, workdir, 300, "dbt compile")
    return target / "manifest.json"


def _yaml_flow(values: Mapping[str, object]) -> str:
    """``--vars`` as a YAML flow mapping of plain scalars."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in values.items()) + "}"


@dataclass(frozen=True)
class AirflowRun:
    returncode: int
    seconds: float
    output: str
    namespace: str  # the DuckDB datasets' namespace (dbt's and the SQL task's)
    logical_date: str


def airflow_env(settings: Settings, url: str, warehouse: Path, workdir: Path, *,
                fail_revenue: bool = False, api_key: str | None = None,
                say: Callable[[str], None] = lambda line: None) -> tuple[Path, dict[str, str]]:
    """Airflow's environment directory and the environment its commands run the example DAG
    in (examples/airflow_shop): its own state (a SQLite database) in ``workdir/airflow``, Spark
    and dbt reporting to ``url``; with ``fail_revenue`` Spark's revenue job fails."""
    if not (AIRFLOW_DAGS / f"{DAG_ID}.py").is_file():
        raise ConfigError(f"the Airflow example is not at {AIRFLOW_DAGS}: run it from a clone")
    airflow_bin = tool_bin(settings, "airflow", say)
    dbt_bin = tool_bin(settings, "dbt", say)
    workdir.mkdir(parents=True, exist_ok=True)
    home = workdir / "airflow"
    spark_conf = openlineage_conf(url, "shop", api_key, listener_jar(settings)) | {
        "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4", "spark.driver.memory": "1g"}
    props = workdir / "openlineage.properties"
    props.write_text(properties_text(spark_conf), encoding="utf-8")
    database = workdir / "shop.duckdb"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENLINEAGE_", "AIRFLOW", "DBT_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env |= {"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(AIRFLOW_DAGS),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "false", "OPENLINEAGE_URL": url,
            "OPENLINEAGE_NAMESPACE": "airflow_shop",
            "SHOP_WAREHOUSE": str(warehouse), "SHOP_SPARK_SUBMIT": str(spark_submit()),
            "SHOP_SPARK_PROPERTIES": str(props), "SHOP_SPARK_PIPELINE": str(SPARK_PIPELINE),
            "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
            "SHOP_DBT_BIN": str(dbt_bin), "SHOP_DBT_PROJECT": str(DBT_PROJECT),
            "SHOP_DBT_WORKDIR": str(workdir), "DBT_SHOP_DUCKDB": str(database),
            "DBT_PROFILES_DIR": str(DBT_PROJECT), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "SHOP_FAIL_REVENUE": "1" if fail_revenue else "0",
            # the DAG's lineage gate imports api.airflow.sensor from this checkout
            "PYTHONPATH": str(ROOT)}
    if api_key:
        env["OPENLINEAGE_API_KEY"] = api_key
    return airflow_bin, env


def run_airflow(settings: Settings, url: str, warehouse: Path, workdir: Path, *,
                logical_date: datetime | None = None, fail_revenue: bool = False,
                api_key: str | None = None, say: Callable[[str], None] = lambda line: None,
                timeout: float = 900.0) -> AirflowRun:
    """``airflow dags test shop_pipeline`` (examples/airflow_shop): Spark's jobs, the dbt build and
    the overview task, each reporting to ``url`` with the DAG's task run as parent. Airflow's own
    state (a SQLite database) lives in ``workdir/airflow``. Returns the command's exit code (not 0
    when a task failed) and its output."""
    airflow_bin, env = airflow_env(settings, url, warehouse, workdir, fail_revenue=fail_revenue,
                                   api_key=api_key, say=say)
    home = Path(env["AIRFLOW_HOME"])
    database = Path(env["DBT_SHOP_DUCKDB"])
    started = time.perf_counter()
    if not (home / "airflow.db").is_file():
        say("creating Airflow's database (airflow db migrate, once)")
        _run([str(airflow_bin / "airflow"), "db", "migrate"], env, workdir, 300, "airflow db migrate")
    when = (logical_date or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    done = _run([str(airflow_bin / "airflow"), "dags", "test", DAG_ID, when], env, workdir, timeout,
                "airflow dags test", check=False)
    return AirflowRun(done.returncode, time.perf_counter() - started, done.stdout + done.stderr,
                      dbt_namespace(database), when)


@dataclass(frozen=True)
class Rerun:
    """A DAG run cleared by a rerun plan's command and run again by Airflow's scheduler: each
    task's (state, try number) before the clear, after it, and once the DAG run ended."""

    before: dict[str, tuple[str | None, int]]
    cleared: dict[str, tuple[str | None, int]]
    after: dict[str, tuple[str | None, int]]
    state: str | None  # the DAG run's state at the end: success, failed (None: still running)
    output: str  # the clear command's output, then the services' logs when it did not end


def clear_and_rerun(settings: Settings, url: str, warehouse: Path, workdir: Path,
                    commands: tuple[str, ...], *,
                    api_key: str | None = None, say: Callable[[str], None] = lambda line: None,
                    timeout: float = 900.0) -> Rerun:
    """Run a rerun plan's ``airflow tasks clear`` commands on the example's Airflow (Spark's
    revenue job fixed), then Airflow's services as ``airflow standalone`` runs them (the
    scheduler with the local executor, the DAG processor, the API server its tasks report to)
    until the cleared DAG run ends again."""
    airflow_bin, env = airflow_env(settings, url, warehouse, workdir, api_key=api_key, say=say)
    clears = [shlex.split(c, comments=True) for c in commands]
    if not clears or any(w[:3] != ["airflow", "tasks", "clear"] for w in clears):
        raise ConfigError(f"not `airflow tasks clear` commands: {commands}")
    airflow = str(airflow_bin / "airflow")
    database = Path(env["AIRFLOW_HOME"]) / "airflow.db"
    run_id = _cleared_run(database, clears[0])
    before = _task_states(database, run_id)
    said = ""
    for words in clears:
        done = _run([airflow, *words[1:]], env, workdir, 300, "airflow tasks clear")
        said += done.stdout + done.stderr
    cleared = _task_states(database, run_id)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env |= {"AIRFLOW__CORE__EXECUTOR": "LocalExecutor", "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_hex(16),
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5"}
    _run([airflow, "dags", "unpause", DAG_ID], env, workdir, 120, "airflow dags unpause")
    logs = workdir / "airflow-services"
    logs.mkdir(exist_ok=True)
    services = []
    for name in ("api-server", "dag-processor", "scheduler"):
        out = (logs / f"{name}.log").open("w")
        services.append((subprocess.Popen([airflow, name], env=env, cwd=workdir, stdout=out,
                                          stderr=subprocess.STDOUT), out))
    say(f"airflow scheduler, dag-processor and api-server: rerunning DAG run {run_id}")
    state = None
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = _run_state(database, run_id)
            if state in ("success", "failed"):
                break
            if any(p.poll() is not None for p, _ in services):
                break
            time.sleep(2)
    finally:
        for p, _out in services:
            p.terminate()
        for p, out in services:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
            out.close()
    ended = state in ("success", "failed")
    output = said + ("" if ended else "".join(
        f"\n--- {f.name}\n" + f.read_text(errors="replace")[-3000:]
        for f in sorted(logs.glob("*.log"))))
    return Rerun(before, cleared, _task_states(database, run_id), state if ended else None, output)


def _cleared_run(database: Path, words: list[str]) -> str:
    """The run id of the DAG run a ``tasks clear`` command's start date names."""
    start = words[words.index("--start-date") + 1]
    logical = datetime.fromisoformat(start).astimezone(UTC)
    with contextlib.closing(sqlite3.connect(database)) as db:
        found = [(run_id, value) for run_id, value in db.execute(
            "SELECT run_id, logical_date FROM dag_run WHERE dag_id = ?", (DAG_ID,))]
    for run_id, value in found:
        if value and datetime.fromisoformat(str(value)).replace(tzinfo=UTC) == logical.replace(tzinfo=UTC):
            return str(run_id)
    raise ConfigError(f"no run of {DAG_ID} at {start} in {database}: {found}")


def _task_states(database: Path, run_id: str) -> dict[str, tuple[str | None, int]]:
    with contextlib.closing(sqlite3.connect(database)) as db:
        return {task: (state, int(tries or 0)) for task, state, tries in db.execute(
            "SELECT task_id, state, try_number FROM task_instance WHERE dag_id = ? AND run_id = ?",
            (DAG_ID, run_id))}


def _run_state(database: Path, run_id: str) -> str | None:
    with contextlib.closing(sqlite3.connect(database)) as db:
        row = db.execute("SELECT state FROM dag_run WHERE dag_id = ? AND run_id = ?",
                         (DAG_ID, run_id)).fetchone()
    return None if row is None else str(row[0])


def _run(args: list[str], env: dict[str, str], cwd: Path, timeout: float, what: str,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as e:
        raise ConfigError(f"{what} ran past {timeout:.0f} s") from e
    if check and done.returncode != 0:
        raise ConfigError(f"{what} failed (exit {done.returncode}):\n"
                          f"{(done.stdout + done.stderr).strip()[-3000:]}")
    return done


def main(argv: list[str] | None = None) -> int:
    """``python -m api.local.producers install dbt airflow``: make the tools' environments now (CI does
    this in the background while the gates run)."""
    import argparse

    from graph.settings import get_settings

    parser = argparse.ArgumentParser(prog="python -m api.local.producers", description=main.__doc__)
    parser.add_argument("command", choices=["install"])
    parser.add_argument("tools", nargs="+", choices=sorted(REQUIREMENTS))
    args = parser.parse_args(argv)
    settings = get_settings()
    try:
        for tool in args.tools:
            print(tool_bin(settings, tool, say=print), flush=True)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

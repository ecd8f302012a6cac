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

import os
import subprocess
import time
import venv
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from graph.errors import ConfigError
from graph.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DBT_PROJECT = ROOT / "examples" / "dbt_shop"

# Verified together in this project's tests (docs/producers.md). dbt-core 1.12 needs a parser wheel
# fetched from GitHub at install time, which not every machine can reach: 1.11 does not.
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "dbt": ("dbt-core>=1.10,<1.12", "dbt-duckdb>=1.10,<1.12", "openlineage-dbt>=1.54,<2"),
}
EXECUTABLE = {"dbt": "dbt-ol"}


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
    if (bin_dir / EXECUTABLE[tool]).exists() and stamp.is_file() and stamp.read_text("utf-8") == wanted:
        return bin_dir
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
    return bin_dir


@dataclass(frozen=True)
class ParentRun:
    """The run that started a producer's run (an Airflow task run), passed the way OpenLineage's
    integrations read it: ``OPENLINEAGE_PARENT_ID`` = namespace/name/runId, and the root."""

    namespace: str
    name: str
    run_id: str
    root: ParentRun | None = None

    def env(self) -> dict[str, str]:
        root = self.root or self
        return {"OPENLINEAGE_PARENT_ID": f"{self.namespace}/{self.name}/{self.run_id}",
                "OPENLINEAGE_ROOT_PARENT_ID": f"{root.namespace}/{root.name}/{root.run_id}"}


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
            parent: ParentRun | None = None, api_key: str | None = None,
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
    if parent:
        env |= parent.env()
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


def _yaml_flow(values: Mapping[str, object]) -> str:
    """``--vars`` as a YAML flow mapping of plain scalars."""
    return "{" + ", ".join(f"{k}: {v}" for k, v in values.items()) + "}"

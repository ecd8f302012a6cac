"""The package installs without warnings and ships its data (the Cypher files, the Neo4j conf)."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[2]


def _pip(python: Path, *args: str) -> str:
    done = subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", *args],
                          capture_output=True, text=True, timeout=600, check=True)
    return done.stdout + done.stderr


def test_an_editable_install_prints_no_warning(tmp_path: Path) -> None:
    """In a new virtual environment, so the installation of the one running the tests stays; it
    sees this one's packages, so it runs this one's pip (a current pip shows the build's
    warnings; the pip that venv bundles may be older)."""
    venv.create(tmp_path / "venv", system_site_packages=True)
    python = tmp_path / "venv" / "bin" / "python"
    output = _pip(python, "install", "--no-deps", "-e", str(ROOT))
    assert "warning" not in output.lower(), output
    where = subprocess.run([str(python), "-c", "import graph, cypher; print(graph.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout
    assert where.strip() == str(ROOT / "graph" / "__init__.py")


def test_the_wheel_holds_the_queries_and_no_tests(tmp_path: Path) -> None:
    output = _pip(Path(sys.executable), "wheel", "--no-deps", "-w", str(tmp_path), str(ROOT))
    assert "warning" not in output.lower().replace("running pip as the 'root' user", ""), output
    [wheel] = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if n.endswith(".cypher")}
    expected = {str(p.relative_to(ROOT)) for p in (ROOT / "cypher").rglob("*.cypher")}
    assert shipped == expected
    assert not [n for n in names if n.startswith(("tests/", "bench/", "examples/"))]
    assert {"api/cli/__init__.py", "graph/conf/neo4j.conf.template"} <= set(names)

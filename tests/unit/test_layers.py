"""The layers of the tree, as imports show them: the front doors (api/) on top, impact/ and ingest/
beside each other, graph/ at the ground; no module imports, directly or through others, a module
that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).parents[2]
PACKAGES = ("api", "graph", "impact", "ingest")
MAY_IMPORT = {"api": {"api", "graph", "impact", "ingest"}, "impact": {"impact", "graph"},
              "ingest": {"ingest", "graph"}, "graph": {"graph"}}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> nx.DiGraph:
    found = nx.DiGraph()
    modules = {_module(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    for name, path in modules.items():
        found.add_node(name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    found.add_edge(name, target)
    return found


def test_each_layer_imports_only_what_lies_below_it() -> None:
    imports = _imports()
    assert imports.number_of_nodes() > 40
    wrong = [(a, b) for a, b in imports.edges if b.split(".")[0] not in MAY_IMPORT[a.split(".")[0]]]
    assert not wrong, wrong


def test_no_circles_between_modules() -> None:
    imports = _imports()
    # a package's __init__ that registers its modules is not a circle of use
    imports.remove_edges_from([(a, b) for a, b in imports.edges
                               if b.startswith(a + ".") or a.startswith(b + ".")])
    cycles = list(nx.simple_cycles(imports))
    assert not cycles, cycles


FRONT_DOORS = ("api.routes", "api.cli")
API_WINGS = ("api.render", "api.services", "api.local", "api.airflow")


def _under(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_api_wings_never_import_the_front_doors() -> None:
    imports = _imports()
    wrong = [(a, b) for a, b in imports.edges if _under(a, API_WINGS) and _under(b, FRONT_DOORS)]
    assert not wrong, wrong


def test_the_airflow_sensor_imports_nothing_of_ours() -> None:
    # it runs inside Airflow, where lineage-graph is not installed
    imports = _imports()
    wrong = [(a, b) for a, b in imports.edges if _under(a, ("api.airflow",))
             and not _under(b, ("api.airflow",))]
    assert not wrong, wrong
    assert imports.has_node("api.airflow.sensor")


def test_no_request_below_the_routes() -> None:
    # the wings take what a route resolved (its services, its arguments), never the request
    found = []
    for package in API_WINGS:
        for path in (ROOT / Path(*package.split("."))).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and \
                        node.module.split(".")[0] in ("fastapi", "starlette"):
                    found += [f"{_module(path)}: {a.name}" for a in node.names
                              if a.name in ("Request", "WebSocket")]
    assert not found, found

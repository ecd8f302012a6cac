"""Every error lineage-graph defines derives from the one root and is drawn in its tree: the
shared tree in graph.errors, the HTTP API's own errors in api.errors."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import api.errors
import graph.errors
from graph.errors import LineageError

PACKAGES = ("api", "graph", "impact", "ingest")
SKIP = {"api.cli.__main__", "ingest.spark.load"}  # runs the CLI / needs PySpark


def _our_exceptions() -> dict[str, type[BaseException]]:
    found = {}
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if info.name in SKIP:
                continue
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if (inspect.isclass(value) and issubclass(value, BaseException)
                        and value.__module__ == info.name and not name.startswith("_")):
                    found[f"{info.name}.{name}"] = value
    return found


def test_every_error_derives_from_the_root_and_is_in_the_tree() -> None:
    found = _our_exceptions()
    assert len(found) >= 15
    for qualified, error in found.items():
        assert issubclass(error, LineageError), f"{qualified} does not derive from LineageError"
        home = api.errors if qualified.startswith("api.") else graph.errors
        tree = home.__doc__ or ""
        assert f" {error.__name__} " in tree or error is LineageError, \
            f"{qualified} is not drawn in {home.__name__}'s tree"

"""The suite's longest files run first (tests/conftest.py, LONGEST_FIRST): each one it names exists,
so that a renamed file does not silently fall back to the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import LONGEST_FIRST

ROOT = Path(__file__).parents[2]


def test_every_longest_file_exists_once() -> None:
    assert [f for f in LONGEST_FIRST if not (ROOT / f).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)


def test_the_workers_take_the_files_in_that_order(pytestconfig: pytest.Config) -> None:
    """pytest-xdist's --dist loadfile hands out files by their number of tests, most first,
    unless told not to (--no-loadscope-reorder): the one-test fault files then ran last, each
    alone on one worker while the other idled."""
    if pytestconfig.getoption("dist", "no") == "loadfile":
        assert pytestconfig.getoption("loadscopereorder") is False
    assert "--no-loadscope-reorder" in str(pytestconfig.getini("addopts"))

"""The suite's longest files run first (tests/conftest.py, LONGEST_FIRST): each one it names exists,
so that a renamed file does not silently fall back to the end."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONGEST_FIRST

ROOT = Path(__file__).parents[2]


def test_every_longest_file_exists_once() -> None:
    assert [f for f in LONGEST_FIRST if not (ROOT / f).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)

"""Every setting is listed in the README's settings table."""

from __future__ import annotations

from pathlib import Path

from graph.settings import Settings

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_in_the_readme() -> None:
    missing = [f"LINEAGE_{name.upper()}" for name in Settings.model_fields
               if f"`LINEAGE_{name.upper()}`" not in README]
    assert not missing, f"not in the README's settings table: {missing}"

"""A rerun plan's Markdown with hostile names: they stay inside their cells and code spans."""

from __future__ import annotations

from datetime import UTC, datetime

from api.render.repair import plan_markdown
from impact.repair.plan import Group, Rerun, RerunPlan, Rollback

WHEN = datetime(2026, 3, 2, 1, tzinfo=UTC)
HOSTILE = "ns:a|b`c\n# not a heading <script>"


def test_hostile_names_stay_in_their_cells() -> None:
    plan = RerunPlan(
        "run r1", WHEN, ("r1",), (HOSTILE,),
        (Rerun(HOSTILE, 1, (HOSTILE,), ("r2",), (HOSTILE,), "read bad data", None, "t|x"),),
        (Group("ns:dag", "d1", "AIRFLOW", ("t|x",), WHEN, "airflow tasks clear 'd```ag' --yes"),),
        (Rollback(HOSTILE, WHEN, "v|1", "r0", WHEN, ""),), 3)
    text = plan_markdown(plan)
    table = [line for line in text.splitlines() if line.startswith("| 1 |")]
    assert len(table) == 1 and table[0].count("|") - table[0].count("\\|") == 8  # 7 cells
    assert "\n# not a heading" not in text  # one line each
    assert "&lt;script>" in table[0]  # in a cell, as text; in prose, inside a code span
    [origin] = [line for line in text.splitlines() if line.startswith("Bad data began")]
    assert "`` ns:a|b`c # not a heading <script> ``" in origin
    # the command's own backticks cannot end its fence
    assert "````bash\nairflow tasks clear 'd```ag' --yes\n````" in text
    [rollback] = [line for line in text.splitlines() if line.startswith("| ns:a")]
    assert rollback.count("|") - rollback.count("\\|") == 6  # 5 cells

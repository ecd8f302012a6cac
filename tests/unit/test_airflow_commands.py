"""The Airflow commands of a rerun plan (impact.repair.plan): a task each, named as it is, and
one line each whatever names an event gave (a line break would start a command of its own)."""

from __future__ import annotations

from datetime import UTC, datetime

from impact.repair.plan import _clear

WHEN = datetime(2026, 12, 2, 7, 14, 15, tzinfo=UTC)


def test_a_task_a_command_with_the_dag_runs_date() -> None:
    assert _clear("shop_pipeline", "dbt_build", WHEN, {"dbt_build", "spark_shop"}) == (
        "airflow tasks clear 'shop_pipeline' --task-regex 'dbt_build' --start-date "
        "2026-12-02T07:14:15+00:00 --end-date 2026-12-02T07:14:15+00:00 --yes")


def test_a_task_id_inside_another_says_which_it_also_clears() -> None:
    line = _clear("d", "load", None, {"load", "load_users", "report"})
    assert line.endswith("--yes  # also clears load_users")


def test_hostile_names_stay_on_one_line() -> None:
    line = _clear("d'ag", "t1\nrm -rf ~", WHEN, {"t1\nrm -rf ~", "t1\nrm -rf ~x\ny"})
    assert "\n" not in line
    assert "--task-regex 't1\\x0arm -rf ~'" in line and "'d'\\''ag'" in line
    assert line.endswith("# also clears t1\\x0arm -rf ~x\\x0ay")

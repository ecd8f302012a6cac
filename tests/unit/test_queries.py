import pytest

from graph.errors import QueryLibraryError
from graph.queries import library, parse_query


def test_every_shipped_query_parses_and_declares_its_params() -> None:
    lib = library()
    assert "ingest/runs" in lib and "schema/constraints" in lib
    for named in lib.values():
        assert named.answers
        assert set(named.examples) >= named.params


def test_undeclared_parameter_is_reported_with_file_and_line() -> None:
    source = "// Answers: x\n// Param $a: a\n// :param a => 1\nRETURN $a,\n $b"
    with pytest.raises(QueryLibraryError, match=r"q:5: uses \$b"):
        parse_query("q", source)


def test_declared_but_unused_parameter_is_an_error() -> None:
    source = "// Answers: x\n// Param $a: a\n// :param a => 1\nRETURN 1"
    with pytest.raises(QueryLibraryError, match=r"q:2: declares \$a"):
        parse_query("q", source)


def test_dollar_inside_a_string_literal_is_not_a_parameter() -> None:
    named = parse_query("q", "// Answers: x\nRETURN '$notaparam' AS s")
    assert named.params == frozenset()


def test_statements_split_on_semicolons_at_line_end() -> None:
    named = parse_query("q", "// Answers: x\nRETURN 1;\nRETURN 2;")
    assert named.statements == ("RETURN 1", "RETURN 2")


def test_every_ingest_query_keeps_its_plan_and_no_index_lists_runs_by_state() -> None:
    # replanning the ingest queries stalled the worker for seconds as the graph grew; a kept plan
    # is only safe while no index can tempt a young graph's planner away from the keys
    # (docs/benchmarks.md, "Lessons kept")
    lib = library()
    ingest = [named for name, named in lib.items() if name.startswith("ingest/")]
    assert len(ingest) >= 20
    for named in ingest:
        assert named.text.startswith("CYPHER replan=skip\n"), named.name
    schema = "\n".join(lib["schema/constraints"].statements)
    assert "DROP INDEX run_state IF EXISTS" in schema and "ON (r.state)" not in schema

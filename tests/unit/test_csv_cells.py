"""CSV cells a spreadsheet shows as text (api.render.markup.csv_cell)."""

from __future__ import annotations

import csv
import io

from api.render.markup import csv_cell, csv_text


def test_a_cell_that_starts_like_a_formula_gets_a_leading_quote() -> None:
    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        assert csv_cell(text) == "'" + text
    for value in ("users.email", "a=b", "", "'quoted", 3, -1, True):
        assert csv_cell(value) == value  # numbers are numbers, not text that looks like one


def test_csv_text_writes_the_header_as_it_is_and_every_row_through_csv_cell() -> None:
    text = csv_text(["name", "n"], [["=x", -2], ["ok", 3]])
    assert list(csv.reader(io.StringIO(text))) == [["name", "n"], ["'=x", "-2"], ["ok", "3"]]

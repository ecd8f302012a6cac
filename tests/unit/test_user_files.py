"""The files users write are read one way (impact.user_files): unknown keys refused with a guess,
each error at its file and line, aliases refused, the rules of each file said in its words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from impact.health.slo import Slo, SloError, read_slos
from impact.health.tiers import Pattern, TiersError, read_tiers

TIERS = [
    ("tiers:\n  - tier: x\n    match: [{table: y}]\n",
     ":3: tiers[0].match[0].table: unknown key; expected namespace, name"),
    ("tiers:\n  - tier: x\n    match: []\n", ":3: tiers[0].match: give at least one"),
    ("tierz: []\n", ":1: tierz: unknown key (did you mean tiers?); expected tiers"),
    ("tiers:\n  - tier: x\n    match: [{}]\n", ":3: tiers[0].match[0]: give a namespace or a name"),
    ("a: &x [1]\nb: *x\n", ":2: anchors and aliases (*name) are not read here"),
    ("tiers:\n  - tier: x\n    match: [{name: 3}]\n", ":3: tiers[0].match[0].name: 3: expected "
                                                         "a valid string"),
    ("- a\n", ":1: expected a mapping of keys"),
    ("tiers: [\n", "not YAML"),
]
SLOS = [
    ("slos:\n  - {sli: coverage, tier: critical, objective: 1.5}\n",
     ":2: slos[0]: coverage is a ratio: give 'objective' in (0, 1]"),
    ("slos:\n  - {sli: coverage, tier: c, objective: 0.5}\n  - {sli: lag_seconds, max: 30, tier: a}\n",
     ":3: slos[1]: lag_seconds is measured on the ingest path, not per tier"),
    ("slos:\n  - {sli: nope, tier: a, max: 1}\n", ":2: slos[0]: 'sli' must be one of coverage"),
    ("slos: []\n", ":1: slos: give at least one"),
    ("slos:\n  - {sli: coverage, tier: critical, objectiv: 0.5}\n",
     ":2: slos[0].objectiv: unknown key (did you mean objective?)"),
    ("slos:\n  - {sli: coverage, tier: critical, objective: '0.5'}\n",
     ":2: slos[0].objective: '0.5': expected a valid number"),
    ("slos:\n  - {sli: silent_jobs, tier: c}\n", ":2: slos[0]: silent_jobs is judged by 'max'"),
]


CASES = ([(read_tiers, TiersError, text, said) for text, said in TIERS]
         + [(read_slos, SloError, text, said) for text, said in SLOS])


@pytest.mark.parametrize(("read", "error", "text", "said"), CASES)
def test_a_file_that_cannot_be_used_says_where_and_why(
        tmp_path: Path, read: Callable[[Path], object], error: type[Exception], text: str,
        said: str) -> None:
    path = tmp_path / "file.yaml"
    path.write_text(text)
    with pytest.raises(error) as e:
        read(path)
    assert str(e.value).startswith(str(path)) and said in str(e.value), str(e.value)


def test_good_files_read_as_before(tmp_path: Path) -> None:
    tiers, slos = tmp_path / "tiers.yaml", tmp_path / "slos.yaml"
    tiers.write_text("tiers:\n  - tier: ' gold '\n    match:\n      - {name: 'marts.*'}\n"
                     "      - {namespace: 's3://raw-*'}\n")
    slos.write_text("slos:\n  - {sli: coverage, tier: critical, objective: 1}\n"
                    "  - {sli: lag_seconds, max: 30}\n")
    assert read_tiers(tiers).rules == (("gold", (Pattern("*", "marts.*"), Pattern("s3://raw-*", "*"))),)
    assert read_slos(slos) == [Slo("coverage", "critical", objective=1.0),
                               Slo("lag_seconds", None, max=30.0)]


def test_the_examples_read(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "health"
    assert read_tiers(examples / "tiers.yaml").rules
    assert read_slos(examples / "slos.yaml")

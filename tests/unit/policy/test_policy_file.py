"""Reading a policy file (impact.policy.rules): the rules as written, and every mistake refused
with the file, the line and the rule it is in."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from impact.policy.rules import PolicyError, parse_policies, read_policies

EXAMPLE = Path(__file__).parents[3] / "examples" / "policies" / "shop.yaml"

GOOD = """\
version: 1
rules:
  - id: pii-masked
    description: PII reaches marketing only masked
    severity: warning
    owners: [privacy@example.com]
    flow:
      from: {tag: PII}
      to: {namespace: "postgres://*", dataset: "marketing.*"}
      must: masked
      aggregation: masks
      unverified: allowed
    waivers:
      - dataset: marketing.legacy
        reason: being replaced
        until: 2027-01-31
"""


def test_a_rule_as_written() -> None:
    [rule] = parse_policies(GOOD, "p.yaml").rules
    assert rule.flow is not None and rule.metadata is None
    assert (rule.id, rule.severity, rule.owners, rule.line) == (
        "pii-masked", "warning", ("privacy@example.com",), 3)
    assert rule.flow.source.tag == "PII" and rule.flow.must == "masked"
    assert rule.flow.aggregation_masks and rule.flow.unverified_allowed
    assert rule.flow.target.matches("postgres://db:5432", "marketing.leads", "email")
    assert not rule.flow.target.matches("mysql://db", "marketing.leads", "email")
    [waiver] = rule.waivers
    assert waiver.holds(date(2027, 1, 31)) and not waiver.holds(date(2027, 2, 1))
    assert waiver.selector.matches("any", "marketing.legacy")


def test_defaults_are_strict() -> None:
    [rule] = parse_policies("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: PII}, "
                            "to: {dataset: x}, must: masked}\n").rules
    assert rule.flow is not None and rule.severity == "error"
    assert not rule.flow.aggregation_masks and not rule.flow.unverified_allowed


@pytest.mark.parametrize(("text", "line", "rule", "says"), [
    ("version: 2\nrules: []\n", 1, None, "version: 2: expected 1"),
    ("version: 1\nrules: []\n", 2, None, "rules: give at least one"),
    ("version: 1\nrules:\n  - id: a b\n", 3, None, "'id'"),
    ("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: x}, to: {dataset: y}, must: hidden}\n",
     4, "r", "flow.must: 'hidden': expected 'never', 'masked' or 'through'"),
    ("version: 1\nrules:\n  - id: r\n    severity: fatal\n", 4, "r", "severity: 'fatal': expected 'error' or 'warning'"),
    ("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: x}, to: {dataset: y}, must: never}\n"
     "  - id: r\n    flow: {from: {tag: x}, to: {dataset: y}, must: never}\n", 5, "r", "used by an"),
    ("version: 1\nrules:\n  - id: r\n    flow:\n      from: {tags: PII}\n      to: {dataset: x}\n"
     "      must: never\n", 5, "r", "flow.from.tags: unknown key (did you mean tag?)"),
    ("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: x}, to: {tag: y}, must: never}\n",
     4, "r", "tags select sources"),
    ("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: x}, to: {dataset: y}, must: never}\n"
     "    waivers:\n      - {dataset: y, reason: ok, until: soon}\n", 6, "r", "waivers[0].until: 'soon': expected a date"),
    ("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: x}, to: {dataset: y}, must: never}\n"
     "    waivers:\n      - {dataset: y}\n", 6, "r", "waivers[0].reason: required"),
    ("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: x}, must: never}\n", 4, "r",
     "flow.to: required"),
    ("version: 1\nrules:\n  - [id, r\n", 4, None, "not YAML"),  # where YAML saw it end
    ("version: 1\nrules:\n  - id: r\n    metadata: {datasets: {dataset: x}, require: [owners]}\n",
     4, "r", "metadata.require[0]: 'owners': expected 'owner'"),
    ("version: 1\nrules:\n  - id: r\n    metadata: {datasets: {column: x}, require: [owner]}\n",
     4, "r", "metadata.datasets.column: unknown key; expected tag, namespace, dataset"),
    ("version: 1\nrules:\n  - id: r\n    description: both\n    metadata: {datasets: {dataset: x}, "
     "require: [owner]}\n    flow: {from: {tag: x}, to: {dataset: y}, must: never}\n", 3, "r",
     "one thing"),
])
def test_mistakes_name_the_file_line_and_rule(text: str, line: int, rule: str | None,
                                              says: str) -> None:
    with pytest.raises(PolicyError) as e:
        parse_policies(text, "policies.yaml")
    assert (e.value.path, e.value.line, e.value.rule) == ("policies.yaml", line, rule), str(e.value)
    assert says in str(e.value) and str(e.value).startswith(f"policies.yaml:{line}: ")


def test_a_metadata_rule() -> None:
    [rule] = parse_policies("version: 1\nrules:\n  - id: documented\n    metadata:\n"
                            "      datasets: {tag: tier:critical}\n"
                            "      require: [owner, column-lineage, owner]\n").rules
    assert rule.flow is None and rule.metadata is not None
    assert rule.metadata.datasets.tag == "tier:critical"
    assert rule.metadata.require == ("owner", "column-lineage")


MORE = """\
version: 1
rules:
  - id: through-masking
    flow:
      from: {dataset: raw.users}
      to: {namespace: "s3://partner-*"}
      must: through
      through: [{job: "mask_*", namespace: privacy}, {dataset: staging.users_masked}]
  - id: eu-in-eu
    residency:
      regions:
        eu: [{tag: "region:eu"}, {namespace: "*eu-west*"}]
        us: {tag: "region:us"}
      unregioned: allowed
  - id: churn-approved
    sources:
      sinks: {dataset: ml.churn_model}
      allow: {tag: approved}
  - id: pii-present
    quality: {columns: {tag: PII}, metric: null-ratio, above: 0.1}
"""


def test_a_waiver_of_one_path() -> None:
    [rule] = parse_policies("version: 1\nrules:\n  - id: r\n    flow: {from: {tag: x}, "
                            "to: {dataset: y}, must: never}\n    waivers:\n"
                            "      - {from: {dataset: raw.users, column: email}, reason: r}\n").rules
    [waiver] = rule.waivers
    assert waiver.source is not None and waiver.source.matches("ns", "raw.users", "email")
    assert waiver.selector.matches("any", "thing")  # any target: the path is the source's


def test_through_residency_and_sources_rules() -> None:
    through, residency, sources, quality = parse_policies(MORE).rules
    assert quality.quality is not None and quality.kind == "quality"
    assert (quality.quality.metric, quality.quality.above, quality.quality.below) == (
        "null-ratio", 0.1, None)
    assert [r.kind for r in (through, residency, sources)] == ["flow", "residency", "sources"]
    assert through.flow is not None and through.flow.must == "through"
    job, table = through.flow.through
    assert job.matches("job", "privacy", "mask_emails") and not job.matches("job", "etl", "mask_x")
    assert table.matches("dataset", "pg", "staging.users_masked")
    assert not table.matches("job", "pg", "staging.users_masked")
    assert residency.residency is not None and not residency.residency.unregioned_outside
    assert residency.residency.regions_of("s3://eu-west-1", "t", ()) == ("eu",)
    assert residency.residency.regions_of("x", "t", ("Region:US",)) == ("us",)
    assert residency.residency.regions_of("x", "t", ("team:a",)) == ()
    assert sources.sources is not None and len(sources.sources.allow) == 1
    assert sources.sources.allow[0].selects("x", "y", None, ("approved:yes",))


@pytest.mark.parametrize(("text", "line", "says"), [
    ("    flow: {from: {tag: x}, to: {dataset: y}, must: through}\n", 4, "go together"),
    ("    flow: {from: {tag: x}, to: {dataset: y}, must: masked, through: {job: j}}\n", 4,
     "go together"),
    ("    flow: {from: {tag: x}, to: {dataset: y}, must: through, through: {job: j, dataset: d}}\n",
     4, "a 'job' or a 'dataset'"),
    ("    residency: {regions: {eu: {tag: eu}}}\n", 4, "at least two regions"),
    ("    residency: {regions: {eu: {tag: eu}, us: {column: c}}}\n", 4, "residency.regions.us[0].column: unknown key"),
    ("    residency: {regions: {eu: {tag: eu}, us: {tag: us}}, unregioned: inside}\n", 4,
     "residency.unregioned: 'inside'"),
    ("    sources: {sinks: {dataset: m}}\n", 4, "sources.allow: required"),
    ("    flow: {from: {tag: x}, to: {dataset: y}, must: never}\n    waivers:\n"
     "      - {from: {tag: PII}, reason: r}\n", 6, "not a tag"),
    ("    quality: {columns: {tag: PII}, metric: nulls, above: 1}\n", 4, "quality.metric: 'nulls'"),
    ("    quality: {columns: {tag: PII}, metric: null-count}\n", 4, "'above' or 'below'"),
    ("    quality: {columns: {tag: PII}, metric: null-count, above: many}\n", 4,
     "quality.above: 'many': expected a valid number"),
])
def test_mistakes_in_the_other_rule_kinds(text: str, line: int, says: str) -> None:
    with pytest.raises(PolicyError) as e:
        parse_policies("version: 1\nrules:\n  - id: r\n" + text, "p.yaml")
    assert e.value.line == line and e.value.rule == "r" and says in str(e.value), str(e.value)


def test_the_example_file_reads() -> None:
    rules = read_policies(EXAMPLE).rules
    assert [r.id for r in rules] == ["pii-masked-in-staging", "pii-masked-in-features",
                                     "features-stay-out-of-dashboards", "marts-owned-and-traced"]


def test_an_unreadable_file_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read a policy file"):
        read_policies(tmp_path / "missing.yaml")


def test_the_schema_and_the_reader_agree() -> None:
    import json

    import jsonschema
    import yaml

    schema = json.loads((Path(__file__).parents[3] / "docs" / "policies.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for text in (GOOD, MORE, EXAMPLE.read_text()):
        document = yaml.safe_load(text)
        for waiver in (w for r in document["rules"] for w in r.get("waivers", [])):
            waiver["until"] = str(waiver["until"])  # YAML reads a date; JSON holds it as text
        assert not list(validator.iter_errors(document))
    for bad in ({"version": 1, "rules": [{"id": "r", "flow": {"from": {"tag": "x"},
                                                             "to": {"tag": "y"}, "must": "never"}}]},
                {"version": 1, "rules": [{"id": "r", "severity": "fatal",
                                          "flow": {"from": {"tag": "x"}, "to": {"dataset": "y"},
                                                   "must": "never"}}]}):
        assert list(validator.iter_errors(bad))
        with pytest.raises(PolicyError):
            parse_policies(yaml.safe_dump(bad))


@pytest.mark.parametrize("pattern, said", [
    ("[" + "a" * 200_000 + "]", "over the limit of 1000"),
    ("[" + "a" * 100 + "]", "a [...] class of more than 64"),
    ("*a" * 20, "more than 16 wildcards"),
])
def test_patterns_are_bounded_when_the_file_is_read(pattern: str, said: str) -> None:
    """A glob is matched as a regular expression in Neo4j with no time limit: one that could
    pin a check (a huge class, a backtracking run of stars) is refused, with its line."""
    text = ("version: 1\nrules:\n  - id: a\n"
            f"    flow: {{from: {{dataset: '{pattern}'}}, to: {{dataset: x}}, must: never}}\n")
    with pytest.raises(PolicyError, match=f":4: rule a: flow.from.dataset: .*{re.escape(said)}"):
        parse_policies(text)


def test_yaml_nested_past_the_parser_is_refused_not_a_traceback(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="nested too deeply"):
        parse_policies("[" * 100_000 + "]" * 100_000)
    from typer.testing import CliRunner

    from api.cli import app

    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    done = CliRunner().invoke(app, ["policy", "check", "--policies", str(deep)])
    assert done.exit_code == 2 and "nested too deeply" in done.output

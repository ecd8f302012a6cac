"""A policy file: the rules lineage must keep, read from YAML (docs/policies.md; the format as a
JSON Schema in docs/policies.schema.json).

Every error names the file, the line and the rule, and the file is read whole before anything is
evaluated: a file with one bad rule is refused, not half applied.

    version: 1
    rules:
      - id: pii-masked
        description: PII reaches marketing only masked
        severity: error                 # or warning
        owners: [privacy@example.com]
        flow:
          from: {tag: PII}              # columns: a tag, or namespace / dataset / column globs
          to: {dataset: "marts.*"}
          must: masked                  # never: no path at all; masked: every path masks
          aggregation: masks            # masked: an aggregation counts as masking (default: no)
          unverified: violation         # a hop with no reported transformation (default)
        waivers:
          - dataset: marts.legacy_export
            reason: being replaced by the hashed export
            until: 2027-01-31
      - id: critical-documented
        metadata:
          datasets: {tag: "tier:critical"}
          require: [owner, description, schema, producer, column-lineage]
      - id: exports-through-the-masking-job
        flow:
          from: {dataset: raw.users}
          to: {namespace: "s3://partner-*"}
          must: through                 # every path passes one of these checkpoints
          through: [{job: "privacy.mask_*"}, {dataset: staging.users_masked}]
      - id: eu-stays-in-eu
        residency:
          regions:
            eu: [{tag: "region:eu"}, {namespace: "*eu-west*"}]
            us: {tag: "region:us"}
          unregioned: outside           # or allowed: a dataset with no region is not outside
      - id: churn-trains-on-approved-data
        sources:
          sinks: {dataset: ml.churn_model}
          allow: [{tag: approved}]
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

import yaml

from graph.errors import LineageError

Severity = Literal["error", "warning"]
Must = Literal["never", "masked", "through"]
REQUIREMENTS = ("owner", "description", "schema", "producer", "column-lineage")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_SELECTOR_KEYS = ("tag", "namespace", "dataset", "column")
_KINDS = ("flow", "metadata", "residency", "sources", "quality")
METRICS = ("null-ratio", "null-count", "distinct-count", "row-count")


class PolicyError(LineageError):
    """A policy file that cannot be used: says the file, the line and the rule."""

    def __init__(self, path: str, line: int | None, rule: str | None, message: str) -> None:
        where = path + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: " + (f"rule {rule}: " if rule else "") + message)
        self.path, self.line, self.rule = path, line, rule


@dataclass(frozen=True)
class Selector:
    """Columns (or datasets) by tag and by glob patterns (``*``, ``?``, ``[...]``) on their
    namespace, dataset and column names; what is not given matches anything."""

    tag: str | None = None
    namespace: str | None = None
    dataset: str | None = None
    column: str | None = None

    def matches(self, namespace: str, dataset: str, column: str | None = None) -> bool:
        """Whether a column (or, with ``column`` None, a dataset) is selected, tags aside."""
        return (_glob(self.namespace, namespace) and _glob(self.dataset, dataset)
                and (column is None or _glob(self.column, column)))

    def selects(self, namespace: str, dataset: str, column: str | None = None,
                tags: Iterable[str] = ()) -> bool:
        """Whether a column (or dataset) carrying ``tags`` is selected, its tag included."""
        return self.matches(namespace, dataset, column) and (
            self.tag is None or any(tag_matches(self.tag, t) for t in tags))

    def describe(self) -> str:
        return ", ".join(f"{k} {getattr(self, k)}" for k in _SELECTOR_KEYS
                         if getattr(self, k) is not None) or "anything"


def tag_matches(wanted: str, stored: str) -> bool:
    """A tag matches by its whole name, its key or its value, in any case: ``PII`` matches
    ``PII``, ``pii:true`` and ``classification:PII`` (as cypher/impact/tagged_columns.cypher)."""
    w, s = wanted.strip().lower(), stored.lower()
    return s == w or s.startswith(w + ":") or s.endswith(":" + w)


def _glob(pattern: str | None, value: str) -> bool:
    return pattern is None or fnmatch.fnmatchcase(value, pattern)


@dataclass(frozen=True)
class Checkpoint:
    """A job or a dataset every path must pass (``must: through``), by glob patterns."""

    kind: Literal["job", "dataset"]
    name: str
    namespace: str | None = None

    def matches(self, kind: str, namespace: str, name: str) -> bool:
        return kind == self.kind and _glob(self.namespace, namespace) and _glob(self.name, name)

    def describe(self) -> str:
        return f"{self.kind} " + (f"{self.namespace}:" if self.namespace else "") + self.name


@dataclass(frozen=True)
class Waiver:
    """A dataset (and column) where a rule's violations are accepted until a date, and why;
    with ``source``, only the violations whose path starts there (one path)."""

    selector: Selector
    reason: str
    until: date | None = None
    source: Selector | None = None

    def holds(self, today: date) -> bool:
        return self.until is None or today <= self.until


@dataclass(frozen=True)
class FlowRule:
    """Data of the ``source`` columns reaching the ``target`` columns must satisfy ``must``."""

    source: Selector
    target: Selector
    must: Must
    aggregation_masks: bool = False
    unverified_allowed: bool = False
    through: tuple[Checkpoint, ...] = ()
    """``must: through``: the checkpoints, one of which every path passes."""


@dataclass(frozen=True)
class MetadataRule:
    """The selected datasets have each of ``require`` (REQUIREMENTS)."""

    datasets: Selector
    require: tuple[str, ...]


@dataclass(frozen=True)
class ResidencyRule:
    """Data of a dataset in one region never reaches a dataset of another region; with
    ``unregioned_outside``, nor a dataset that has no region."""

    regions: tuple[tuple[str, tuple[Selector, ...]], ...]
    """Each region's name and the selectors of its datasets (any one places a dataset in it)."""
    unregioned_outside: bool = True

    def regions_of(self, namespace: str, name: str, tags: Iterable[str]) -> tuple[str, ...]:
        tags = tuple(tags)
        return tuple(region for region, selectors in self.regions
                     if any(s.selects(namespace, name, None, tags) for s in selectors))


@dataclass(frozen=True)
class SourcesRule:
    """Each selected sink derives only from allowed sources: every dataset at the root of its
    upstream lineage is selected by one of ``allow``."""

    sinks: Selector
    allow: tuple[Selector, ...]


@dataclass(frozen=True)
class QualityRule:
    """The selected columns' (or datasets') latest data-quality metric stays within bounds."""

    columns: Selector
    metric: str
    """One of METRICS: null-ratio (nullCount / rowCount), null-count, distinct-count (per column),
    row-count (per dataset)."""
    above: float | None = None
    """A value above it is a violation."""
    below: float | None = None
    """A value below it is a violation."""


@dataclass(frozen=True)
class Rule:
    id: str
    description: str
    severity: Severity
    flow: FlowRule | None = None
    metadata: MetadataRule | None = None
    residency: ResidencyRule | None = None
    sources: SourcesRule | None = None
    quality: QualityRule | None = None
    owners: tuple[str, ...] = ()
    waivers: tuple[Waiver, ...] = ()
    line: int | None = None
    """Where the rule starts in its file (1-based), for messages and SARIF."""

    @property
    def kind(self) -> str:
        """flow, metadata, residency or sources."""
        return next(k for k in _KINDS if getattr(self, k) is not None)


@dataclass(frozen=True)
class Policies:
    path: str
    rules: tuple[Rule, ...] = field(default_factory=tuple)


def read_policies(path: Path) -> Policies:
    """The rules of the policy file at ``path``; PolicyError naming file, line and rule."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyError(name, None, None, f"cannot be read: {e}") from e
    return parse_policies(text, name)


def parse_policies(text: str, name: str = "<policies>") -> Policies:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise PolicyError(name, mark.line + 1 if mark else None, None,
                          f"not YAML: {getattr(e, 'problem', None) or e}") from e
    except RecursionError as e:
        raise PolicyError(name, None, None, "nested too deeply to be a policy file") from e
    if root is None:
        raise PolicyError(name, None, None, "empty: expected 'version: 1' and 'rules'")
    top = _mapping(root, name, None, "the file")
    _only(top, root, name, None, ("version", "rules"), "the file")
    version = top.get("version")
    if version is None or _scalar(version) != "1":
        raise PolicyError(name, _line(version or root), None, "'version: 1' is required")
    rules_node = top.get("rules")
    if not isinstance(rules_node, yaml.SequenceNode) or not rules_node.value:
        raise PolicyError(name, _line(rules_node or root), None,
                          "'rules' must be a list of at least one rule")
    rules: list[Rule] = []
    for node in rules_node.value:
        rule = _rule(node, name)
        if any(r.id == rule.id for r in rules):
            raise PolicyError(name, rule.line, rule.id, "the id is used by an earlier rule")
        rules.append(rule)
    return Policies(name, tuple(rules))


def _rule(node: yaml.Node, name: str) -> Rule:
    fields = _mapping(node, name, None, "a rule")
    rule_id_node = fields.get("id")
    rule_id = _scalar(rule_id_node) if rule_id_node is not None else None
    if rule_id is None or not _ID.fullmatch(rule_id):
        raise PolicyError(name, _line(rule_id_node or node), None,
                          "each rule needs an 'id' (letters, digits, '.', '_', '-')")
    _only(fields, node, name, rule_id, ("id", "description", "severity", "owners", *_KINDS,
                                        "waivers"), "a rule")
    severity = _scalar(fields["severity"]) if "severity" in fields else "error"
    if severity not in ("error", "warning"):
        raise PolicyError(name, _line(fields["severity"]), rule_id,
                          f"severity {severity!r}: expected error or warning")
    if sum(kind in fields for kind in _KINDS) != 1:
        raise PolicyError(name, _line(node), rule_id, "a rule checks one thing: give it one of "
                          "'flow', 'metadata', 'residency', 'sources' or 'quality'")
    owners = tuple(_strings(fields["owners"], name, rule_id, "owners")) if "owners" in fields else ()
    waivers = tuple(_waiver(w, name, rule_id) for w in _items(fields.get("waivers"), name, rule_id,
                                                                 "waivers"))
    description = _scalar(fields["description"]) if "description" in fields else ""
    return Rule(rule_id, description or "", severity,  # type: ignore[arg-type]
                _flow(fields["flow"], name, rule_id) if "flow" in fields else None,
                _metadata(fields["metadata"], name, rule_id) if "metadata" in fields else None,
                _residency(fields["residency"], name, rule_id) if "residency" in fields else None,
                _sources(fields["sources"], name, rule_id) if "sources" in fields else None,
                _quality(fields["quality"], name, rule_id) if "quality" in fields else None,
                owners, waivers, _line(node))


def _metadata(node: yaml.Node, name: str, rule_id: str) -> MetadataRule:
    fields = _section(node, name, rule_id, "metadata", ("datasets", "require"),
                      ("datasets", "require"))
    datasets = _datasets(fields["datasets"], name, rule_id, "datasets")
    require = _strings(fields["require"], name, rule_id, "require")
    for item in require:
        if item not in REQUIREMENTS:
            raise PolicyError(name, _line(fields["require"]), rule_id,
                              f"require {item!r}: expected {', '.join(REQUIREMENTS)}")
    if not require:
        raise PolicyError(name, _line(fields["require"]), rule_id, "'require' is empty")
    return MetadataRule(datasets, tuple(dict.fromkeys(require)))


def _residency(node: yaml.Node, name: str, rule_id: str) -> ResidencyRule:
    fields = _section(node, name, rule_id, "residency", ("regions", "unregioned"), ("regions",))
    regions = _mapping(fields["regions"], name, rule_id, "regions")
    if len(regions) < 2:
        raise PolicyError(name, _line(fields["regions"]), rule_id,
                          "'regions' names at least two regions, each with its datasets")
    unregioned = _scalar(fields["unregioned"]) if "unregioned" in fields else "outside"
    if unregioned not in ("outside", "allowed"):
        raise PolicyError(name, _line(fields["unregioned"]), rule_id,
                          f"unregioned {unregioned!r}: expected outside or allowed")
    return ResidencyRule(tuple((region, tuple(_datasets(s, name, rule_id, f"regions.{region}")
                                              for s in _one_or_more(value)))
                               for region, value in regions.items()),
                         unregioned == "outside")


def _quality(node: yaml.Node, name: str, rule_id: str) -> QualityRule:
    fields = _section(node, name, rule_id, "quality", ("columns", "metric", "above", "below"),
                      ("columns", "metric"))
    metric = _scalar(fields["metric"])
    if metric not in METRICS:
        raise PolicyError(name, _line(fields["metric"]), rule_id,
                          f"metric {metric!r}: expected {', '.join(METRICS)}")
    bounds: dict[str, float] = {}
    for bound in ("above", "below"):
        if bound in fields:
            raw = _scalar(fields[bound])
            try:
                bounds[bound] = float(raw or "")
            except ValueError as e:
                raise PolicyError(name, _line(fields[bound]), rule_id,
                                  f"{bound} {raw!r}: expected a number") from e
    if not bounds:
        raise PolicyError(name, _line(node), rule_id, "quality needs 'above' or 'below' (or both)")
    return QualityRule(_selector(fields["columns"], name, rule_id, "columns"), metric,
                       bounds.get("above"), bounds.get("below"))


def _sources(node: yaml.Node, name: str, rule_id: str) -> SourcesRule:
    fields = _section(node, name, rule_id, "sources", ("sinks", "allow"), ("sinks", "allow"))
    allow = tuple(_datasets(s, name, rule_id, "allow") for s in _one_or_more(fields["allow"]))
    return SourcesRule(_datasets(fields["sinks"], name, rule_id, "sinks"), allow)


def _datasets(node: yaml.Node, name: str, rule_id: str, what: str) -> Selector:
    """A selector of datasets: a tag, namespace and dataset patterns, no column."""
    selected = _selector(node, name, rule_id, what)
    if selected.column is not None:
        raise PolicyError(name, _line(node), rule_id,
                          f"'{what}' selects datasets: a tag, namespace and dataset, no column")
    return selected


def _one_or_more(node: yaml.Node) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else [node]


def _checkpoint(node: yaml.Node, name: str, rule_id: str) -> Checkpoint:
    fields = _mapping(node, name, rule_id, "a checkpoint")
    _only(fields, node, name, rule_id, ("job", "dataset", "namespace"), "a checkpoint")
    if ("job" in fields) == ("dataset" in fields):
        raise PolicyError(name, _line(node), rule_id,
                          "a checkpoint is a 'job' or a 'dataset' (and perhaps its 'namespace')")
    kind = "job" if "job" in fields else "dataset"
    pattern = _scalar(fields[kind])
    if not pattern:
        raise PolicyError(name, _line(fields[kind]), rule_id, f"the checkpoint's {kind} is empty")
    for key in (kind, "namespace"):
        if key in fields:
            _bounded(_scalar(fields[key]) or "", name, _line(fields[key]), rule_id,
                     f"the checkpoint's {key}")
    return Checkpoint(kind, pattern,  # type: ignore[arg-type]
                      _scalar(fields["namespace"]) if "namespace" in fields else None)


def _flow(node: yaml.Node, name: str, rule_id: str) -> FlowRule:
    fields = _section(node, name, rule_id, "flow", ("from", "to", "must", "through",
                                                     "aggregation", "unverified"),
                      ("from", "to", "must"))
    must = _scalar(fields["must"])
    if must not in ("never", "masked", "through"):
        raise PolicyError(name, _line(fields["must"]), rule_id,
                          f"must {must!r}: expected never, masked or through")
    if (must == "through") != ("through" in fields):
        raise PolicyError(name, _line(fields.get("through", fields["must"])), rule_id,
                          "'must: through' and 'through' (the checkpoints) go together")
    through = tuple(_checkpoint(c, name, rule_id)
                    for c in _one_or_more(fields["through"])) if "through" in fields else ()
    aggregation = _scalar(fields["aggregation"]) if "aggregation" in fields else "does-not-mask"
    if aggregation not in ("masks", "does-not-mask"):
        raise PolicyError(name, _line(fields["aggregation"]), rule_id,
                          f"aggregation {aggregation!r}: expected masks or does-not-mask")
    unverified = _scalar(fields["unverified"]) if "unverified" in fields else "violation"
    if unverified not in ("violation", "allowed"):
        raise PolicyError(name, _line(fields["unverified"]), rule_id,
                          f"unverified {unverified!r}: expected violation or allowed")
    source = _selector(fields["from"], name, rule_id, "from")
    target = _selector(fields["to"], name, rule_id, "to")
    if target.tag is not None:
        raise PolicyError(name, _line(fields["to"]), rule_id,
                          "'to' selects by namespace, dataset and column; tags select sources")
    return FlowRule(source, target, must, aggregation == "masks",  # type: ignore[arg-type]
                    unverified == "allowed", through)


def _selector(node: yaml.Node, name: str, rule_id: str, what: str) -> Selector:
    fields = _mapping(node, name, rule_id, what)
    _only(fields, node, name, rule_id, _SELECTOR_KEYS, what)
    if not fields:
        raise PolicyError(name, _line(node), rule_id,
                          f"'{what}' selects nothing: give a tag, namespace, dataset or column")
    values = {k: _scalar(v) for k, v in fields.items()}
    for k, v in values.items():
        if not v:
            raise PolicyError(name, _line(fields[k]), rule_id, f"{what}.{k} is empty")
        _bounded(v, name, _line(fields[k]), rule_id, f"{what}.{k}")
    return Selector(**values)


GLOB_CHARS = 1000
"""The longest pattern a rule may give (a name is at most 2,000 bytes; a glob is run as a
regular expression in Neo4j, with no time limit of its own)."""
GLOB_WILDCARDS = 16
"""The most ``*`` and ``?`` in one pattern: ``*a*a*a…`` is matched by backtracking."""
GLOB_CLASS_CHARS = 64
"""The longest ``[...]`` character class."""


def _bounded(pattern: str, name: str, line: int | None, rule_id: str, what: str) -> None:
    """A glob within the bounds above, so that matching it is quick whatever names it meets."""
    if len(pattern) > GLOB_CHARS:
        raise PolicyError(name, line, rule_id, f"{what}: a pattern of {len(pattern)} characters, "
                          f"over the limit of {GLOB_CHARS}")
    if sum(pattern.count(c) for c in "*?") > GLOB_WILDCARDS:
        raise PolicyError(name, line, rule_id, f"{what}: more than {GLOB_WILDCARDS} wildcards "
                          "(* and ?) in one pattern")
    for found in re.finditer(r"\[[^\]]*\]?", pattern):
        if len(found.group()) > GLOB_CLASS_CHARS + 2:
            raise PolicyError(name, line, rule_id, f"{what}: a [...] class of more than "
                              f"{GLOB_CLASS_CHARS} characters")


def _waiver(node: yaml.Node, name: str, rule_id: str) -> Waiver:
    fields = _mapping(node, name, rule_id, "a waiver")
    _only(fields, node, name, rule_id, ("namespace", "dataset", "column", "from", "reason",
                                        "until"), "a waiver")
    reason = _scalar(fields["reason"]) if "reason" in fields else None
    if not reason:
        raise PolicyError(name, _line(node), rule_id, "a waiver needs a 'reason'")
    until = None
    if "until" in fields:
        raw = _scalar(fields["until"])
        try:
            until = date.fromisoformat(raw or "")
        except ValueError as e:
            raise PolicyError(name, _line(fields["until"]), rule_id,
                              f"until {raw!r}: expected a date, YYYY-MM-DD") from e
    selected = {k: _scalar(fields[k]) for k in ("namespace", "dataset", "column") if k in fields}
    for k, v in selected.items():
        _bounded(v or "", name, _line(fields[k]), rule_id, f"a waiver's {k}")
    source = _selector(fields["from"], name, rule_id, "from") if "from" in fields else None
    if source is not None and source.tag is not None:
        raise PolicyError(name, _line(fields["from"]), rule_id,
                          "a waiver's 'from' names a dataset (and column), not a tag")
    if not selected and source is None:
        raise PolicyError(name, _line(node), rule_id,
                          "a waiver names the dataset (and column) it covers, or the path's "
                          "'from' (or both)")
    return Waiver(Selector(**selected), reason, until, source)


# --- YAML nodes, with their lines -----------------------------------------------------------

def _section(node: yaml.Node, name: str, rule_id: str, what: str, allowed: tuple[str, ...],
             needed: tuple[str, ...]) -> dict[str, yaml.Node]:
    """A rule's section (``flow``, ``metadata`` ...): a mapping of only ``allowed`` keys, with
    every key of ``needed``."""
    fields = _mapping(node, name, rule_id, what)
    _only(fields, node, name, rule_id, allowed, what)
    for key in needed:
        if key not in fields:
            raise PolicyError(name, _line(node), rule_id, f"{what} needs '{key}'")
    return fields


def _line(node: yaml.Node | None) -> int | None:
    return None if node is None else node.start_mark.line + 1


def _mapping(node: yaml.Node, name: str, rule_id: str | None, what: str) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise PolicyError(name, _line(node), rule_id, f"{what} must be a mapping of keys")
    found: dict[str, yaml.Node] = {}
    for key, value in node.value:
        k = _scalar(key)
        if k is None:
            raise PolicyError(name, _line(key), rule_id, f"{what}: keys are words")
        if k in found:
            raise PolicyError(name, _line(key), rule_id, f"{what}: '{k}' is given twice")
        found[k] = value
    return found


def _only(fields: dict[str, yaml.Node], node: yaml.Node, name: str, rule_id: str | None,
          allowed: tuple[str, ...], what: str) -> None:
    for k, value in fields.items():
        if k not in allowed:
            close = fnmatch.filter(allowed, k[:2] + "*")
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise PolicyError(name, _line(value), rule_id,
                              f"{what}: unknown key '{k}'{hint}; expected {', '.join(allowed)}")


def _scalar(node: yaml.Node | None) -> str | None:
    if isinstance(node, yaml.ScalarNode):
        return str(node.value)
    return None


def _items(node: yaml.Node | None, name: str, rule_id: str, what: str) -> list[yaml.Node]:
    if node is None:
        return []
    if not isinstance(node, yaml.SequenceNode):
        raise PolicyError(name, _line(node), rule_id, f"'{what}' must be a list")
    return list(node.value)


def _strings(node: yaml.Node, name: str, rule_id: str, what: str) -> list[str]:
    out = []
    for item in _items(node, name, rule_id, what):
        value = _scalar(item)
        if value is None:
            raise PolicyError(name, _line(item), rule_id, f"'{what}' holds text only")
        out.append(value)
    return out

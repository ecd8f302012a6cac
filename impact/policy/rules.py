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
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from graph.errors import LineageError
from impact.user_files import Document, FileProblem, Problem, Strict, dotted, parse_yaml, read_yaml, validate

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
    digest: str = ""
    """Of the file's values: the same rules give the same digest in every process (the policy
    watch's mark, impact.policy.kept)."""


def read_policies(path: Path) -> Policies:
    """The rules of the policy file at ``path``; PolicyError naming file, line and rule."""
    try:
        return _policies(read_yaml(path, "a policy file"))
    except FileProblem as e:
        raise _said(e.problem, None) from None


def parse_policies(text: str, name: str = "<policies>") -> Policies:
    try:
        return _policies(parse_yaml(text, name, "a policy file"))
    except FileProblem as e:
        raise _said(e.problem, None) from None


def _policies(document: Document) -> Policies:
    try:
        found = validate(document, _PolicyFile)
        rules: list[Rule] = []
        for i, rule in enumerate(found.rules):
            if any(r.id == rule.id for r in rules):
                raise document.problem(("rules", i), "the id is used by an earlier rule")
            rules.append(_rule(rule, document.line_at(("rules", i))))
    except FileProblem as e:
        raise _said(e.problem, document) from None
    digest = hashlib.sha256(json.dumps(document.values, sort_keys=True, default=str)
                            .encode("utf-8")).hexdigest()
    return Policies(document.file, tuple(rules), digest)


def _said(problem: Problem, document: Document | None) -> PolicyError:
    """The problem as a PolicyError: inside a rule whose id is readable, named by that id and
    its place from the rule down."""
    loc, rule = problem.loc, None
    if document is not None and len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
        found = document.value_at(("rules", loc[1], "id"))
        if isinstance(found, str) and _ID.fullmatch(found):
            rule, loc = found, loc[2:]
    message = f"{dotted(loc)}: {problem.message}" if loc else problem.message
    return PolicyError(problem.file, problem.line, rule, message)


# --- the file's shape: what a user may write, checked before anything is built ----------------

GLOB_CHARS = 1000
"""The longest pattern a rule may give (a name is at most 2,000 bytes; a glob is run as a
regular expression in Neo4j, with no time limit of its own)."""
GLOB_WILDCARDS = 16
"""The most ``*`` and ``?`` in one pattern: ``*a*a…`` is matched by backtracking."""
GLOB_CLASS_CHARS = 64
"""The longest ``[...]`` character class."""


def _bounded(pattern: str) -> str:
    """A glob within the bounds above, so that matching it is quick whatever names it meets."""
    if len(pattern) > GLOB_CHARS:
        raise ValueError(f"a pattern of {len(pattern)} characters, over the limit of {GLOB_CHARS}")
    if sum(pattern.count(c) for c in "*?") > GLOB_WILDCARDS:
        raise ValueError(f"more than {GLOB_WILDCARDS} wildcards (* and ?) in one pattern")
    for found in re.finditer(r"\[[^\]]*\]?", pattern):
        if len(found.group()) > GLOB_CLASS_CHARS + 2:
            raise ValueError(f"a [...] class of more than {GLOB_CLASS_CHARS} characters")
    return pattern


def _listed(value: Any) -> Any:
    """One item or a list of them, as a list."""
    return value if isinstance(value, list) else [value]


def _a_date(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r}: expected a date, YYYY-MM-DD") from None
    return value


Glob = Annotated[str, Field(min_length=1), AfterValidator(_bounded)]


class _Datasets(Strict):
    """Datasets: a tag, namespace and dataset patterns (no column)."""

    tag: Glob | None = None
    namespace: Glob | None = None
    dataset: Glob | None = None

    @model_validator(mode="after")
    def _something(self) -> Self:
        if not self.model_fields_set:
            raise ValueError("selects nothing: give a tag, namespace or dataset")
        return self

    def selector(self) -> Selector:
        return Selector(self.tag, self.namespace, self.dataset)


class _Columns(_Datasets):
    """Columns: a tag, namespace, dataset and column patterns."""

    column: Glob | None = None

    def selector(self) -> Selector:
        return Selector(self.tag, self.namespace, self.dataset, self.column)


class _Checkpoint(Strict):
    job: Glob | None = None
    dataset: Glob | None = None
    namespace: Glob | None = None

    @model_validator(mode="after")
    def _job_or_dataset(self) -> Self:
        if (self.job is None) == (self.dataset is None):
            raise ValueError("a checkpoint is a 'job' or a 'dataset' (and perhaps its 'namespace')")
        return self


class _Flow(Strict):
    source: _Columns = Field(alias="from")
    to: _Columns
    must: Must
    through: Annotated[list[_Checkpoint], BeforeValidator(_listed)] | None = None
    aggregation: Literal["masks", "does-not-mask"] = "does-not-mask"
    unverified: Literal["violation", "allowed"] = "violation"

    @model_validator(mode="after")
    def _agrees(self) -> Self:
        if (self.must == "through") != (self.through is not None):
            raise ValueError("'must: through' and 'through' (the checkpoints) go together")
        if self.to.tag is not None:
            raise ValueError("'to' selects by namespace, dataset and column; tags select sources")
        return self


class _Metadata(Strict):
    datasets: _Datasets
    require: list[Literal[REQUIREMENTS]] = Field(min_length=1)  # type: ignore[valid-type]


class _Residency(Strict):
    regions: dict[str, Annotated[list[_Datasets], BeforeValidator(_listed)]]
    unregioned: Literal["outside", "allowed"] = "outside"

    @model_validator(mode="after")
    def _two_regions(self) -> Self:
        if len(self.regions) < 2:
            raise ValueError("'regions' names at least two regions, each with its datasets")
        return self


class _Sources(Strict):
    sinks: _Datasets
    allow: Annotated[list[_Datasets], BeforeValidator(_listed)]


class _Quality(Strict):
    columns: _Columns
    metric: Literal[METRICS]  # type: ignore[valid-type]
    above: float | None = None
    below: float | None = None

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.above is None and self.below is None:
            raise ValueError("give 'above' or 'below' (or both)")
        return self


class _Waiver(Strict):
    namespace: Glob | None = None
    dataset: Glob | None = None
    column: Glob | None = None
    source: _Columns | None = Field(None, alias="from")
    reason: str = Field(min_length=1)
    until: Annotated[date, BeforeValidator(_a_date)] | None = None

    @model_validator(mode="after")
    def _covers(self) -> Self:
        if self.source is not None and self.source.tag is not None:
            raise ValueError("a waiver's 'from' names a dataset (and column), not a tag")
        if self.source is None and not {"namespace", "dataset", "column"} & self.model_fields_set:
            raise ValueError("a waiver names the dataset (and column) it covers, or the path's "
                             "'from' (or both)")
        return self


class _Rule(Strict):
    id: str
    description: str = ""
    severity: Severity = "error"
    owners: list[str] = []
    flow: _Flow | None = None
    metadata: _Metadata | None = None
    residency: _Residency | None = None
    sources: _Sources | None = None
    quality: _Quality | None = None
    waivers: list[_Waiver] = []

    @field_validator("id")
    @classmethod
    def _an_id(cls, value: str) -> str:
        if not _ID.fullmatch(value):
            raise ValueError("each rule needs an 'id' (letters, digits, '.', '_', '-')")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if sum(getattr(self, kind) is not None for kind in _KINDS) != 1:
            raise ValueError("a rule checks one thing: give it one of 'flow', 'metadata', "
                             "'residency', 'sources' or 'quality'")
        return self


class _PolicyFile(Strict):
    version: Literal[1]
    rules: list[_Rule] = Field(min_length=1)


def _rule(rule: _Rule, line: int | None) -> Rule:
    flow = metadata = residency = sources = quality = None
    if rule.flow is not None:
        f = rule.flow
        flow = FlowRule(f.source.selector(), f.to.selector(), f.must, f.aggregation == "masks",
                        f.unverified == "allowed",
                        tuple(Checkpoint("job" if c.job is not None else "dataset",
                                         c.job or c.dataset or "", c.namespace)
                              for c in f.through or ()))
    if rule.metadata is not None:
        metadata = MetadataRule(rule.metadata.datasets.selector(),
                                tuple(dict.fromkeys(rule.metadata.require)))
    if rule.residency is not None:
        residency = ResidencyRule(tuple((region, tuple(d.selector() for d in datasets))
                                        for region, datasets in rule.residency.regions.items()),
                                  rule.residency.unregioned == "outside")
    if rule.sources is not None:
        sources = SourcesRule(rule.sources.sinks.selector(),
                              tuple(d.selector() for d in rule.sources.allow))
    if rule.quality is not None:
        q = rule.quality
        quality = QualityRule(q.columns.selector(), q.metric, q.above, q.below)
    waivers = tuple(Waiver(Selector(None, w.namespace, w.dataset, w.column), w.reason, w.until,
                           w.source.selector() if w.source is not None else None)
                    for w in rule.waivers)
    return Rule(rule.id, rule.description, rule.severity, flow, metadata, residency, sources,
                quality, tuple(rule.owners), waivers, line)

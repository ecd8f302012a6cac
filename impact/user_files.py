"""The files users write (the policy file, lineage health's tiers and SLO files), read one way:
YAML into a declared pydantic model, unknown keys refused, each error said with the file, the line
and the key.

YAML is composed into nodes first (each knows its line), then made plain values; an alias (``*x``)
is refused rather than copied, so that a few lines cannot expand into millions of values. A reader
that checks more than a model can (one rule's id against another's) says its finding at a place in
the document the same way (``Document.problem``).
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError
from yaml.constructor import SafeConstructor

from graph.errors import LineageError

M = TypeVar("M", bound=BaseModel)
Loc = tuple[str | int, ...]
"""A place in a document: the keys and list indexes from the top."""


class Strict(BaseModel):
    """A part of a file users write: unknown keys are refused, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def dotted(loc: Loc) -> str:
    """``("rules", 0, "flow", "to")`` as ``rules[0].flow.to``."""
    return ".".join(f"[{p}]" if isinstance(p, int) else p for p in loc).replace(".[", "[")


@dataclass(frozen=True)
class Problem:
    """What is wrong in a file users write: the file, the line (when known), the place in the
    document and what."""

    file: str
    line: int | None
    loc: Loc
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {dotted(self.loc)}: {self.message}" if self.loc else f"{where}: {self.message}"


class FileProblem(LineageError):
    """A file users write that cannot be used; ``problem`` says where and why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


@dataclass(frozen=True)
class Document:
    """A YAML file as plain values, with the line of every key and item."""

    file: str
    values: Any
    lines: dict[Loc, int]

    def line_at(self, loc: Loc) -> int | None:
        """The line of ``loc``, else of the nearest enclosing place the file has."""
        return next((self.lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in self.lines),
                    None)

    def value_at(self, loc: Loc) -> Any:
        """The plain value at ``loc``; None where the document has nothing."""
        value = self.values
        for part in loc:
            try:
                value = value[part]
            except (KeyError, IndexError, TypeError):
                return None
        return value

    def problem(self, loc: Loc, message: str) -> FileProblem:
        return FileProblem(Problem(self.file, self.line_at(loc), loc, message))


def read_document(path: Path, model: type[M], what: str,
                  error: Callable[[str], LineageError]) -> M:
    """The YAML file at ``path`` as ``model``; ``error`` makes the exception that says
    ``PATH:LINE: KEY: what is wrong``."""
    try:
        return validate(read_yaml(path, what), model)
    except FileProblem as e:
        raise error(str(e.problem)) from None


def read_yaml(path: Path, what: str) -> Document:
    """The file at ``path`` as a Document; FileProblem if it cannot be read or is not YAML."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise FileProblem(Problem(str(path), None, (), f"cannot read {what}: {e}")) from e
    return parse_yaml(text, str(path), what)


def parse_yaml(text: str, file: str, what: str) -> Document:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise FileProblem(Problem(file, mark.line + 1 if mark else None, (),
                                  f"not YAML: {getattr(e, 'problem', None) or e}")) from e
    except RecursionError as e:
        raise FileProblem(Problem(file, None, (), f"nested too deeply to be {what}")) from e
    lines: dict[Loc, int] = {}
    try:
        values = {} if root is None else _plain(root, (), lines, set())
    except _Refused as e:
        raise FileProblem(Problem(file, e.line, (), e.reason)) from None
    return Document(file, values, lines)


def validate(document: Document, model: type[M]) -> M:
    """The document as ``model``; FileProblem with the first error, at its line."""
    try:
        return model.model_validate(document.values)
    except ValidationError as e:
        raise FileProblem(_first(e, document, model)) from None


_ALIAS = "anchors and aliases (*name) are not read here: write the value out"


class _Refused(Exception):
    def __init__(self, line: int, reason: str) -> None:
        self.line, self.reason = line, reason


def _plain(node: yaml.Node, loc: Loc, lines: dict[Loc, int], seen: set[int]) -> Any:
    """The node as plain values, the line of every key and item kept in ``lines``."""
    if id(node) in seen:
        raise _Refused(node.start_mark.line + 1, _ALIAS)
    seen.add(id(node))
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        found: dict[str, Any] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise _Refused(key.start_mark.line + 1, "keys are words")
            if key.value in found:
                raise _Refused(key.start_mark.line + 1, f"'{key.value}' is given twice")
            if id(value) in seen:
                raise _Refused(key.start_mark.line + 1, _ALIAS)
            found[key.value] = _plain(value, (*loc, key.value), lines, seen)
            lines[(*loc, key.value)] = key.start_mark.line + 1
        return found
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, (*loc, i), lines, seen) for i, item in enumerate(node.value)]
    return SafeConstructor().construct_object(node)


def _first(e: ValidationError, document: Document, model: type[BaseModel]) -> Problem:
    """The first error, at the line of the deepest part of the file it names."""
    # an unknown key first: a misspelt one explains the required one said missing
    err = sorted(e.errors(include_url=False), key=lambda x: x["type"] != "extra_forbidden")[0]
    loc: Loc = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
    message = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        allowed = _keys_at(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        message = (f"unknown key{f' (did you mean {close[0]}?)' if close else ''}; expected "
                   f"{', '.join(allowed)}")
    elif err["type"] == "missing":
        message = "required"
    elif err["type"] in ("model_type", "dict_type"):
        message = "expected a mapping of keys"
    elif err["type"] == "too_short":
        message = "give at least one"
    elif err["type"] == "literal_error":
        message = f"{err['input']!r}: expected {err.get('ctx', {}).get('expected', 'another value')}"
    elif err["type"].endswith("_type") and isinstance(err.get("input"), (str, int, float, bool)):
        message = f"{err['input']!r}: {message.replace('Input should be', 'expected')}"
    return Problem(document.file, document.line_at(loc), loc, message)


def _keys_at(model: type[BaseModel], loc: Loc) -> list[str]:
    """The keys (as written in the file: aliases) the model allows at ``loc``."""
    current: Any = model
    for part in loc:
        current = _inner(current, part)
        if current is None:
            return []
    current = _model_in(current)
    if current is None:
        return []
    return [field.alias or name for name, field in current.model_fields.items()]


def _inner(annotation: Any, part: str | int) -> Any:
    """What ``annotation`` holds at ``part``: a model's field, a list's item, a mapping's value."""
    model = _model_in(annotation) if isinstance(part, str) else None
    if model is not None:
        field = next((f for name, f in model.model_fields.items() if part in (name, f.alias)),
                     None)
        if field is not None:
            return field.annotation
    for arg in _args(annotation):
        origin = typing.get_origin(arg)
        if origin is list and isinstance(part, int):
            return typing.get_args(arg)[0]
        if origin is dict and isinstance(part, str):
            return typing.get_args(arg)[1]
    return None


def _args(annotation: Any) -> list[Any]:
    """The annotation and, for a union or ``Annotated``, what it is made of."""
    inner = [a for a in typing.get_args(annotation) if typing.get_origin(annotation) is not list
             and typing.get_origin(annotation) is not dict]
    return [annotation, *(x for a in inner for x in _args(a))]


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _model_in(annotation: Any) -> Any:
    """The model inside an annotation such as ``Pattern | None`` (not inside a list)."""
    return next((a for a in _args(annotation) if _is_model(a)), None)

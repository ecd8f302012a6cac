"""The files users write (lineage health's tiers and SLO files), read one way: YAML into a declared
pydantic model, unknown keys refused, each error said with the file, the line and the key.

YAML is composed into nodes first (each knows its line), then made plain values; an alias (``*x``)
is refused rather than copied, so that a few lines cannot expand into millions of values.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError
from yaml.constructor import SafeConstructor

from graph.errors import LineageError

M = TypeVar("M", bound=BaseModel)
Loc = tuple[str | int, ...]


class Strict(BaseModel):
    """A part of a file users write: unknown keys are refused, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def read_document(path: Path, model: type[M], what: str,
                  error: Callable[[str], LineageError]) -> M:
    """The YAML file at ``path`` as ``model``; ``error`` makes the exception that says
    ``PATH:LINE: KEY: what is wrong``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: cannot read {what}: {e}") from e
    return parse_document(text, str(path), model, what, error)


def parse_document(text: str, name: str, model: type[M], what: str,
                   error: Callable[[str], LineageError]) -> M:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark else name
        raise error(f"{where}: not YAML: {getattr(e, 'problem', None) or e}") from e
    except RecursionError as e:
        raise error(f"{name}: nested too deeply to be {what}") from e
    lines: dict[Loc, int] = {}
    try:
        plain = {} if root is None else _plain(root, (), lines, set())
    except _Refused as e:
        raise error(f"{name}:{e.line}: {e.reason}") from None
    try:
        return model.model_validate(plain)
    except ValidationError as e:
        raise error(_first(e, name, lines, model)) from None


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


def _first(e: ValidationError, name: str, lines: dict[Loc, int], model: type[BaseModel]) -> str:
    """The first error, at the line of the deepest part of the file it names."""
    # an unknown key first: a misspelt one explains the required one said missing
    err = sorted(e.errors(include_url=False), key=lambda x: x["type"] != "extra_forbidden")[0]
    loc: Loc = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
    line = next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), None)
    where = ".".join(f"[{p}]" if isinstance(p, int) else p for p in loc).replace(".[", "[")
    message = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        allowed = _fields_at(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        message = (f"unknown key{f' (did you mean {close[0]}?)' if close else ''}; expected "
                   f"{', '.join(allowed)}")
    elif err["type"] == "missing":
        message = "required"
    elif err["type"] in ("model_type", "dict_type"):
        message = "expected a mapping of keys"
    elif err["type"] == "too_short":
        message = "give at least one"
    return f"{name}:{line}: {where or 'the file'}: {message}" if line else f"{name}: {where}: {message}"


def _fields_at(model: type[BaseModel], loc: Loc) -> list[str]:
    """The keys the model allows at ``loc`` (a path of keys and indexes)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part) if _is_model(current) else None
        if field is None:
            return []
        current = _model_in(field.annotation)
    return list(current.model_fields) if _is_model(current) else []


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _model_in(annotation: Any) -> Any:
    """The model inside an annotation such as ``list[Pattern]`` or ``Pattern | None``."""
    if _is_model(annotation):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None

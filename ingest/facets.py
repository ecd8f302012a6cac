"""Facets on nodes: each kept as the producer sent it (capped JSON), and those the questions
read lifted into properties as well.

Events reach here already scrubbed of secrets (``ingest.secrets``, applied by ``validate``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ingest.codec import canonical


def capped_json(value: Any, max_bytes: int) -> str:
    """Canonical JSON of a facet (sorted keys, compact: the same text whatever order the keys
    arrived in), replaced by a small summary when longer than ``max_bytes``."""
    encoded = canonical(value)
    if len(encoded) <= max_bytes:
        return encoded.decode("utf-8")
    keys = sorted(value) if isinstance(value, dict) else []
    return json.dumps({"_truncated": True, "_bytes": len(encoded), "_keys": keys[:50]})


def facet_props(facets: dict[str, Any] | None, max_bytes: int) -> dict[str, Any]:
    """Properties ``facet.<name>``: every facet as the producer sent it (those lifted into
    properties too: Marquez's answers serve them whole, with their ``_producer``); a deleted one
    maps to None."""
    return {f"facet.{key}": None if _deleted(facet) else capped_json(facet, max_bytes)
            for key, facet in (facets or {}).items()}


def _deleted(facet: Any) -> bool:
    return isinstance(facet, dict) and facet.get("_deleted") is True


def live(facets: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    """The facet ``key`` if present and not deleted."""
    facet = (facets or {}).get(key)
    return facet if isinstance(facet, dict) and not _deleted(facet) else None


def deleted(facets: dict[str, Any] | None, key: str) -> bool:
    """True when the event removes facet ``key`` with ``{"_deleted": true}``."""
    return _deleted((facets or {}).get(key))


def lift(facets: dict[str, Any] | None, key: str, props: dict[str, Any],
         extract: Callable[[dict[str, Any]], dict[str, Any]], names: tuple[str, ...]) -> None:
    """Set the properties ``extract`` derives from facet ``key`` when it is live; when the event
    deletes the facet, set each of ``names`` to None so the properties are removed."""
    if not facets or key not in facets:  # the common case, kept cheap: most facets are absent
        return
    facet = live(facets, key)
    if facet is not None:
        props.update(extract(facet))
    elif deleted(facets, key):
        props.update(dict.fromkeys(names))


def flatten(fields_: list[dict[str, Any]], prefix: str = ""
            ) -> list[tuple[str, str | None, str | None]]:
    """A schema facet's fields, nested ones as ``parent.child``: (name, type, description)."""
    flat = []
    for f in fields_:
        name = prefix + f["name"] if prefix else f["name"]
        flat.append((name, f.get("type"), f.get("description")))
        nested = f.get("fields")
        if nested:  # most fields have none: no call for them (a schema's fields add up)
            flat.extend(flatten(nested, f"{name}."))
    return flat


def owners(facet: dict[str, Any]) -> list[str]:
    """An ownership facet's owners as ``type:name`` (or the name alone)."""
    return [f"{o['type']}:{o['name']}" if o.get("type") else o["name"]
            for o in facet.get("owners") or []]


FIELD_TAG = "\x1f"
"""Separates a field's name from its tag in a dataset's ``fieldTags`` (``email<US>PII``)."""


def tag_name(key: object, value: object) -> str:
    """A tags-facet entry as one name: the key alone when the value only says "yes" (``pii`` /
    ``true``), else ``key:value`` (``classification:PII``)."""
    shown = "" if value is None else str(value)
    return str(key) if shown.lower() in ("", "true") or shown == str(key) else f"{key}:{shown}"


def tags(facet: dict[str, Any]) -> list[str]:
    """A tags facet's tags of the dataset (or job, or run) itself: entries without ``field``."""
    return sorted({tag_name(t.get("key"), t.get("value")) for t in facet.get("tags") or []
                   if isinstance(t, dict) and not t.get("field")})


def field_tags(facet: dict[str, Any]) -> list[str]:
    """A dataset tags facet's per-field tags (entries with ``field``) as ``field<US>tag``."""
    return sorted({f"{t['field']}{FIELD_TAG}{tag_name(t.get('key'), t.get('value'))}"
                   for t in facet.get("tags") or [] if isinstance(t, dict) and t.get("field")})

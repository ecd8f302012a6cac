"""Properties of the graph's nodes that are the loader's bookkeeping, not facts about the data.

``events`` lists the digests of the events a node was loaded from (to count re-sent events as
duplicates); ``@name`` is the stamp (event time, then digest) of the value of property ``name``,
which decides which of two events sets it (docs/graph-model.md, "The latest value of a
property"). Answers leave them out.
"""

from __future__ import annotations

from typing import Any

STAMP_PREFIX = "@"
# propsTime: graphs loaded before the stamps; declaredTargets: what lineage facets declared;
# declarations: the stamps of a dataset's DatasetEvents (served as its versions)
HIDDEN = frozenset({"events", "propsTime", "declaredTargets", "declarations"})


def public(props: dict[str, Any]) -> dict[str, Any]:
    """A node's properties without the bookkeeping ones."""
    return {k: v for k, v in props.items() if k not in HIDDEN and not k.startswith(STAMP_PREFIX)}

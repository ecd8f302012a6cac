"""Aliases declared by users: two names of one table that no producer links.

``lineage alias CANONICAL = OTHER`` is an OpenLineage ``DatasetEvent`` for the canonical name with a
``symlinks`` facet naming the other, identifier type ``ALIAS``: what a producer would send if it
could be told. It goes through the same path as every event (validation, the event log, the
worker's rules for symlinks), so it is stored in the graph, kept by ``lineage replay`` and
honoured by every question exactly like a producer's symlink (docs/graph-model.md, "Symlinks").
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

PRODUCER = "https://github.com/lineage-graph/lineage-graph/blob/main/ingest/aliases.py"
DATASET_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"
SYMLINKS = "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet"
TYPE = "ALIAS"  # the identifier type of a declared alias (producers send TABLE, LOCATION, …)


def alias_event(namespace: str, name: str, alias_namespace: str, alias_name: str,
                when: datetime | None = None) -> dict[str, Any]:
    """The DatasetEvent declaring ``alias_namespace:alias_name`` another name of
    ``namespace:name`` (the canonical one)."""
    for what, value in (("namespace", namespace), ("name", name), ("alias namespace", alias_namespace),
                        ("alias name", alias_name)):
        if not value.strip():
            raise ValueError(f"the {what} is empty")
    if (namespace, name) == (alias_namespace, alias_name):
        raise ValueError(f"{namespace}:{name} cannot be an alias of itself")
    stamp = (when or datetime.now(UTC)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {
        "eventTime": stamp,
        "producer": PRODUCER,
        "schemaURL": DATASET_EVENT,
        "dataset": {
            "namespace": namespace,
            "name": name,
            "facets": {"symlinks": {
                "_producer": PRODUCER, "_schemaURL": SYMLINKS,
                "identifiers": [{"namespace": alias_namespace, "name": alias_name, "type": TYPE}],
            }},
        },
    }

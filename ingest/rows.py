"""The rows of a batch, by the loader's write they go to (filled by ingest.transform)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class Rows:
    """Rows for each write of the loader; lists of plain dicts ready for ``UNWIND``."""

    jobs: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    parents: list[dict[str, Any]] = field(default_factory=list)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    columns: list[dict[str, Any]] = field(default_factory=list)
    reads: list[dict[str, Any]] = field(default_factory=list)
    writes: list[dict[str, Any]] = field(default_factory=list)
    job_reads: list[dict[str, Any]] = field(default_factory=list)
    job_writes: list[dict[str, Any]] = field(default_factory=list)
    column_edges: list[dict[str, Any]] = field(default_factory=list)
    dataset_edges: list[dict[str, Any]] = field(default_factory=list)
    symlinks: list[dict[str, Any]] = field(default_factory=list)
    renames: list[dict[str, Any]] = field(default_factory=list)
    schemas: list[dict[str, Any]] = field(default_factory=list)
    """A written schema as a whole: {namespace, dataset, digest, columns (names)}; see ingest.plan."""
    lineages: list[dict[str, Any]] = field(default_factory=list)
    """A job's column lineage in one event as a whole: {jobNamespace, jobName, runId, digest,
    edges (keys)}; see ingest.plan."""
    flows: list[dict[str, Any]] = field(default_factory=list)
    """Explicit lineage with a job at one end or both (ingest.explicit_lineage)."""
    produced: list[dict[str, Any]] = field(default_factory=list)
    """Fields a job makes with no tracked source (ingest.explicit_lineage)."""
    declarations: list[dict[str, Any]] = field(default_factory=list)
    """An event's lineage facet: its job or dataset, and what it declared (ingest.explicit_lineage)."""

    def extend(self, other: Rows) -> None:
        for name in KINDS:
            getattr(self, name).extend(getattr(other, name))


KINDS: tuple[str, ...] = tuple(f.name for f in fields(Rows))
"""The names of the row lists, once (``dataclasses.fields`` is slow for a per-event call)."""

"""The rows of a batch, by kind: each kind declared once (what makes two rows one, what merges
across rows, the Cypher file that writes them), filled by ingest.transform, merged by
ingest.combine, written by ingest.load."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]
"""A row as the queries take it (``UNWIND $rows``): plain values, times as datetimes until
ingest.version_members.wire makes them ISO text."""


@dataclass
class Rows:
    """A batch's rows, one list per kind of :data:`KINDS`."""

    datasets: list[Row] = field(default_factory=list)
    jobs: list[Row] = field(default_factory=list)
    runs: list[Row] = field(default_factory=list)
    parents: list[Row] = field(default_factory=list)
    reads: list[Row] = field(default_factory=list)
    writes: list[Row] = field(default_factory=list)
    job_reads: list[Row] = field(default_factory=list)
    job_writes: list[Row] = field(default_factory=list)
    columns: list[Row] = field(default_factory=list)
    column_edges: list[Row] = field(default_factory=list)
    dataset_edges: list[Row] = field(default_factory=list)
    flows: list[Row] = field(default_factory=list)
    """Explicit lineage with a job at one end or both (ingest.explicit_lineage)."""
    produced: list[Row] = field(default_factory=list)
    """Fields a job makes with no tracked source (ingest.explicit_lineage)."""
    declarations: list[Row] = field(default_factory=list)
    """An event's lineage facet: its job or dataset, and what it declared (ingest.explicit_lineage)."""
    symlinks: list[Row] = field(default_factory=list)
    renames: list[Row] = field(default_factory=list)
    schemas: list[Row] = field(default_factory=list)
    """A written schema as a whole: {namespace, dataset, digest, columns (names)}; see ingest.load."""
    lineages: list[Row] = field(default_factory=list)
    """A job's column lineage in one event as a whole: {jobNamespace, jobName, runId, digest,
    edges (keys)}; see ingest.load."""

    def touched(self) -> set[tuple[str, str]]:
        """Every dataset (namespace, name) these rows write, read, rename or name in an edge:
        what a batch could have changed the lineage of (impact.policy.watch)."""
        found = {(r["namespace"], r["name"]) for kind in ("datasets", "reads", "writes",
                                                          "job_reads", "job_writes", "symlinks",
                                                          "renames")
                 for r in getattr(self, kind)}
        found |= {(r["aliasNamespace"], r["aliasName"]) for r in self.symlinks}
        found |= {(r["oldNamespace"], r["oldName"]) for r in self.renames}
        found |= {(r["namespace"], r["dataset"]) for r in self.columns}
        for r in self.column_edges:
            found |= {(r["outNamespace"], r["outDataset"]), (r["inNamespace"], r["inDataset"])}
        for r in self.dataset_edges:
            found |= {(r["outNamespace"], r["outDataset"]), (r["inNamespace"], r["inName"])}
        for r in self.flows:
            found |= {(r[f"{end}Namespace"], r[f"{end}Name"]) for end in ("out", "in")
                      if r[f"{end}Kind"] == "DATASET"}
        return found

    def handoffs(self) -> set[tuple[str, str]]:
        """The jobs (namespace, name) at an end of an explicit lineage edge: nodes of lineage
        the batch could have joined to others (impact.policy.watch)."""
        return {(r[f"{end}Namespace"], r[f"{end}Name"]) for r in self.flows
                for end in ("out", "in") if r[f"{end}Kind"] == "JOB"}

    def extend(self, other: Rows) -> None:
        for kind in KINDS:
            getattr(self, kind.name).extend(getattr(other, kind.name))


@dataclass(frozen=True)
class RowKind:
    """One kind of row."""

    name: str
    """The list of :class:`Rows` that holds them."""
    key: tuple[str, ...]
    """The fields that make rows one node or edge: ingest.combine merges rows of one key."""
    merged: tuple[str, ...] = ()
    """Fields merged across rows (``props`` by stamp, ``digests`` as a list, flags by
    ingest.combine.ANY, ``received`` as the latest, the others as sorted sets); every other field
    takes the newest value."""
    query: str | None = None
    """The Cypher file that writes them; None for the versions (written through ingest.load)."""
    first: bool = False
    """Written in the plan's first round (nodes, and the edges of runs and jobs); the others in
    the second, after the versions are touched."""


KINDS: tuple[RowKind, ...] = (
    # the first round, in this order
    RowKind("datasets", ("namespace", "name"), ("props", "digests", "received"), "ingest/datasets",
            True),
    RowKind("jobs", ("namespace", "name"), ("props", "digests", "received"), "ingest/jobs", True),
    RowKind("runs", ("runId",), ("props", "digests"), "ingest/runs", True),
    RowKind("parents", ("runId", "parentRunId"), (), "ingest/parents", True),
    RowKind("reads", ("runId", "namespace", "name"), (), "ingest/reads", True),
    RowKind("writes", ("runId", "namespace", "name"), ("trainedOn", "lineage"), "ingest/writes",
            True),
    RowKind("job_reads", ("jobNamespace", "jobName", "namespace", "name"), (),
            "ingest/job_reads", True),
    RowKind("job_writes", ("jobNamespace", "jobName", "namespace", "name"), (),
            "ingest/job_writes", True),
    # the second round, in this order: columns before the column edges that MATCH them, fine
    # dataset edges before the coarse refresh
    RowKind("columns", ("namespace", "dataset", "name", "written"), (), "ingest/columns"),
    RowKind("column_edges", ("outNamespace", "outDataset", "outColumn", "inNamespace",
                             "inDataset", "inColumn", "jobNamespace", "jobName", "type",
                             "subtype"), ("observed", "explicit", "lineages"),
            "ingest/column_edges"),
    RowKind("dataset_edges", ("outNamespace", "outDataset", "inNamespace", "inName",
                              "jobNamespace", "jobName"),
            ("subtypes", "coarse", "explicit", "observed"), "ingest/dataset_edges"),
    RowKind("flows", ("outKind", "outNamespace", "outName", "inKind", "inNamespace", "inName",
                      "jobNamespace", "jobName"), ("subtypes", "observed"), "ingest/flows"),
    RowKind("produced", ("outNamespace", "outDataset", "outColumn", "byNamespace", "byName",
                         "jobNamespace", "jobName", "type", "subtype"), ("observed",),
            "ingest/produced"),
    RowKind("declarations", ("kind", "namespace", "name"), ("targets",), "ingest/declarations"),
    RowKind("symlinks", ("namespace", "name", "aliasNamespace", "aliasName", "type"), (),
            "ingest/symlinks"),
    RowKind("renames", ("namespace", "name", "oldNamespace", "oldName"), (), "ingest/renames"),
    # versions: written whole by ingest/schemas and ingest/lineages (ingest.load)
    RowKind("schemas", ("namespace", "dataset", "digest")),
    RowKind("lineages", ("jobNamespace", "jobName", "digest")),
)
"""Every kind of row, in the order the plan writes them."""

KIND: dict[str, RowKind] = {kind.name: kind for kind in KINDS}

"""The rows of a batch, by kind: each kind declared once (what makes two rows one, what merges
across rows, the Cypher file that writes them), filled by ingest.transform, merged by
ingest.combine, written by ingest.load."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from graph.errors import QueryLibraryError
from graph.queries import library

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

    def unprinted(self) -> set[tuple[str, str]]:
        """The datasets these rows give lineage that neither a dataset's nor a job's print tells
        (impact.policy.prints): explicit and declared lineage (the lineage facets), job-less
        column lineage (a DatasetEvent's), fields a job makes from nothing, symlinks and renames.
        A job's declaration counts for every dataset the rows touch."""
        if any(r["kind"] == "job" for r in self.declarations):
            return self.touched()
        found = {(r["namespace"], r["name"]) for r in self.declarations}
        for r in self.column_edges:
            if r.get("declared") is not None or r.get("explicit") or not r["jobName"]:
                found |= {(r["outNamespace"], r["outDataset"]), (r["inNamespace"], r["inDataset"])}
        for r in self.dataset_edges:
            if r.get("declared") is not None or r.get("explicit") or not r["jobName"]:
                found |= {(r["outNamespace"], r["outDataset"]), (r["inNamespace"], r["inName"])}
        for r in self.flows:
            found |= {(r[f"{end}Namespace"], r[f"{end}Name"]) for end in ("out", "in")
                      if r[f"{end}Kind"] == "DATASET"}
        found |= {(r["outNamespace"], r["outDataset"]) for r in self.produced}
        for r in self.symlinks:
            found |= {(r["namespace"], r["name"]), (r["aliasNamespace"], r["aliasName"])}
        for r in self.renames:
            found |= {(r["namespace"], r["name"]), (r["oldNamespace"], r["oldName"])}
        return found

    def jobs_named(self) -> set[tuple[str, str]]:
        """Every job (namespace, name) these rows write or run: the jobs whose edges the batch
        may have retired or restored (impact.policy.prints)."""
        return ({(r["namespace"], r["name"]) for r in self.jobs}
                | {(r["jobNamespace"], r["jobName"]) for r in self.runs})

    def handoffs(self) -> set[tuple[str, str]]:
        """The jobs (namespace, name) at an end of an explicit lineage edge: nodes of lineage
        the batch could have joined to others (impact.policy.watch)."""
        return {(r[f"{end}Namespace"], r[f"{end}Name"]) for r in self.flows
                for end in ("out", "in") if r[f"{end}Kind"] == "JOB"}

    def extend(self, other: Rows) -> None:
        for kind in KINDS:
            getattr(self, kind.name).extend(getattr(other, kind.name))


LOCAL = ("time", "evt")
"""Fields every kind carries only until it is written: the event's time and stamp order rows in
ingest.combine (ingest.version_members.wire drops them; columns keep ``evt``, their stamp)."""


@dataclass(frozen=True)
class RowKind:
    """One kind of row."""

    name: str
    """The list of :class:`Rows` that holds them."""
    key: tuple[str, ...]
    """The fields that make rows one node or edge: ingest.combine merges rows of one key."""
    fields: tuple[str, ...]
    """Every field the Cypher files that take these rows read (``row.x``): the one list of what
    a row of this kind holds when it is written. The query loader's ``row_fields`` of each file
    of :attr:`readers` must be among them (checked by :func:`undeclared`)."""
    merged: tuple[str, ...] = ()
    """Fields merged across rows (``props`` by stamp, ``digests`` as a list, flags by
    ingest.combine.ANY, ``received`` as the latest, the others as sorted sets); every other field
    takes the newest value."""
    query: str | None = None
    """The Cypher file that writes them; None for the versions (written through ingest.load)."""
    first: bool = False
    """Written in the plan's first round (nodes, and the edges of runs and jobs); the others in
    the second, after the versions are touched."""
    local: tuple[str, ...] = LOCAL
    """Fields the rows carry only until they are written (see :data:`LOCAL`)."""
    also_read_by: tuple[str, ...] = ()
    """Other Cypher files that take rows of this kind (a key lookup, a version's write)."""

    @property
    def readers(self) -> tuple[str, ...]:
        return ((self.query,) if self.query else ()) + self.also_read_by


def _f(names: str) -> tuple[str, ...]:
    return tuple(names.split())


_SEEN = "firstSeen lastSeen "
_NODE = _SEEN + "namespace name props digests received stamp stamps"
_EDGE_OF_RUN = _SEEN + "runId namespace name"
_EDGE_OF_JOB = _SEEN + "jobNamespace jobName namespace name"
_LINEAGE_EDGE = (_SEEN + "outNamespace outDataset outColumn jobNamespace jobName runId type "
                 "subtype masking description observed declared ")

COLUMN_EDGE_PARTS = ("outNamespace", "outDataset", "outColumn", "inNamespace", "inDataset",
                     "inColumn", "type", "subtype", "masking", "description")
"""A column edge as transform keeps it for a job's lineage version (a tuple: ingest.column_lineage
.Compact): these fields of its row, in this order. The first eight identify it in the job's
lineage (ingest.transform.edge_key). The rows are built from the tuples by hand where they are
made (ingest.column_lineage, ingest.version_members.edge_rows: zipping the names costs 60% more
per edge, docs/benchmarks.md); tests/unit/test_row_kinds.py checks them against these names."""

KINDS: tuple[RowKind, ...] = (
    # the first round, in this order
    RowKind("datasets", ("namespace", "name"), _f(_NODE + " declarations"),
            ("props", "digests", "received", "declarations"), "ingest/datasets", True),
    RowKind("jobs", ("namespace", "name"), _f(_NODE), ("props", "digests", "received"),
            "ingest/jobs", True),
    RowKind("runs", ("runId",), _f(_SEEN + "runId jobNamespace jobName props digests stamp stamps "
                                   "rank state stateStamp stateTime stateTimeOriginal stateTimes"),
            ("props", "digests"), "ingest/runs", True),
    RowKind("parents", ("runId", "parentRunId"),
            _f(_SEEN + "runId parentRunId parentJobNamespace parentJobName rootRunId"), (),
            "ingest/parents", True),
    RowKind("reads", ("runId", "namespace", "name"), _f(_EDGE_OF_RUN + " version rowCount bytes"),
            (), "ingest/reads", True),
    RowKind("writes", ("runId", "namespace", "name"),
            _f(_EDGE_OF_RUN + " version rowCount bytes trainedOn lineage"), ("trainedOn", "lineage"),
            "ingest/writes", True),
    RowKind("job_reads", ("jobNamespace", "jobName", "namespace", "name"), _f(_EDGE_OF_JOB), (),
            "ingest/job_reads", True),
    RowKind("job_writes", ("jobNamespace", "jobName", "namespace", "name"), _f(_EDGE_OF_JOB), (),
            "ingest/job_writes", True),
    # the second round, in this order: columns before the column edges that MATCH them, fine
    # dataset edges before the coarse refresh
    RowKind("columns", ("namespace", "dataset", "name", "written"),
            _f(_SEEN + "namespace dataset name written type description stamp evt typed"),
            ("typed",),
            "ingest/columns", local=("time",), also_read_by=("ingest/column_keys",)),
    RowKind("column_edges", ("outNamespace", "outDataset", "outColumn", "inNamespace",
                             "inDataset", "inColumn", "jobNamespace", "jobName", "type",
                             "subtype"),
            _f(_LINEAGE_EDGE + "inNamespace inDataset inColumn explicit lineages stamp"),
            ("observed", "explicit", "lineages"), "ingest/column_edges"),
    RowKind("dataset_edges", ("outNamespace", "outDataset", "inNamespace", "inName",
                              "jobNamespace", "jobName"),
            _f(_SEEN + "outNamespace outDataset inNamespace inName jobNamespace jobName runId "
                       "subtypes coarse explicit observed declared"),
            ("subtypes", "coarse", "explicit", "observed"), "ingest/dataset_edges"),
    RowKind("flows", ("outKind", "outNamespace", "outName", "inKind", "inNamespace", "inName",
                      "jobNamespace", "jobName"),
            _f(_SEEN + "outKind outNamespace outName inKind inNamespace inName jobNamespace "
                       "jobName runId subtypes observed declared"),
            ("subtypes", "observed"), "ingest/flows"),
    RowKind("produced", ("outNamespace", "outDataset", "outColumn", "byNamespace", "byName",
                         "jobNamespace", "jobName", "type", "subtype"),
            _f(_LINEAGE_EDGE + "byNamespace byName"), ("observed",), "ingest/produced"),
    # ingest.combine gives every row its seen times; a declaration's are not kept
    RowKind("declarations", ("kind", "namespace", "name"),
            _f(_SEEN + "kind namespace name declared targets"), ("targets",),
            "ingest/declarations"),
    RowKind("symlinks", ("namespace", "name", "aliasNamespace", "aliasName", "type"),
            _f(_SEEN + "namespace name aliasNamespace aliasName type"), (), "ingest/symlinks"),
    RowKind("renames", ("namespace", "name", "oldNamespace", "oldName"),
            _f(_SEEN + "namespace name oldNamespace oldName"), (), "ingest/renames"),
    # versions: written whole by ingest/schemas and ingest/lineages (ingest.load), which gives
    # them ``force`` and a schema its ``columnNames``; ``columns``, ``flat``, ``edges`` and
    # ``compact`` are what ingest.load makes their members' rows from
    RowKind("schemas", ("namespace", "dataset", "digest"),
            _f(_SEEN + "namespace dataset digest columnNames force"),
            local=(*LOCAL, "columns", "flat"), also_read_by=("ingest/schemas",)),
    RowKind("lineages", ("jobNamespace", "jobName", "digest"),
            _f(_SEEN + "jobNamespace jobName runId digest force"),
            local=(*LOCAL, "edges", "compact"), also_read_by=("ingest/lineages",)),
)
"""Every kind of row, in the order the plan writes them."""


@lru_cache(maxsize=1)
def check_library() -> None:
    """Raise QueryLibraryError at the first ``row.x`` of a Cypher file that the kind of rows it
    takes does not declare: a field renamed on one side only fails at the first batch, by name
    and line, not as a property silently left null."""
    fields = {name: named.row_fields for name, named in library().items()}
    for kind in KINDS:
        for file, name, line in undeclared(kind, fields):
            raise QueryLibraryError(file, line, f"reads row.{name}, which rows of kind "
                                                f"{kind.name!r} do not declare (ingest/rows.py)")


def undeclared(kind: RowKind, row_fields: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    """The (file, field, line) of each ``row.x`` a reader of ``kind`` names that the kind does
    not declare; ``row_fields`` maps a Cypher file to its fields (graph.queries.NamedQuery)."""
    return [(reader, name, line) for reader in kind.readers
            for name, line in row_fields[reader].items() if name not in kind.fields]


KIND: dict[str, RowKind] = {kind.name: kind for kind in KINDS}

"""Explicit lineage (the lineage facets of 2026) as edge rows.

``job.facets.lineage`` (LineageJobFacet: entries, each a target dataset or job with its inputs and
per-field inputs) on a RunEvent or JobEvent, and ``dataset.facets.lineage`` (LineageDatasetFacet:
the dataset's own inputs and fields) on a DatasetEvent. When an event carries one, it is the
event's whole lineage between tracked entities: no column lineage facet and no inputs x outputs
are read for it. The rules: docs/graph-model.md, "Explicit lineage".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ingest.column_lineage import transformations
from ingest.facets import flatten, live
from ingest.rows import Rows

DATASET, JOB = "DATASET", "JOB"


def lineage_facet(raw: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """The event's lineage facet (on the job of a RunEvent or JobEvent, on the dataset of a
    DatasetEvent), or None."""
    holder = raw.get("dataset") if kind == "DatasetEvent" else raw.get("job")
    return live((holder or {}).get("facets"), "lineage")


def target_key(kind: str, namespace: str, name: str) -> str:
    """How a declaration names the node an edge starts at (``D`` dataset or ``J`` job)."""
    return f"{'D' if kind == DATASET else 'J'}\t{namespace}\t{name}"


class _Edges:
    """The rows of one event's explicit lineage."""

    def __init__(self, raw: dict[str, Any], kind: str, job: tuple[str, str] | None,
                 run_id: str | None, t: datetime, declared: str | None, rows: Rows) -> None:
        self.raw, self.own, self.rows = raw, job, rows
        self.base = {"jobNamespace": job[0] if job else "", "jobName": job[1] if job else "",
                     "runId": run_id, "time": t, "declared": declared,
                     "observed": declared is None}
        self.targets: set[str] = set()
        self.schemas = {(d["namespace"], d["name"]): d for d in (
            [raw["dataset"]] if kind == "DatasetEvent" else raw.get("outputs") or [])}

    def entry(self, entry: dict[str, Any]) -> None:
        if _kind(entry) == DATASET:
            self.dataset_target(entry["namespace"], entry["name"], entry)
            return
        target = _job_ref(entry) or self.own
        if target is None:  # the event's own job on a DatasetEvent: there is none
            return
        for inp in entry.get("inputs") or []:
            if _kind(inp) == DATASET:
                self.flow(JOB, target, DATASET, (inp["namespace"], inp["name"]), inp)
                self.rows.job_reads.append({
                    "namespace": inp["namespace"], "name": inp["name"], "time": self.base["time"],
                    "jobNamespace": target[0], "jobName": target[1]})
            else:
                source = _job_ref(inp) or self.own
                if source is not None and source != target:
                    self.flow(JOB, target, JOB, source, inp)

    def dataset_target(self, ns: str, name: str, entry: dict[str, Any]) -> None:
        fields_ = entry.get("fields") or {}
        schema = live((self.schemas.get((ns, name)) or {}).get("facets"), "schema") or {}
        columns = list(dict.fromkeys(
            [c[0] for c in flatten(schema.get("fields") or [])] + list(fields_)))
        target = (ns, name)
        self.targets.add(target_key(DATASET, ns, name))
        if self.own is not None:
            io = {"namespace": ns, "name": name, "time": self.base["time"]}
            self.rows.job_writes.append({**io, "jobNamespace": self.own[0],
                                         "jobName": self.own[1]})
            if self.base["runId"] is not None:
                self.rows.writes.append({**io, "runId": self.base["runId"], "version": None,
                                         "rowCount": None, "bytes": None})
        for inp in entry.get("inputs") or []:
            if _kind(inp) == JOB:
                source = _job_ref(inp)  # the event's own job: already implied by the event
                if source is not None:
                    self.flow(DATASET, target, JOB, source, inp)
            elif inp.get("field"):  # a dataset-wide operation: it affects every field
                for col in columns:
                    self.column(target, col, inp)
                self.dataset(target, inp, fine=True)
            else:
                self.dataset(target, inp, fine=False)
        for col, spec in fields_.items():
            for inp in spec.get("inputs") or []:
                if _kind(inp) == JOB:
                    self.produced(target, col, _job_ref(inp) or self.own, inp)
                elif inp.get("field"):
                    self.column(target, col, inp)
                    self.dataset(target, inp, fine=True)
                else:  # partial: this field comes from that dataset, which field is unknown
                    self.dataset(target, inp, fine=False)

    def column(self, target: tuple[str, str], col: str, inp: dict[str, Any]) -> None:
        for kind, subtype, masking, description in transformations(inp, {}):
            self.rows.column_edges.append({
                **self.base, "outNamespace": target[0], "outDataset": target[1], "outColumn": col,
                "inNamespace": inp["namespace"], "inDataset": inp["name"], "inColumn": inp["field"],
                "type": kind, "subtype": subtype, "masking": masking, "description": description,
                "explicit": True})

    def dataset(self, target: tuple[str, str], inp: dict[str, Any], fine: bool) -> None:
        subtypes = sorted({s for _, s, _, _ in transformations(inp, {}) if s != "UNKNOWN"})
        self.rows.dataset_edges.append({
            **self.base, "outNamespace": target[0], "outDataset": target[1],
            "inNamespace": inp["namespace"], "inName": inp["name"], "subtypes": subtypes,
            "coarse": not fine, "explicit": True})

    def flow(self, out_kind: str, out: tuple[str, str], in_kind: str, source: tuple[str, str],
             inp: dict[str, Any]) -> None:
        """An edge with a job at one end or both (a hand-off no tracked dataset records)."""
        self.targets.add(target_key(out_kind, *out))
        subtypes = sorted({s for _, s, _, _ in transformations(inp, {}) if s != "UNKNOWN"})
        self.rows.flows.append({
            **self.base, "outKind": out_kind, "outNamespace": out[0], "outName": out[1],
            "inKind": in_kind, "inNamespace": source[0], "inName": source[1],
            "subtypes": subtypes})

    def produced(self, target: tuple[str, str], col: str, job: tuple[str, str] | None,
                 inp: dict[str, Any]) -> None:
        """A field the job makes with no tracked source (a ``sum()`` over an API's answer)."""
        if job is None:
            return
        for kind, subtype, masking, description in transformations(inp, {}):
            self.rows.produced.append({
                **self.base, "outNamespace": target[0], "outDataset": target[1], "outColumn": col,
                "byNamespace": job[0], "byName": job[1], "type": kind, "subtype": subtype,
                "masking": masking, "description": description})


def explicit_lineage(raw: dict[str, Any], kind: str, job: tuple[str, str] | None,
                     run_id: str | None, t: datetime, event_stamp: str, rows: Rows) -> bool:
    """Append the rows of the event's lineage facet; False when it has none (then column lineage,
    else inputs x outputs, state the edges).

    A RunEvent's lineage adds to what its job's runs observed; a JobEvent's (the job's declared
    lineage) and a DatasetEvent's (the dataset's derivation) replace the previous declaration of
    their job or dataset: their rows carry ``declared`` (the event's stamp) and a ``declarations``
    row names what they declared, for ingest/declarations to retire the older ones."""
    facet = lineage_facet(raw, kind)
    if facet is None:
        return False
    declared = None if kind == "RunEvent" else event_stamp
    edges = _Edges(raw, kind, job, run_id, t, declared, rows)
    if kind == "DatasetEvent":
        ds = raw["dataset"]
        edges.dataset_target(ds["namespace"], ds["name"], facet)
        owner = ("dataset", ds["namespace"], ds["name"])
    else:
        assert job is not None
        for entry in facet.get("entries") or []:
            edges.entry(entry)
        owner = ("job", *job)
    rows.declarations.append({"kind": owner[0], "namespace": owner[1], "name": owner[2],
                              "time": t, "declared": declared,
                              "targets": sorted(edges.targets) if declared else []})
    return True


def _kind(item: dict[str, Any]) -> str:
    return str(item.get("type") or DATASET).upper()


def _job_ref(item: dict[str, Any]) -> tuple[str, str] | None:
    """An identified job, or None for the event's own job (no namespace and name)."""
    if item.get("namespace") and item.get("name"):
        return (item["namespace"], item["name"])
    return None

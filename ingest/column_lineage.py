"""Column lineage of an output (the ``columnLineage`` facet) as column and dataset edge rows.

Only what the producer reported: docs/graph-model.md, "Transformations and masking".
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ingest.facets import flatten, live

INDIRECT_SUBTYPES = frozenset({"FILTER", "JOIN", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL"})


# A column edge as transform keeps it for a job's lineage version: the fields
# ingest.rows.COLUMN_EDGE_PARTS names, in that order (ingest.load makes rows of those it writes).
Compact = tuple[str, str, str, str, str, str, str, str, bool, "str | None"]


def column_lineage(ds: dict[str, Any], job_ref: tuple[str, str], run_id: str | None,
                   t: datetime, column_edges: list[dict[str, Any]],
                   dataset_edges: list[dict[str, Any]], compact: list[Compact] | None = None
                   ) -> None:
    """Column edges of an output: one per input field and transformation of each output field,
    and for each dataset-wide input field (``columnLineage.dataset``: a filter, join or group-by
    column that affects the whole output) one to every output field; one dataset edge per input
    dataset named. With ``compact`` the column edges go there as tuples, not rows: most of a
    batch's belong to versions Neo4j only touches (ingest.load), whose rows are never made."""
    lineage = live(ds.get("facets"), "columnLineage")
    if lineage is None:
        return
    out_ns, out_name = ds["namespace"], ds["name"]
    base = {"outNamespace": out_ns, "outDataset": out_name, "jobNamespace": job_ref[0],
            "jobName": job_ref[1], "runId": run_id, "time": t}
    sources: dict[tuple[str, str], set[str]] = {}
    fields_ = lineage.get("fields") or {}

    def edge(out_col: str, field_: dict[str, Any], spec: dict[str, Any]) -> None:
        src = (field_["namespace"], field_["name"])
        for kind, subtype, masking, description in transformations(field_, spec):
            if compact is not None:
                compact.append((out_ns, out_name, out_col, src[0], src[1], field_["field"], kind,
                                subtype, masking, description))
            else:
                column_edges.append({
                    **base, "outColumn": out_col, "inNamespace": src[0], "inDataset": src[1],
                    "inColumn": field_["field"], "type": kind, "subtype": subtype,
                    "masking": masking, "description": description})
            sources.setdefault(src, set()).add(subtype)

    for out_col, spec in fields_.items():
        for field_ in spec.get("inputFields") or []:
            edge(out_col, field_, spec)
    wide = lineage.get("dataset") or []
    if wide:
        schema = live(ds.get("facets"), "schema") or {}
        outputs = dict.fromkeys([c[0] for c in flatten(schema.get("fields") or [])] + list(fields_))
        for field_ in wide:
            for out_col in outputs:
                edge(out_col, field_, {})
            src = (field_["namespace"], field_["name"])
            for _, subtype, _, _ in transformations(field_, {}):
                sources.setdefault(src, set()).add(subtype)
    for (ns, name), subtypes in sorted(sources.items()):
        dataset_edges.append({**base, "inNamespace": ns, "inName": name,
                              "subtypes": sorted(subtypes), "coarse": False, "explicit": False})


def transformations(field_: dict[str, Any], spec: dict[str, Any]
                    ) -> list[tuple[str, str, bool, str | None]]:
    """(type, subtype, masking, description) of each way an input field feeds an output.

    Only what the producer reported: a transformation without a type, or an input field with
    none at all, is UNKNOWN (never assumed DIRECT, so never labelled "transformed"); masking
    comes from the ``masking`` flag, or from the deprecated ``transformationType`` MASKED, never
    from a description (docs/graph-model.md, "Transformations and masking")."""
    found = []
    for tr in field_.get("transformations") or []:
        kind = str(tr.get("type") or "UNKNOWN").upper()
        subtype = str(tr.get("subtype") or "UNKNOWN").upper()
        found.append((kind, subtype, tr.get("masking") is True, tr.get("description")))
    if found:
        return found
    # Facets before 1-1-0 describe the whole output field with transformationType/Description.
    legacy = str(spec.get("transformationType") or "UNKNOWN").upper()
    if legacy == "UNKNOWN":
        return [("UNKNOWN", "UNKNOWN", False, spec.get("transformationDescription"))]
    kind = "INDIRECT" if legacy in INDIRECT_SUBTYPES else "DIRECT"
    return [(kind, legacy, legacy == "MASKED", spec.get("transformationDescription"))]

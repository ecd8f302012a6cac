"""A few OpenLineage events that between them make a row of every kind (ingest/rows.py): what a
worker writes before its first batch (ingest.pipeline.plan_ahead), so that Neo4j has planned every
ingest query for rows as real as a producer's, and committed once. Nothing of them is kept: the
worker removes them again (cypher/admin/forget_sample.cypher).

Neo4j keys a cached plan by the types of the query's parameters as well as its text, so a
rehearsal with empty lists plans other queries than the first batch runs (measured in
docs/benchmarks.md, "Measurements behind the code").
"""

from __future__ import annotations

from typing import Any

NS = "lineage-graph://rehearsal"
"""The namespace of everything the sample names: the sample's alone."""
PRODUCER = "https://github.com/lineage-graph/lineage-graph/ingest/sample_events.py"
_RUN, _PARENT = "00000000-0000-4000-8000-00000000a001", "00000000-0000-4000-8000-00000000a002"
_FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/x.json"}
_EVENT = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/"
# what the sample names, for removing it once committed (cypher/admin/forget_sample.cypher)
DATASETS = ("source", "source_alias", "target", "old_target", "elsewhere", "declared")
JOBS = ("job", "parent", "declaring", "next_job")
RUNS = (_RUN, _PARENT)


def _facet(**fields: Any) -> dict[str, Any]:
    return {**_FACET, **fields}


def _schema(*columns: str) -> dict[str, Any]:
    return _facet(fields=[{"name": c, "type": "STRING", "description": f"the {c}"}
                          for c in columns])


def _source() -> dict[str, Any]:
    return {"namespace": NS, "name": "source", "facets": {
        "schema": _schema("id", "email", "day"),
        "symlinks": _facet(identifiers=[{"namespace": NS, "name": "source_alias",
                                         "type": "TABLE"}]),
        "version": _facet(datasetVersion="1")},
        "inputFacets": {"dataQualityMetrics": _facet(rowCount=10, bytes=100, columnMetrics={})}}


def _target() -> dict[str, Any]:
    def field(name: str, subtype: str, masking: bool) -> dict[str, Any]:
        return {"namespace": NS, "name": "source", "field": name, "transformations": [
            {"type": "DIRECT", "subtype": subtype, "description": "sample", "masking": masking}]}

    return {"namespace": NS, "name": "target", "facets": {
        "schema": _schema("id", "email_hash"),
        "columnLineage": _facet(
            fields={"id": {"inputFields": [field("id", "IDENTITY", False)]},
                    "email_hash": {"inputFields": [
                        field("email", "TRANSFORMATION", True),
                        # a column no schema of the batch names (ingest/column_keys)
                        {"namespace": NS, "name": "elsewhere", "field": "salt"}]}},
            dataset=[{"namespace": NS, "name": "source", "field": "day", "transformations": [
                {"type": "INDIRECT", "subtype": "FILTER", "description": "", "masking": False}]}]),
        "lifecycleStateChange": _facet(lifecycleStateChange="RENAME",
                                       previousIdentifier={"namespace": NS, "name": "old_target"}),
        "ownership": _facet(owners=[{"name": "rehearsal"}])},
        "outputFacets": {"outputStatistics": _facet(rowCount=10, size=100)}}


def _run_event(kind: str, time: str) -> dict[str, Any]:
    return {"eventType": kind, "eventTime": time, "producer": PRODUCER,
            "schemaURL": _EVENT + "RunEvent",
            "run": {"runId": _RUN, "facets": {
                "parent": _facet(run={"runId": _PARENT}, job={"namespace": NS, "name": "parent"},
                                 root={"run": {"runId": _PARENT},
                                       "job": {"namespace": NS, "name": "parent"}})}},
            "job": {"namespace": NS, "name": "job", "facets": {
                "sql": _facet(query="select 1"), "jobType": _facet(
                    processingType="BATCH", integration="SPARK", jobType="JOB")}},
            "inputs": [_source()], "outputs": [_target()]}


def _declaring_event() -> dict[str, Any]:
    """A job event with a lineage facet: edges to a job, from a job, and a field it makes."""
    entry = {"namespace": NS, "name": "declared", "type": "DATASET",
             "inputs": [{"namespace": NS, "name": "source", "type": "DATASET"},
                        {"namespace": NS, "name": "job", "type": "JOB"}],
             "fields": {"total": {"inputs": [
                 {"namespace": NS, "name": "source", "field": "id", "type": "DATASET",
                  "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION",
                                       "description": "count", "masking": False}]},
                 {"type": "JOB", "transformations": [
                     {"type": "DIRECT", "subtype": "TRANSFORMATION", "description": "made",
                      "masking": False}]}]}}}
    return {"eventTime": "2000-01-01T00:02:00Z", "producer": PRODUCER,
            "schemaURL": _EVENT + "JobEvent",
            "job": {"namespace": NS, "name": "declaring", "facets": {
                "lineage": _facet(entries=[entry, {"namespace": NS, "name": "next_job",
                                                   "type": "JOB", "inputs": [
                                                       {"namespace": NS, "name": "declaring",
                                                        "type": "JOB"}]}])}},
            "inputs": [], "outputs": [{"namespace": NS, "name": "declared",
                                       "facets": {"schema": _schema("total")}}]}


def sample_events() -> list[dict[str, Any]]:
    """The sample, a fresh copy each time (the pipeline may annotate what it is given)."""
    return [_run_event("START", "2000-01-01T00:00:00Z"),
            _run_event("COMPLETE", "2000-01-01T00:01:00Z"), _declaring_event()]

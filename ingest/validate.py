"""Lenient validation of OpenLineage events: by shape, never by ``schemaURL``.

The envelope must be usable (a run with a UUID runId, a job with namespace and name, a parseable
``eventTime``); facets that lineage-graph lifts into the graph must have the types it relies on.
Unknown keys and unknown facets are always allowed. A rejected event carries every reason found,
each with the path of the offending field.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from pydantic import ValidationError

from ingest import codec
from ingest.facet_shapes import FACET_CHECKS, FACET_MODELS
from ingest.limits import MAX_DATASETS, MAX_FIELDS, MAX_NAME_BYTES, problems
from ingest.log.protocol import Checked
from ingest.secrets import scrub, scrub_encoded
from ingest.times import normal_form, parse_time

EVENT_TYPES = ("START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER")


@dataclass(frozen=True)
class ValidEvent:
    """An event that passed validation: its kind, normalised time and identity digest."""

    kind: str  # RunEvent, JobEvent or DatasetEvent
    raw: dict[str, Any]  # the event as received, scrubbed of secrets (ingest.secrets)
    time: datetime
    time_raw: str
    run_id: str | None
    event_type: str | None
    known_digest: str | None = field(default=None, repr=False, compare=False)
    """The digest of ``raw`` when the caller knows it (the event log's canonical entries)."""
    text: str | None = field(default=None, repr=False, compare=False)
    """``raw``'s canonical JSON (``ingest.log.sqlite.encode``), when validation made it (see
    ``ingest.secrets.scrub_encoded``): the API logs it as it is."""

    @cached_property
    def digest(self) -> str:
        """Computed on first use: the API only accepts or rejects, and does not need it."""
        return self.known_digest or event_digest(self.raw)


def event_digest(raw: dict[str, Any]) -> str:
    """Identity of an event: a hash of its canonical JSON, so a re-sent event is recognised."""
    return hashlib.sha256(codec.canonical(raw)).hexdigest()


def validate(obj: Any) -> ValidEvent | list[str]:
    """Return a ValidEvent (its ``raw`` scrubbed of secrets), or the reasons ``obj`` is rejected."""
    if not isinstance(obj, dict):
        return [f"an event must be a JSON object, got {type(obj).__name__}"]
    unstorable = problems(obj)
    if unstorable:
        return unstorable
    reasons: list[str] = []
    kind = _kind(obj)
    if kind is None:
        return ["not an OpenLineage event: no 'run', 'job' or 'dataset' object"]
    time_raw = obj.get("eventTime")
    event_time: datetime | None = None
    try:
        event_time = parse_time(time_raw)
    except ValueError as e:
        reasons.append(f"eventTime: {e}" if time_raw is not None else "eventTime: missing")
    run_id, event_type = None, None
    if kind == "RunEvent":
        run_id = _run_id(obj.get("run"), reasons)
        event_type = _event_type(obj.get("eventType"), reasons)
    if kind in ("RunEvent", "JobEvent"):
        _check_ref(obj.get("job"), "job", reasons)
        _check_facets(obj["job"].get("facets") if isinstance(obj.get("job"), dict) else None,
                      "job.facets", reasons)
    if kind == "RunEvent" and isinstance(obj.get("run"), dict):
        _check_facets(obj["run"].get("facets"), "run.facets", reasons)
    if kind == "DatasetEvent":
        _check_dataset(obj.get("dataset"), "dataset", reasons)
    _check_size(obj, reasons)
    for side in ("inputs", "outputs"):
        datasets = obj.get(side)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            reasons.append(f"{side}: expected a list, got {type(datasets).__name__}")
            continue
        for i, ds in enumerate(datasets):
            _check_dataset(ds, f"{side}[{i}]", reasons)
    if reasons or event_time is None:
        return reasons
    if (written := normal_form(str(time_raw), event_time)) != time_raw:
        obj = {**obj, "eventTime": written}  # ISO 8601's other forms, as RFC 3339 writes them
        time_raw = written
    scrubbed, text = scrub_encoded(obj)
    return ValidEvent(kind, scrubbed, event_time, str(time_raw), run_id, event_type, text=text)


def logged(obj: Any, checked: Checked = Checked.VALIDATED,
           digest: str | None = None) -> ValidEvent | list[str]:
    """An event read back from the event log, which holds only events the API validated.

    They are not validated again: only their envelope is read (kind, time, run). They are
    scrubbed again unless ``checked`` says the API scrubbed them before it logged them (with
    ``LINEAGE_LOG_RAW_EVENTS`` the log holds them as received). Scrubbing is
    idempotent, and for an event with nothing to scrub a tenth of the worker's preparation.
    ``digest``: the event's digest as the log
    knows it (kept only for a scrubbed event, whose ``raw`` is what the log holds). An entry
    the API did not write (a log edited by hand) whose envelope cannot be read is validated in
    full, so it is rejected with its reasons."""
    scrubbed = checked >= Checked.SCRUBBED
    try:
        kind = _kind(obj)
        time_raw = obj["eventTime"]
        run_id = event_type = None
        if kind == "RunEvent":
            run_id = str(uuid.UUID(str(obj["run"]["runId"])))
            event_type = str(obj.get("eventType") or "OTHER").upper()
        if kind is None or event_type not in (None, *EVENT_TYPES):
            return validate(obj)
        return ValidEvent(kind, obj if scrubbed else scrub(obj), parse_time(time_raw), str(time_raw), run_id,
                          event_type, digest if scrubbed else None)
    except (TypeError, KeyError, ValueError, AttributeError):
        return validate(obj)


def _kind(obj: dict[str, Any]) -> str | None:
    if isinstance(obj.get("run"), dict) or ("run" in obj and "job" in obj):
        return "RunEvent"
    if "job" in obj:
        return "JobEvent"
    if "dataset" in obj:
        return "DatasetEvent"
    return None


def _run_id(run: Any, reasons: list[str]) -> str | None:
    if not isinstance(run, dict):
        reasons.append("run: expected an object with a runId")
        return None
    value = run.get("runId")
    if value is None:
        reasons.append("run.runId: missing (a run event needs the UUID of its run)")
        return None
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        reasons.append(f"run.runId: not a UUID: {value!r}")
        return None


def _event_type(value: Any, reasons: list[str]) -> str:
    if value is None:
        return "OTHER"
    if isinstance(value, str) and value.upper() in EVENT_TYPES:
        return value.upper()
    reasons.append(f"eventType: {value!r} is not one of {', '.join(EVENT_TYPES)}")
    return "OTHER"


def _check_ref(value: Any, where: str, reasons: list[str]) -> None:
    if not isinstance(value, dict):
        reasons.append(f"{where}: expected an object with namespace and name")
        return
    for key in ("namespace", "name"):
        if not isinstance(value.get(key), str) or not value[key]:
            reasons.append(f"{where}.{key}: missing or not a non-empty string")
        else:
            _check_name(value[key], f"{where}.{key}", reasons)


def _check_name(name: str, where: str, reasons: list[str]) -> None:
    if len(name) * 4 > MAX_NAME_BYTES and len(name.encode("utf-8", "replace")) > MAX_NAME_BYTES:
        reasons.append(f"{where}: {len(name.encode('utf-8', 'replace'))} bytes long, over the "
                       f"limit of {MAX_NAME_BYTES} bytes for a name")


def _check_size(obj: dict[str, Any], reasons: list[str]) -> None:
    """The per-event limits of ingest.limits: datasets, and fields in schemas and column lineage
    (each field's name bounded like a dataset's)."""
    datasets = [d for side in ("inputs", "outputs") if isinstance(obj.get(side), list)
                for d in obj[side] if isinstance(d, dict)]
    if isinstance(obj.get("dataset"), dict):
        datasets.append(obj["dataset"])
    if len(datasets) > MAX_DATASETS:
        reasons.append(f"inputs and outputs: {len(datasets)} datasets, over the limit of "
                       f"{MAX_DATASETS} per event (split the event)")
        return
    fields = 0
    for d in datasets:
        facets = d.get("facets")
        if not isinstance(facets, dict):
            continue
        schema = facets.get("schema")
        listed = schema.get("fields") if isinstance(schema, dict) else None
        for f in listed if isinstance(listed, list) else []:
            fields += 1
            if isinstance(f, dict) and isinstance(f.get("name"), str) and len(reasons) < 20:
                _check_name(f["name"], f"dataset {d.get('name')!r} schema field", reasons)
        lineage = facets.get("columnLineage")
        columns = lineage.get("fields") if isinstance(lineage, dict) else None
        for column, spec in columns.items() if isinstance(columns, dict) else []:
            if len(reasons) < 20:
                _check_name(column, f"dataset {d.get('name')!r} columnLineage field", reasons)
            inputs = spec.get("inputFields") if isinstance(spec, dict) else None
            fields += 1 + (len(inputs) if isinstance(inputs, list) else 0)
    if fields > MAX_FIELDS:
        reasons.append(f"{fields} schema and column-lineage fields, over the limit of "
                       f"{MAX_FIELDS} per event (split the event)")


def unread_facets(event: dict[str, Any]) -> list[str]:
    """The paths of the facets of ``event`` whose value is not an object: the event is kept (as
    Marquez keeps it) and so is the value, as sent, but nothing is read from it."""
    holders: list[tuple[str, Any]] = []
    for top in ("run", "job", "dataset"):
        if isinstance(event.get(top), dict):
            holders.append((f"{top}.facets", event[top].get("facets")))
    for side in ("inputs", "outputs"):
        for i, ds in enumerate(event.get(side) or []):
            if isinstance(ds, dict):
                holders += [(f"{side}[{i}].{key}", ds.get(key))
                            for key in ("facets", "inputFacets", "outputFacets")]
    return [f"{where}.{name}" for where, facets in holders if isinstance(facets, dict)
            for name, facet in facets.items() if not isinstance(facet, dict)]


def _check_dataset(value: Any, where: str, reasons: list[str]) -> None:
    _check_ref(value, where, reasons)
    if isinstance(value, dict):
        for key in ("facets", "inputFacets", "outputFacets"):
            _check_facets(value.get(key), f"{where}.{key}", reasons)


def _check_facets(facets: Any, where: str, reasons: list[str]) -> None:
    if facets is None:
        return
    if not isinstance(facets, dict):
        reasons.append(f"{where}: expected an object of facets")
        return
    for key, facet in facets.items():
        if not isinstance(facet, dict) or facet.get("_deleted") is True:
            continue  # not an object: kept as sent, never read (unread_facets counts them)
        model = FACET_MODELS.get(key)
        if model is None:
            continue
        try:
            model.validate_python(facet)
        except ValidationError as e:
            for err in e.errors():
                path = "".join(f".{p}" for p in err["loc"])
                reasons.append(f"{where}.{key}{path}: {err['msg']}")
            continue
        check = FACET_CHECKS.get(key)
        if check is not None:
            reasons.extend(f"{where}.{key}{problem}" for problem in check(facet))

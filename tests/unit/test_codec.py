"""ingest.codec: orjson on the hot paths must write what the standard library wrote; the event
log's bodies are canonical, so a scrubbed entry's digest is its body's."""

from __future__ import annotations

import json
from pathlib import Path

from ingest import codec
from ingest.log.sqlite import Checked, SQLiteLog, encode
from ingest.read import RawItem, iter_paths, read_file
from ingest.validate import ValidEvent, event_digest, logged, validate


def _stdlib_canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_canonical_form_and_log_text_are_the_standard_librarys_for_every_corpus_event(corpus: Path) -> None:
    items: list[RawItem] = [i for p in iter_paths([corpus]) for i in read_file(p) if i.error is None]
    assert len(items) > 800
    for item in items:
        assert codec.canonical(item.obj) == _stdlib_canonical(item.obj), item.where
        (text,) = encode([item.obj])
        assert text == _stdlib_canonical(item.obj).decode(), item.where
        assert json.loads(text) == item.obj, item.where


def test_what_orjson_refuses_goes_through_the_standard_library() -> None:
    big = {"eventTime": "2024-05-01T00:00:00Z", "n": 2**70 + 1, "s": "é \u2028"}  # beyond 64 bits
    (text,) = encode([big])
    assert json.loads(text) == big
    assert codec.canonical(big) == _stdlib_canonical(big) == text.encode()
    deep: object = 1
    for _ in range(300):  # orjson writes at most 254 levels
        deep = {"a": deep}
    assert encode([{"x": deep}]) == [json.dumps({"x": deep}, separators=(",", ":"))]
    assert event_digest({"x": deep}) == event_digest({"x": deep})


def test_a_digest_is_the_sha256_of_the_canonical_form() -> None:
    import hashlib
    event = {"b": [1, 2.5, None], "a": "ünïcode"}
    assert event_digest(event) == hashlib.sha256(_stdlib_canonical(event)).hexdigest()


def test_a_scrubbed_log_entrys_digest_from_its_body_is_the_events_digest(
        corpus: Path, tmp_path: Path) -> None:
    """The worker takes the digest of an entry the API validated and scrubbed from its stored body
    instead of encoding the event again: for every valid corpus event and generated ones it must
    be the digest the event has (and that a store already holds), and an entry that is scrubbed again gets none."""
    from bench.generate import events, tables

    items = [i.obj for p in iter_paths([corpus]) for i in read_file(p) if i.error is None]
    items += events(tables(100, seed=3), seed=3, days=2, starts=True)
    valid = [v for v in map(validate, items) if isinstance(v, ValidEvent)]
    assert len(valid) > 400
    log = SQLiteLog(tmp_path / "events.db")
    log.append([v.raw for v in valid], checked=Checked.SCRUBBED)
    log.append([v.raw for v in valid[:50]], checked=Checked.VALIDATED)
    entries = log.read(0, 10 * len(valid))
    assert len(entries) == len(valid) + 50
    for entry, event in zip(entries, valid, strict=False):
        assert entry.digest == event.digest == event_digest(entry.event), entry.seq
        again = logged(entry.event, entry.checked, entry.digest)
        assert isinstance(again, ValidEvent) and again.digest == event.digest
    for entry, event in zip(entries[len(valid):], valid, strict=False):
        assert entry.digest is None and entry.checked == Checked.VALIDATED
        again = logged(entry.event, entry.checked, entry.digest)
        assert isinstance(again, ValidEvent) and again.digest == event.digest


def _typed(value: object) -> object:
    """``value`` with each number's type beside it: 1 and 1.0 compare equal, but must not pass."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def test_a_validated_log_body_reads_the_same_with_orjson_as_with_the_standard_library(
        corpus: Path, tmp_path: Path) -> None:
    """The worker reads the bodies of events the API validated with orjson (codec.read_checked):
    for every valid corpus event, generated events, and one at the bounds the API lets through (64 levels,
    the 64-bit limits, large and small floats, non-ASCII text), what it reads is what json reads,
    types included."""
    from bench.generate import events, tables

    items = [i.obj for p in iter_paths([corpus]) for i in read_file(p) if i.error is None]
    items += events(tables(100, seed=3), seed=3, days=2, starts=True)
    edge: object = {"n": 1}
    for _ in range(59):  # the innermost object at level 64: the event, job, facets, x, deep, 59 more
        edge = {"a": edge}
    items.append({"eventTime": "2024-05-01T00:00:00Z", "run": {"runId": "0190b4e4-0000-7000-8000-000000000001"},
                  "job": {"namespace": "n", "name": "j", "facets": {"x": {
                      "deep": edge, "ints": [2**63 - 1, -(2**63), 0, -1], "floats": [1e308, 5e-324, -0.0, 1.5, 1e16],
                      "text": "é \u2028 \U0001F600 \\ \" /"}}}})
    valid = [v for v in map(validate, items) if isinstance(v, ValidEvent)]
    assert len(valid) > 400 and valid[-1].raw is items[-1]
    log = SQLiteLog(tmp_path / "events.db")
    log.append([v.raw for v in valid], checked=Checked.SCRUBBED)
    entries = log.read(0, 10 * len(valid))
    assert len(entries) == len(valid)
    for entry, event in zip(entries, valid, strict=True):
        (text,) = encode([event.raw])
        assert _typed(entry.event) == _typed(json.loads(text)), entry.seq

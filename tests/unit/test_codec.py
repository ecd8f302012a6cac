"""ingest.codec: orjson on the hot paths must write what the standard library wrote."""

from __future__ import annotations

import json
from pathlib import Path

from ingest import codec
from ingest.read import RawItem, iter_paths, read_file
from ingest.validate import event_digest


def _stdlib_canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_canonical_form_and_log_text_are_the_standard_librarys_for_every_corpus_event(corpus: Path) -> None:
    items: list[RawItem] = [i for p in iter_paths([corpus]) for i in read_file(p) if i.error is None]
    assert len(items) > 800
    for item in items:
        assert codec.canonical(item.obj) == _stdlib_canonical(item.obj), item.where
        text = codec.dumps(item.obj)
        assert text == json.dumps(item.obj, separators=(",", ":"), ensure_ascii=False), item.where
        assert json.loads(text) == item.obj, item.where


def test_what_orjson_refuses_goes_through_the_standard_library() -> None:
    big = {"eventTime": "2024-05-01T00:00:00Z", "n": 2**70 + 1, "s": "é \u2028"}  # beyond 64 bits
    text = codec.dumps(big)
    assert text == json.dumps(big, separators=(",", ":"), ensure_ascii=False)
    assert json.loads(text) == big
    assert codec.canonical(big) == _stdlib_canonical(big)
    deep: object = 1
    for _ in range(300):  # orjson writes at most 254 levels
        deep = {"a": deep}
    assert codec.dumps(deep) == json.dumps(deep, separators=(",", ":"))
    assert event_digest({"x": deep}) == event_digest({"x": deep})


def test_a_digest_is_the_sha256_of_the_canonical_form() -> None:
    import hashlib
    event = {"b": [1, 2.5, None], "a": "ünïcode"}
    assert event_digest(event) == hashlib.sha256(_stdlib_canonical(event)).hexdigest()

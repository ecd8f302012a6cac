"""graph.db: the parameters of a write are packed as given, without the driver's repr of them."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from neo4j._codec.packstream.v1 import Packer

from graph.db import _quiet


def _packed(value: object) -> bytes:
    out = io.BytesIO()
    Packer(out).pack(value)  # type: ignore[no-untyped-call]
    return out.getvalue()


def test_a_writes_list_parameters_pack_the_same_bytes_and_repr_short() -> None:
    rows = [{"namespace": "ns", "name": f"t{i}", "props": {"n": i, "tags": ["a", "b"]},
             "digests": ["d" * 64], "version": None, "ok": i % 2 == 0, "x": 1.5}
            for i in range(2000)]
    params = {"rows": rows, "names": [("ns", "a"), ("ns", "b")], "limit": 7, "at": "2024-01-01"}
    quiet = _quiet(params)
    assert _packed(quiet) == _packed(params)
    assert quiet == params  # the same values: only their repr changes
    assert repr(quiet["rows"]) == "<2000 items>" and len(repr(quiet)) < 200
    # values that are not lists are passed as they are
    when = datetime(2024, 1, 1, tzinfo=UTC)
    assert _quiet({"t": when, "m": {"a": [1]}}) == {"t": when, "m": {"a": [1]}}

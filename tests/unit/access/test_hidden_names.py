"""The hidden names found where answers write them (api.access.hidden), and the redaction of a
list's objects that name nothing hidden (kept whole, unwalked) giving the same answer as the
full walk (api.access.redact)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from api.access.hidden import Hidden, hidden_from_rows
from api.access.redact import redact
from impact.access.grants import read_access

ACCESS = """\
grants:
  - name: analyst
    tokens: [analyst-token-0001]
    read: ["shop"]
    hide_tags: [PII]
"""


@pytest.fixture
def hidden(tmp_path: Path) -> Hidden:
    path = tmp_path / "access.yaml"
    path.write_text(ACCESS, encoding="utf-8")
    access = read_access(path)
    rows = [
        {"kind": "dataset", "namespace": "shop", "name": 'raw."quoted"\\users', "tags": ["PII"],
         "fieldTags": []},
        {"kind": "dataset", "namespace": "shop", "name": "raw.orders", "tags": [],
         "fieldTags": ["e\u00e9mail\u001fPII"]},
        {"kind": "dataset", "namespace": "vault", "name": "ledger", "tags": [], "fieldTags": []},
    ]
    return hidden_from_rows(access.grants[0], access, b"salt", rows)


def test_a_name_json_escapes_is_found_in_a_json_answer(hidden: Hidden) -> None:
    for body in (json.dumps({"name": 'raw."quoted"\\users'}),  # \" and \\ in the text
                 json.dumps({"column": "e\u00e9mail"}),  # é as \u00e9
                 orjson.dumps({"column": "e\u00e9mail"}).decode()):  # é as it is
        assert hidden.occurs(body), body
    assert not hidden.occurs(json.dumps({"name": "raw.orders", "namespace": "shop"}))


def test_objects_that_name_nothing_hidden_are_kept_as_the_walk_would_keep_them(
        hidden: Hidden) -> None:
    answer = {"graph": [
        {"id": "dataset:shop:raw.orders", "data": {"namespace": "shop", "name": "raw.orders",
                                                  "fields": [{"name": "id"}, {"name": "e\u00e9mail"}]}},
        {"id": "dataset:shop:marts.daily", "data": {"namespace": "shop", "name": "marts.daily",
                                                   "facets": {"sql": "select 1"}}},
        {"id": "dataset:vault:ledger", "data": {"namespace": "vault", "name": "ledger",
                                               "facets": {"sql": "select secret"}}},
    ]}
    walked, full = redact(answer, hidden)
    skipped, fast = redact(answer, hidden, current=True)
    assert skipped == walked and fast.count == full.count > 0
    assert skipped["graph"][1] is answer["graph"][1]  # visible whole: not walked
    assert "vault" not in orjson.dumps(skipped).decode()


def test_a_hidden_columns_bare_name_may_name_it_only_beside_a_dataset_that_holds_it(
        hidden: Hidden) -> None:
    """``may_name`` (a whole answer and its request): 'eémail' is hidden in raw.orders only, so
    an answer naming it of another dataset names nothing hidden, while one that also names
    raw.orders, in its body or in the request, may; ``occurs`` (a part of an answer) counts the
    bare name anywhere."""
    other = json.dumps({"namespace": "shop", "name": "marts.daily",
                        "fields": [{"name": "e\u00e9mail"}]})
    assert hidden.occurs(other)
    assert not hidden.may_name(other, "/api/v1/namespaces/shop/datasets/marts.daily?")
    assert hidden.may_name(other, "/api/v1/lineage?nodeId=dataset:shop:raw.orders")
    holding = json.dumps({"namespace": "shop", "name": "raw.orders",
                          "fields": [{"name": "e\u00e9mail"}]}, ensure_ascii=True)
    assert hidden.may_name(holding, "/")
    assert not hidden.may_name(json.dumps({"name": "raw.orders", "fields": [{"name": "id"}]}))
    # a hidden name is enough on its own, in the answer or the request
    assert hidden.may_name(json.dumps({"namespace": "vault"}))
    assert hidden.may_name("{}", "/api/v1/namespaces/vault/jobs")
    # scanning still replaces the bare name, and never the dataset named only for context
    text, count = hidden.scan("raw.orders has e\u00e9mail")
    assert count == 1 and "raw.orders" in text and "e\u00e9mail" not in text

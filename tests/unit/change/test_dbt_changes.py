"""Reading a dbt manifest into models, and the column operations between two schemas (pure)."""

from __future__ import annotations

import pytest

from impact.change.dbt import _column_changes, models, relation
from impact.change.read import Change, CheckInputError
from ingest.aliases import alias_event


def _manifest() -> dict[str, object]:
    return {
        "metadata": {"adapter_type": "duckdb"},
        "sources": {"source.p.raw.users": {"resource_type": "source", "database": "shop", "schema": "raw",
                                           "name": "users", "identifier": "users_v2"}},
        "nodes": {
            "model.p.stg": {"resource_type": "model", "database": "shop", "schema": "staging", "name": "stg",
                            "alias": "stg_users", "config": {"enabled": True},
                            "columns": {"id": {"name": "id", "data_type": "bigint"},
                                        "email_hash": {"name": "email_hash"}},
                            "depends_on": {"nodes": ["source.p.raw.users"]},
                            "compiled_code": "select id, sha256(email) as email_hash from shop.raw.users_v2 "
                                             "join shop.raw.extra using (id)"},
            "model.p.off": {"resource_type": "model", "database": "shop", "schema": "x", "name": "off",
                            "alias": "off", "config": {"enabled": False}},
            "test.p.t": {"resource_type": "test", "database": "shop", "schema": "x", "name": "t"},
        },
    }


def test_models_read_relations_columns_and_inputs() -> None:
    found = models(_manifest(), "--dbt-manifest")
    assert list(found) == ["model.p.stg"]  # disabled models and tests are not models
    stg = found["model.p.stg"]
    assert stg.relation == "shop.staging.stg_users"  # the alias, as openlineage-dbt names it
    assert stg.columns == {"id": "bigint", "email_hash": None}
    # the source by its identifier, plus a table only the compiled SQL names
    assert stg.inputs == {"shop.raw.users_v2", "shop.raw.extra"}
    assert relation({"resource_type": "source", "schema": "raw", "name": "t"}) == "raw.t"


def test_models_refuse_what_is_not_a_manifest() -> None:
    with pytest.raises(CheckInputError, match="--dbt-state: not a dbt manifest"):
        models({"nodes": []}, "--dbt-state")


def test_column_changes_between_two_schemas() -> None:
    now = {"id": "bigint", "Email": "varchar", "amount": "int"}
    proposed = {"ID": "bigint", "amount": "bigint", "phone": None}
    assert _column_changes("ns", "t", now, proposed) == [
        Change("drop_column", "ns", "t", "Email"),  # names compared without case
        Change("retype_column", "ns", "t", "amount", "bigint"),
        Change("add_column", "ns", "t", "phone", None),
    ]


def test_alias_event_is_a_dataset_event_with_a_symlink() -> None:
    event = alias_event("file", "/lake/users", "duckdb:///x.duckdb", "shop.raw.users")
    assert set(event) == {"eventTime", "producer", "schemaURL", "dataset"}
    assert event["dataset"]["facets"]["symlinks"]["identifiers"] == [
        {"namespace": "duckdb:///x.duckdb", "name": "shop.raw.users", "type": "ALIAS"}]
    with pytest.raises(ValueError, match="cannot be an alias of itself"):
        alias_event("a", "b", "a", "b")
    with pytest.raises(ValueError, match="the alias name is empty"):
        alias_event("a", "b", "c", " ")


def test_a_dropped_and_an_added_column_from_the_same_inputs_are_a_rename() -> None:
    now = {"id": "bigint", "full_name": "varchar", "note": "varchar"}
    proposed = {"id": "bigint", "contact_name": "varchar", "remark": "varchar"}
    was_from = {"full_name": frozenset({"shop.raw.users.full_name"}), "note": frozenset()}
    now_from = {"contact_name": frozenset({"shop.raw.users.full_name"}), "remark": frozenset()}
    assert _column_changes("ns", "t", now, proposed, was_from, now_from) == [
        Change("drop_column", "ns", "t", "note"),  # no inputs to match on: not a rename
        Change("rename_column", "ns", "t", "full_name", "contact_name"),
        Change("add_column", "ns", "t", "remark", "varchar"),
    ]

import json

from ingest.facets import capped_json, facet_props, redact


def test_secret_keys_are_redacted_at_any_depth() -> None:
    value = {"config": {"password": "hunter2", "db": {"apiKey": "k"}, "user": "me"}}
    assert redact(value) == {"config": {"password": "***", "db": {"apiKey": "***"}, "user": "me"}}


def test_password_in_a_uri_is_redacted() -> None:
    assert redact("postgres://food:s3cret@db:5432/x") == "postgres://food:***@db:5432/x"


def test_large_facet_is_replaced_by_a_summary() -> None:
    text = capped_json({"plan": "x" * 5000, "other": 1}, max_bytes=1000)
    summary = json.loads(text)
    assert summary["_truncated"] is True and summary["_keys"] == ["other", "plan"]


def test_structural_facets_are_not_kept_as_json_and_deleted_ones_map_to_none() -> None:
    props = facet_props({"schema": {"fields": []}, "custom": {"a": 1},
                         "gone": {"_deleted": True}}, 1000)
    assert props == {"facet.custom": '{"a":1}', "facet.gone": None}

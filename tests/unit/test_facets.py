import json

from ingest.facets import capped_json, facet_props


def test_large_facet_is_replaced_by_a_summary() -> None:
    text = capped_json({"plan": "x" * 5000, "other": 1}, max_bytes=1000)
    summary = json.loads(text)
    assert summary["_truncated"] is True and summary["_keys"] == ["other", "plan"]


def test_structural_facets_are_not_kept_as_json_and_deleted_ones_map_to_none() -> None:
    props = facet_props({"schema": {"fields": []}, "custom": {"a": 1},
                         "gone": {"_deleted": True}}, 1000)
    assert props == {"facet.custom": '{"a":1}', "facet.gone": None}

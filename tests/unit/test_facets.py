import json

from ingest.facets import capped_json, facet_props


def test_large_facet_is_replaced_by_a_summary() -> None:
    text = capped_json({"plan": "x" * 5000, "other": 1}, max_bytes=1000)
    summary = json.loads(text)
    assert summary["_truncated"] is True and summary["_keys"] == ["other", "plan"]


def test_every_facet_is_kept_as_sent_and_deleted_ones_map_to_none() -> None:
    # the lifted ones too (schema): Marquez's answers serve every facet as the producer sent it
    props = facet_props({"schema": {"fields": [], "_producer": "p"}, "custom": {"b": 2, "a": 1},
                         "gone": {"_deleted": True}}, 1000)
    assert props == {"facet.schema": '{"_producer":"p","fields":[]}',  # keys sorted: canonical
                     "facet.custom": '{"a":1,"b":2}', "facet.gone": None}

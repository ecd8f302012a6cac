import json

from ingest.read import read_payload


def test_one_object_is_one_item() -> None:
    items = read_payload('{"a": 1}', "f.json")
    assert [(i.where, i.obj) for i in items] == [("f.json", {"a": 1})]


def test_an_array_gives_one_item_per_element_with_its_index() -> None:
    items = read_payload('[{"a": 1}, {"a": 2}]', "f.json")
    assert [(i.where, i.obj) for i in items] == [("f.json[0]", {"a": 1}), ("f.json[1]", {"a": 2})]


def test_ndjson_bad_line_is_reported_alone_and_neighbours_survive() -> None:
    text = '{"a": 1}\n{"a": \n{"a": 3}\n'
    items = read_payload(text, "f.ndjson")
    assert [i.obj for i in items if i.error is None] == [{"a": 1}, {"a": 3}]
    [bad] = [i for i in items if i.error]
    assert bad.where == "f.ndjson:2" and "invalid JSON at column" in (bad.error or "")


def test_invalid_pretty_json_is_one_error_with_its_position() -> None:
    text = json.dumps({"a": 1, "b": [1, 2]}, indent=2) + "\n}"
    [item] = read_payload(text, "f.json")
    assert item.obj is None and "Extra data" in (item.error or "") and "line" in (item.error or "")


def test_empty_payload_is_an_error_not_a_crash() -> None:
    [item] = read_payload("  \n", "empty.json")
    assert (item.error or "").startswith("nothing to read")


def test_the_api_splits_a_body_as_files_are_split() -> None:
    """One splitter for every way in: the same positions and reasons from a body and a file."""
    body = b'{"eventTime": 1}\n{"a": \n{"job": {}}\n'
    from api.receive import parse
    verdict = parse(body, "ndjson")
    items = read_payload(body.decode(), "f.ndjson", "ndjson")
    assert [r["index"] for r in verdict.rejected] == [i.index for i in items] == [0, 1, 2]
    assert verdict.rejected[1]["reasons"] == [items[1].error]


def test_a_bare_number_is_unusable_as_a_whole() -> None:
    [item] = read_payload("42", "f.json")
    assert item.index is None and item.error == "expected a JSON object or array, got int"

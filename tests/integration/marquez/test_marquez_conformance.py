"""Every Marquez-shaped answer of ours validates against Marquez's own response schemas
(`../shared/marquez/openapi.yml`), over Marquez's demo events, our example and the shared corpus.

The spec's schemas are used as Marquez publishes them, with these corrections (each a defect of
the spec against Marquez's Java models, which is what Marquez answers):
- a property Marquez's models mark @Nullable may be null (OpenAPI 3.0 says so with `nullable`,
  which the spec never writes): every property an object does not list as required;
- `SearchResult.name` and `.updatedAt` have an empty `type` (YAML null): strings;
- `UpstreamRunLineage` misspells `properties` as `propoerties`, so it checked nothing;
- `InputDatasetVersion.facets` says a map of strings: it is a map of facets (objects);
- `FacetsResult.facets` says one facet: it is a map of facets;
- `DatasetVersion.tags` says a string: it is a list of tag names;
- a field's `type` is required, but Marquez's `Field.type` is @Nullable (a schema facet may leave
  it out, and Marquez answers null);
- a lineage node's `data` is a oneOf of Dataset and Job told apart by a discriminator, which
  JSON Schema does not apply (data valid under both fails a oneOf): it is checked as an anyOf, and
  each node's data again against the model its `type` names (`_check_graph`);
- `NodeType` lacks `DATASET_FIELD`, the column-lineage node (Marquez's `NodeType` enum has it),
  whose `data` is none of Dataset or Job: for it, an object with the field's identity.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.log.sqlite import SQLiteLog
from ingest.read import read_file
from tests import food_delivery
from tests.conftest import CORPUS, SHARED
from tests.helpers import ingest_events

pytestmark = pytest.mark.integration

SPEC = SHARED / "marquez" / "openapi.yml"
SHOP = Path(__file__).parents[3] / "examples" / "events" / "shop.ndjson"
_DROP = ("example", "examples", "description", "deprecated", "discriminator", "format")


def _relax(node: Any) -> Any:
    if isinstance(node, list):
        return [_relax(v) for v in node]
    if not isinstance(node, dict):
        return node
    node = {("properties" if k == "propoerties" else k): v for k, v in node.items()}
    out = {k: _relax(v) for k, v in node.items() if k not in _DROP}
    if "type" in node and node["type"] is None:
        out["type"] = "string"
    if isinstance(out.get("properties"), dict):
        required = set(node.get("required") or [])
        out["properties"] = {k: v if k in required else {"anyOf": [v, {"type": "null"}]}
                             for k, v in out["properties"].items()}
    return out


def _corrected() -> dict[str, Any]:
    schemas = yaml.safe_load(SPEC.read_text())["components"]["schemas"]
    facet_map = {"type": "object", "additionalProperties": {"type": "object"}}
    schemas["InputDatasetVersion"]["properties"]["facets"] = facet_map
    schemas["FacetsResult"]["properties"]["facets"] = facet_map
    schemas["DatasetVersion"]["properties"]["tags"] = {"type": "array", "items": {"type": "string"}}
    schemas["NodeType"]["enum"].append("DATASET_FIELD")
    for holder in ("Dataset", "DatasetVersion", "DbTable", "Stream"):
        schemas[holder]["properties"]["fields"]["items"]["required"] = ["name"]
    field_data = {"type": "object", "required": ["namespace", "dataset", "field"],
                  "properties": {"namespace": {"type": "string"}, "dataset": {"type": "string"},
                                 "field": {"type": "string"}}}
    data = schemas["GraphNode"]["properties"]["data"]
    data["anyOf"] = [*data.pop("oneOf"), field_data]
    return {name: _relax(schema) for name, schema in schemas.items()}


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    if not SPEC.exists():
        pytest.skip(f"Marquez's API description not found at {SPEC} (set LINEAGE_TEST_SHARED to "
                    "a folder holding marquez/openapi.yml)")
    return _corrected()


def _check(components: dict[str, Any], name: str, body: Any, what: str) -> None:
    validator = Draft202012Validator({"$ref": f"#/components/schemas/{name}",
                                      "components": {"schemas": components}})
    errors = [best_match([e]) for e in validator.iter_errors(body)]
    assert not errors, f"{what} is not a Marquez {name}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:5])


# The fields marquez-java (clients/java, marquez.client.models) declares @NonNull in a lineage
# node's data: its constructor throws on a null or missing one, so that the client's getLineage
# and getColumnLineage fail on the whole answer.
JAVA_NON_NULL = {
    "DATASET": ("id", "type", "name", "physicalName", "createdAt", "updatedAt", "namespace",
                "sourceName", "fields", "tags"),
    "JOB": ("id", "type", "name", "simpleName", "createdAt", "updatedAt", "namespace", "inputs",
            "outputs"),
    "DATASET_FIELD": ("namespace", "dataset", "field", "fieldType", "inputFields"),
}


def _check_graph(components: dict[str, Any], body: Any, what: str) -> None:
    _check(components, "LineageGraph", body, what)
    for node in body["graph"]:
        missing = [k for k in JAVA_NON_NULL[node["type"]] if node["data"].get(k) is None]
        assert not missing, f"{what}, node {node['id']}: null {missing} (marquez-java refuses it)"
        model = {"DATASET": "Dataset", "JOB": "Job"}.get(node["type"])
        if model:
            _check(components, model, node["data"], f"{what}, node {node['id']}")
        else:
            assert node["type"] == "DATASET_FIELD" and set(node["data"]) >= {
                "namespace", "dataset", "field"}, node


@pytest.fixture
def api(graph: Graph, tmp_path: Path) -> Iterator[TestClient]:
    demo = food_delivery.events()
    shop = [item.obj for item in read_file(SHOP)]
    others = []  # the corpus's complete recorded events (the others are templates)
    for folder in ("datahub-project__datahub", "open-metadata__OpenMetadata",
                   "MarquezProject__marquez/api"):
        for path in sorted((CORPUS / folder).glob("**/*.json")):
            others += [item.obj for item in read_file(path) if item.obj is not None]
    ingest_events(graph, demo + shop + others)
    log = SQLiteLog(tmp_path / "events.db")
    log.append(demo + shop)
    with TestClient(create_app(Settings(api_max_page=1000), graph, log),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as c:
        yield c


def _get(api: TestClient, path: str, **params: Any) -> Any:
    r = api.get(path, params=params)
    assert r.status_code == 200, (path, r.text[:300])
    return r.json()


def test_every_read_answer_is_a_marquez_model(api: TestClient,
                                               components: dict[str, Any]) -> None:
    checked = 0
    spaces = _get(api, "/api/v1/namespaces", limit=1000)
    _check(components, "NamespaceList", spaces, "GET /namespaces")
    assert len(spaces["namespaces"]) > 5  # the demo, our example, the corpus's producers
    for space in spaces["namespaces"]:
        ns = space["name"]
        base = "/api/v1/namespaces/" + ns.replace("/", "%2F")
        _check(components, "Namespace", _get(api, base), f"namespace {ns}")
        datasets = _get(api, base + "/datasets", limit=1000)
        _check(components, "DatasetList", datasets, f"datasets of {ns}")
        for d in datasets["datasets"][:20]:
            path = f"{base}/datasets/{d['name'].replace('/', '%2F')}"
            _check(components, "Dataset", _get(api, path), path)
            versions = _get(api, path + "/versions")
            _check(components, "DatasetVersionList", versions, path + "/versions")
            for v in versions["versions"][:2]:
                _check(components, "DatasetVersion", _get(api, f"{path}/versions/{v['version']}"),
                       f"{path} version")
            lineage = _get(api, "/api/v1/lineage", nodeId=f"dataset:{ns}:{d['name']}", depth=2)
            _check_graph(components, lineage, f"lineage of {path}")
            columns = _get(api, "/api/v1/column-lineage", nodeId=f"dataset:{ns}:{d['name']}",
                           withDownstream="true")
            _check_graph(components, columns, f"column lineage of {path}")
            checked += 1
        jobs = _get(api, base + "/jobs", limit=1000)
        _check(components, "JobList", jobs, f"jobs of {ns}")
        for j in jobs["jobs"][:20]:
            path = f"{base}/jobs/{j['name'].replace('/', '%2F')}"
            _check(components, "Job", _get(api, path), path)
            versions = _get(api, path + "/versions")
            _check(components, "JobVersionList", versions, path + "/versions")
            for v in versions["versions"][:2]:
                _check(components, "JobVersion", _get(api, f"{path}/versions/{v['version']}"),
                       f"{path} version")
            _check_graph(components, _get(api, "/api/v1/column-lineage", nodeId=f"job:{ns}:{j['name']}"),
                         f"column lineage of {path}")
            runs = _get(api, path + "/runs")
            _check(components, "RunList", runs, path + "/runs")
            for run in runs["runs"][:2]:
                one = f"/api/v1/jobs/runs/{run['id']}"
                _check(components, "Run", _get(api, one), one)
                for kind in ("run", "job"):
                    _check(components, "FacetsResult", _get(api, one + "/facets", type=kind),
                           f"{one}/facets?type={kind}")
                _check(components, "UpstreamRunLineage",
                       _get(api, "/api/v1/runlineage/upstream", runId=run["id"]), one)
            checked += 1
    for path, name, params in (("/api/v1/jobs", "JobList", {}), ("/api/v1/sources", "SourceList", {}),
                               ("/api/v1/tags", "TagList", {}),
                               ("/api/v1/search", "SearchResultList", {"q": "orders"}),
                               ("/api/v1/events/lineage", "LineageEventList", {"limit": 50})):
        _check(components, name, _get(api, path, **params), path)
    for source in _get(api, "/api/v1/sources")["sources"]:
        # marquez-java's Source refuses a null time, type or URL
        assert all(source[k] is not None for k in ("type", "name", "createdAt", "updatedAt",
                                                    "connectionUrl")), source
        _check(components, "Source", _get(api, "/api/v1/sources/" + source["name"].replace(
            "/", "%2F")), f"source {source['name']}")
    assert checked > 50

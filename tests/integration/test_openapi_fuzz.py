"""Schemathesis against our own OpenAPI spec: generated requests for every operation never get a
5xx (bad input is a 4xx with a reason), on the real server with the example graph loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.log.sqlite import SQLiteLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file
from tests.conftest import wipe

pytestmark = pytest.mark.integration
SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
TOKEN = "fuzzing-writer-token"
# the operations, listed from the spec of an app that is never called
_FOUND = list(schemathesis.openapi.from_asgi("/openapi.json", create_app(Settings()),
                                            headers={"Host": "localhost"}).get_all_operations())
OPERATIONS = sorted(f"{found.ok().method.upper()} {found.ok().path}"
                    for found in _FOUND if isinstance(found, Ok))
# Marquez's OpenSearch search answers 503, as documented in docs/marquez.md: the only 5xx
# allowed, with its reason
NOT_OFFERED = {"GET /api/v2beta/search/{kind}"}


def test_every_operation_of_the_description_is_valid() -> None:
    assert all(isinstance(found, Ok) for found in _FOUND), [f for f in _FOUND if not isinstance(f, Ok)]


@pytest.fixture(scope="module")
def api_operations(session_graph: Graph, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Every operation of one app over the example graph, loaded once for the file: the checks
    are that no request gets a 5xx, which the writes of earlier operations do not change."""
    wipe(session_graph)
    Ingester(session_graph).ingest(read_file(SHOP), IngestReport())
    app = create_app(Settings(api_tokens=f"{TOKEN}:write", max_body_bytes=1024 * 1024),
                     session_graph, SQLiteLog(tmp_path_factory.mktemp("fuzz") / "events.db"))
    schema = schemathesis.openapi.from_asgi("/openapi.json", app,
                                            headers={"Authorization": f"Bearer {TOKEN}"})
    found = [o.ok() for o in schema.get_all_operations() if isinstance(o, Ok)]
    return {f"{op.method.upper()} {op.path}": op for op in found}


@pytest.mark.parametrize("operation", OPERATIONS)
def test_no_operation_answers_5xx(api_operations, operation: str) -> None:  # type: ignore[no-untyped-def]
    op = api_operations[operation]

    @settings(max_examples=12, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        case = data.draw(op.as_strategy())
        response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
        if operation in NOT_OFFERED and response.status_code in (501, 503):
            assert "/api/v1/" in response.json()["detail"]  # says what to use instead
            return
        case.validate_response(response, checks=[not_a_server_error])

    run()

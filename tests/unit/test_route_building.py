"""A served app builds every route's request handling at start (api.app.build_routes): FastAPI
would otherwise build a router's at the first request that reaches it, and that request would
wait for it (docs/benchmarks.md, "The first answers after a start")."""

from __future__ import annotations

from typing import Any

import fastapi.routing
import pytest
from fastapi.testclient import TestClient

from api.app import build_routes, create_app
from graph.settings import Settings


def _builds_during_requests(monkeypatch: pytest.MonkeyPatch, built_first: bool) -> int:
    app = create_app(Settings())
    if built_first:
        build_routes(app)
    built: list[Any] = []
    real = fastapi.routing.get_dependant  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(kwargs.get("call"))
        return real(*args, **kwargs)

    monkeypatch.setattr(fastapi.routing, "get_dependant", counted)
    with TestClient(app, base_url="http://localhost", client=("127.0.0.1", 40000)) as api:
        assert api.get("/health").status_code == 200
        assert api.get("/no/such/path").status_code == 404  # matched against every router
    return len(built)


def test_after_build_routes_no_request_builds_a_route(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _builds_during_requests(monkeypatch, built_first=True) == 0


def test_without_it_the_first_requests_build_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """What build_routes is for: if FastAPI ever builds routes eagerly, this fails, and
    build_routes can go."""
    assert _builds_during_requests(monkeypatch, built_first=False) > 50

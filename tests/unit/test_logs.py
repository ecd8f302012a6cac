"""Log lines: JSON with the request or batch they belong to; text for a terminal."""

from __future__ import annotations

import json
import logging

import pytest

from api import logs
from graph.log_context import bound


def _line(capsys: pytest.CaptureFixture[str], fmt: str) -> str:
    logs.configure(fmt, logging.INFO)
    try:
        with bound(request="r-1"), bound(batch="10-20"):
            logging.getLogger("ingest.worker").info("loaded %d events", 11)
        logging.getLogger("ingest.worker").warning("outside")
    finally:
        logging.getLogger().handlers.clear()
    return capsys.readouterr().err


def test_json_lines_carry_the_bound_fields(capsys: pytest.CaptureFixture[str]) -> None:
    first, second = (json.loads(x) for x in _line(capsys, "json").splitlines())
    assert first["message"] == "loaded 11 events" and first["level"] == "info"
    assert first["logger"] == "ingest.worker" and first["time"].endswith("Z")
    assert first["request"] == "r-1" and first["batch"] == "10-20"
    assert "request" not in second and second["message"] == "outside"


def test_text_for_people(capsys: pytest.CaptureFixture[str]) -> None:
    first, second = _line(capsys, "text").splitlines()
    assert "INFO    ingest.worker: loaded 11 events  [request=r-1 batch=10-20]" in first
    assert second.endswith("WARNING ingest.worker: outside")

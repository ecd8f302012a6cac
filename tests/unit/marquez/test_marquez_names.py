"""The names Marquez's legacy writes give their events and facets are read back under the same
names: ingest.marquez_events writes them, impact.marquez.models (which imports nothing of ingest)
reads them."""

import json

from impact.marquez import models as mm
from ingest import marquez_events as mw


def test_the_legacy_writes_names_are_read_back_as_written() -> None:
    assert mm.LEGACY_PRODUCER == mw.PRODUCER
    assert (mm.ARGS_FACET, mm.JOB_FACET, mm.STREAM_FACET) == (
        mw.ARGS_FACET, mw.JOB_FACET, mw.STREAM_FACET)


def test_a_legacy_facet_is_served_only_to_who_asks_for_it() -> None:
    props = {"facet.tags": json.dumps({"_producer": mw.PRODUCER, "tags": []}),
             "facet.schema": json.dumps({"_producer": "https://example.com/p", "fields": []})}
    assert set(mm.facets(props)) == {"schema"}
    assert set(mm.facets(props, legacy=True)) == {"schema", "tags"}

from datetime import UTC, datetime

import pytest

from ingest.times import parse_time


@pytest.mark.parametrize(("text", "expected"), [
    ("2024-05-01T02:00:00Z", datetime(2024, 5, 1, 2, 0, 0, tzinfo=UTC)),
    ("2024-05-01T02:00:00.1Z", datetime(2024, 5, 1, 2, 0, 0, 100000, tzinfo=UTC)),
    ("2024-05-01T02:00:00.123456789Z", datetime(2024, 5, 1, 2, 0, 0, 123456, tzinfo=UTC)),
    ("2020-12-28T19:52:00.001+10:00", datetime(2020, 12, 28, 9, 52, 0, 1000, tzinfo=UTC)),
    ("2024-05-01T02:00:00-0130", datetime(2024, 5, 1, 3, 30, tzinfo=UTC)),
    ("2021-11-03T10:53:52.427343", datetime(2021, 11, 3, 10, 53, 52, 427343, tzinfo=UTC)),
])
def test_every_event_time_form_normalises_to_utc(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize("bad", ["{{RUN_START_TIME}}", "yesterday", "", 1700000000, None])
def test_a_non_iso_event_time_is_a_value_error(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_time(bad)

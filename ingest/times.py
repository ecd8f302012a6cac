"""OpenLineage ``eventTime`` values in every form producers send, normalised to UTC."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$"
)


def parse_time(value: object) -> datetime:
    """Parse an ISO 8601 timestamp with 0–9 fractional digits and any offset; naive means UTC.

    Raises ValueError with the offending value (also for a time that falls outside the years
    1-9999 once converted to UTC). Digits past microseconds are dropped.
    """
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO 8601 string, got {type(value).__name__}")
    m = _ISO.match(value.strip())
    if not m:
        raise ValueError(f"not an ISO 8601 date-time: {value!r}")
    year, month, day, hour, minute, second, frac, zone = m.groups()
    micros = int((frac or "0")[:6].ljust(6, "0"))
    tz = UTC if zone in (None, "Z", "z") else _offset(zone)
    local = datetime(
        int(year), int(month), int(day), int(hour), int(minute), int(second or 0), micros, tz
    )
    try:
        return local.astimezone(UTC)
    except OverflowError as e:  # 9999-12-31T23:59-23:59 is past year 9999 in UTC
        raise ValueError(f"{value!r} is outside the years 1-9999 once converted to UTC") from e


def _offset(zone: str) -> timezone:
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 23 or minutes > 59:
        raise ValueError(f"offset {zone} is not a time offset (hours 00-23, minutes 00-59)")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


# what SQLite's date functions read (the event log's time index): Z or an offset written ±HH:MM
_SQLITE_READS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$")


def normal_form(value: str, parsed: datetime) -> str:
    """``value`` when it is already in the extended form RFC 3339 uses, else ``parsed`` written
    that way (``+0530`` becomes ``+00:00`` after conversion to UTC: the same instant), so that the
    event log can index every event by its time."""
    return value if _SQLITE_READS.match(value) else parsed.isoformat().replace("+00:00", "Z")

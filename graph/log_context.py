"""What a log line belongs to: fields bound for the duration of a request or a batch.

The front doors bind a request id per HTTP request, the worker the log sequence numbers of the
batch it loads; every log record made meanwhile, in that thread or task, carries them
(:class:`ContextFilter`), and the formatter of ``api.logs`` writes them out.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

_FIELDS: ContextVar[dict[str, Any] | None] = ContextVar("lineage_log_fields", default=None)


@contextlib.contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """Add ``fields`` to every log record made inside the block (nested blocks add to them)."""
    token = _FIELDS.set({**(_FIELDS.get() or {}), **fields})
    try:
        yield
    finally:
        _FIELDS.reset(token)


def current() -> dict[str, Any]:
    """The fields bound here and now."""
    return dict(_FIELDS.get() or {})


class ContextFilter(logging.Filter):
    """Puts the bound fields on each record as ``record.context``."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.context = current()
        return True

"""Logs of the API and the worker: one JSON object per line where a program reads them (files,
pipes, `lineage up`), aligned text where a person reads them (a terminal).

Each line has the time, level, logger, message and the fields bound for the request or batch it
belongs to (``graph.log_context``: ``request`` for an HTTP request, ``batch`` for the worker's
log sequence numbers), and the exception when there is one.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from graph.log_context import ContextFilter, bound

if TYPE_CHECKING:
    from api.request_stats import RequestStats


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage(),
            **getattr(record, "context", {})}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={v}" for k, v in getattr(record, "context", {}).items())
        text = (f"{time.strftime('%H:%M:%S', time.localtime(record.created))} "
                f"{record.levelname:<7} {record.name}: {record.getMessage()}"
                + (f"  [{fields}]" if fields else ""))
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure(fmt: str = "auto", level: int = logging.WARNING) -> None:
    """Log to stderr, as JSON lines or text (``auto``: text on a terminal, JSON otherwise)."""
    use_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if use_json else TextFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("neo4j").setLevel(logging.WARNING)  # the driver's connection chatter


class RequestContext:
    """ASGI middleware: binds a request id (the client's ``X-Request-ID``, or a new one) to every
    log line made while the request is served, and returns it in ``X-Request-ID``. The time the
    application took until the response started is returned in ``Server-Timing`` (``app;dur=``
    milliseconds): a browser's developer tools show it, and bench.over_http uses it to tell the
    server's own time from the network's and the client's. A bug's 500 is answered here, with
    the id, and logged under it."""

    def __init__(self, app: Any, stats: RequestStats | None = None) -> None:
        self.app = app
        self.stats = stats
        self._next = 0
        self._prefix = f"{int(time.time()) % 100_000:05d}"

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v for k, v in scope["headers"] if k == b"x-request-id"), None)
        self._next += 1
        rid = given.decode("latin-1")[:64] if given else f"{self._prefix}-{self._next}"

        started = time.perf_counter()
        answering = False

        async def send_with_id(message: MutableMapping[str, Any]) -> None:
            nonlocal answering
            if message["type"] == "http.response.start":
                answering = True
                seconds = time.perf_counter() - started
                took = f"app;dur={seconds * 1000:.2f}"
                if self.stats is not None:  # the route's template, set by the router inside us
                    route = getattr(scope.get("route"), "path", None)
                    self.stats.observe(scope["method"], route, message["status"], seconds)
                message["headers"] = [*message.get("headers", []),
                                      (b"x-request-id", rid.encode("latin-1")),
                                      (b"server-timing", took.encode("latin-1"))]
            await send(message)

        with bound(request=rid):
            try:
                await self.app(scope, receive, send_with_id)
            except Exception as e:
                if answering:
                    raise  # too late for an answer: the server closes the connection
                # a bug: answered here rather than by the server error middleware outside us, so
                # that the 500 and its log line carry the request id the user will quote
                from api import errors  # the API's (FastAPI's) errors: not for the CLI's start

                await errors.unexpected(e)(scope, receive, send_with_id)

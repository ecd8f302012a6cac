"""The HTTP server under the API: uvicorn's httptools protocol with limits of its own.

uvicorn reads a request's head whatever its size before the application sees it (a 64-256 MB
header was read and parsed, blocking the event loop for minutes) and keeps a connection that sends
nothing, half a head or half a body open for as long as the client likes. This protocol:

* serves a request that offers to upgrade the connection to a protocol it does not speak
  (``Upgrade: h2c``) as plain HTTP/1.1 (:func:`without_upgrade`);
* after answering a request before its body was read (a 413 for a body too large), takes in
  and drops the rest of the body before it closes, so that a client that sends the whole body
  before it reads can read the answer (a close with unread data is a reset);
* refuses a request head over ``head_bytes`` (64 KiB by default) or with more than ``headers``
  header lines (100) with 431, before the parser has seen the excess, and closes the connection;
* closes a connection on which the client, owing a request (nothing yet, a partial head or a
  partial body), sends nothing for ``idle_seconds`` (20 s; 408 when a request was under way).
  The clock restarts with every chunk received, so a slow but steady upload goes on, and stops
  while the application works on a request it has whole;
* and, since a client can trickle a byte now and then forever, gives a request a time of its
  own: its head must be whole within twice ``idle_seconds`` of its first byte, and its body
  within four times ``idle_seconds`` plus a second per :data:`BODY_RATE` bytes it declares (408
  otherwise).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEAD_BYTES = 64 * 1024
HEADERS = 100
IDLE_SECONDS = 20.0
BODY_RATE = 16 * 1024
"""The slowest upload, in bytes per second, a body is given time for beyond its idle allowance."""


def _response(status: bytes, message: str) -> bytes:
    body = message.encode()
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)


class LimitedHttpProtocol(HttpToolsProtocol):
    """HttpToolsProtocol with bounded request heads and an idle timeout while a request is owed."""

    head_bytes = HEAD_BYTES
    headers_max = HEADERS
    idle_seconds = IDLE_SECONDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head = b""  # the current request head, held until it is whole
        self._draining: int | None = None  # bytes dropped while lingering before a close
        self._answered = False  # the response went out before the request's body was through
        self._in_head = True
        self._owed = True  # the client owes us (the rest of) a request
        self._started = False  # some of a request has arrived
        self._idle: asyncio.TimerHandle | None = None
        self._deadline: asyncio.TimerHandle | None = None  # the request's own time, see above

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_Lingering(transport, self))  # type: ignore[arg-type]
        self._arm()

    def linger(self, transport: asyncio.Transport) -> None:
        """Close the connection, but first take in (and drop) what the client still sends of a
        request answered before its body was read (a 413): closing with unread data makes the
        kernel reset the connection, and the client would never read the answer. Bounded by
        :data:`LINGER_BYTES` and by ``idle_seconds`` without data."""
        if not self._owed or self._draining is not None or transport.is_closing():
            transport.close()
            return
        self._draining = 0
        self._disarm()
        self._no_deadline()
        self.flow.resume_reading()
        self._idle = self.loop.call_later(self.idle_seconds, transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._no_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._draining is not None:
            self._draining += len(data)
            self._disarm()
            if self._draining > LINGER_BYTES:
                self._close_now()
            else:
                self._idle = self.loop.call_later(self.idle_seconds, self._close_now)
            return
        if self._owed:
            self._arm()
        if self._in_head:
            # the head is held until it is whole (it is bounded), so that it can be read as one
            data = self._head + data
            end = data.find(b"\r\n\r\n")
            head = len(data) if end < 0 else end + 4
            if head > self.head_bytes:
                self._refuse(b"431 Request Header Fields Too Large",
                             f"request head over {self.head_bytes} bytes")
                return
            # lines of the head: the request line, the headers and the empty line that ends them
            if data.count(b"\n", 0, head) > self.headers_max + 2:
                self._refuse(b"431 Request Header Fields Too Large",
                             f"more than {self.headers_max} header lines")
                return
            if not self._started:
                self._started = True
                self._set_deadline(2 * self.idle_seconds, "its head")
            if end < 0:
                self._head = data
                return
            self._head, self._in_head = b"", False
            data = without_upgrade(data[:head]) + data[head:]
        super().data_received(data)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        declared = dict(self.headers).get(b"content-length", b"")
        size = int(declared) if declared.isdigit() else 0
        self._set_deadline(4 * self.idle_seconds + size / BODY_RATE, "its body")

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._owed = False
        self._disarm()
        self._no_deadline()
        if self._answered:  # answered before its body came: the next request starts now
            self._next_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._owed:
            # answered before the body was read (a 413): the parser still reads that body, which
            # is no next request's head; the next one starts once the body is through
            self._answered = True
            return
        self._next_request()

    def _next_request(self) -> None:
        self._head, self._in_head, self._owed, self._started = b"", True, True, False
        self._answered = False
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._idle = self.loop.call_later(self.idle_seconds, self._idle_out)

    def _disarm(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _set_deadline(self, seconds: float, what: str) -> None:
        self._no_deadline()
        self._deadline = self.loop.call_later(seconds, self._late, seconds, what)

    def _no_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _late(self, seconds: float, what: str) -> None:
        if self.transport.is_closing() or not self._owed:
            return
        self._disarm()
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(_response(b"408 Request Timeout",
                                           f"the request did not send {what} within {seconds:g} s"))
        self._close_now()

    def _idle_out(self) -> None:
        if self.transport.is_closing() or not self._owed:
            return
        if self._started and (self.cycle is None or not self.cycle.response_started):
            self.transport.write(_response(b"408 Request Timeout",
                                           f"no data for {self.idle_seconds:g} s"))
        self._close_now()

    def _close_now(self) -> None:
        """Close without lingering: the client is past its time, or its head past its size."""
        self.transport._transport.close()  # type: ignore[attr-defined]

    def _refuse(self, status: bytes, message: str) -> None:
        self._disarm()
        self.transport.write(_response(status, message))
        self._close_now()


LINGER_BYTES = 1024 * 2**20
"""The most a connection takes in (and drops) after answering a request before its body."""


class _Lingering:
    """The connection's transport as the request cycles see it: their close lingers
    (:meth:`LimitedHttpProtocol.linger`)."""

    def __init__(self, transport: asyncio.Transport, protocol: LimitedHttpProtocol) -> None:
        self._transport = transport
        self._protocol = protocol

    def close(self) -> None:
        self._protocol.linger(self._transport)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


_UPGRADE_HEADERS = (b"upgrade", b"http2-settings")


def without_upgrade(head: bytes) -> bytes:
    """A request head without an offer to upgrade the connection to a protocol this server does
    not speak (``Upgrade: h2c`` with ``HTTP2-Settings``, as Java's HttpClient sends over http://
    by default): the request is served as HTTP/1.1, body and all, as RFC 9110 lets a server do.
    Without this the parser stops at the upgrade and the body is lost. A WebSocket offer is kept."""
    lines = head.split(b"\r\n")
    offered = [line.split(b":", 1)[1].strip().lower() for line in lines[1:]
               if line.split(b":", 1)[0].strip().lower() == b"upgrade" and b":" in line]
    if not offered or offered == [b"websocket"]:
        return head
    kept = [lines[0]]
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name in _UPGRADE_HEADERS:
            continue
        if name == b"connection":
            tokens = [t.strip() for t in value.split(b",")
                      if t.strip() and t.strip().lower() not in _UPGRADE_HEADERS]
            if not tokens:
                continue
            line = b"Connection: " + b", ".join(tokens)
        kept.append(line)
    return b"\r\n".join(kept)


def limited(head_bytes: int, headers: int, idle_seconds: float) -> type[LimitedHttpProtocol]:
    """The protocol class with these limits (uvicorn takes a class)."""
    return type("ConfiguredHttpProtocol", (LimitedHttpProtocol,),
                {"head_bytes": head_bytes, "headers_max": headers, "idle_seconds": idle_seconds})

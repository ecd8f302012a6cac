"""A lean HTTP/1.1 client for the benches' load: one kept-alive connection, bodies given as bytes.

The benches' clients share the machine's two cores with the servers they measure, so what a
client spends per request is taken from the server under test; `http.client` with `json.dumps`
per request costs several times what this client does (its response parsing goes through
`email.parser`; measured in docs/benchmarks.md, "the bench's own clients").
It speaks to any HTTP/1.1 server: bodies by content-length, chunked or up to the close.
"""

from __future__ import annotations

import json
import socket
from typing import Any

_HEAD_MAX = 64 * 1024


class ServerClosed(ConnectionError):
    """The server closed the connection before answering (a kept-alive connection it dropped)."""


class Connection:
    """One kept-alive connection to ``host:port``, opened on first use and again after a close."""

    def __init__(self, host: str, port: int, timeout: float = 60.0) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self._sock: socket.socket | None = None
        self._buf = b""

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock, self._buf = None, b""

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, bytes]:
        """Send one request and read its whole answer: (status, body).

        A kept-alive connection the server had closed is opened again once, and only when nothing
        of the answer arrived (a request that timed out is not sent twice). A timeout raises
        TimeoutError and closes the connection."""
        head = f"{method} {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
        if body is not None:
            head += f"content-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
        data = head.encode("latin-1") + b"\r\n" + (body or b"")
        reused = self._sock is not None
        try:
            return self._exchange(method, data)
        except (ServerClosed, BrokenPipeError, ConnectionResetError):
            self.close()
            if not reused:
                raise
        except BaseException:
            self.close()
            raise
        try:
            return self._exchange(method, data)
        except BaseException:
            self.close()
            raise

    def _exchange(self, method: str, data: bytes) -> tuple[int, bytes]:
        if self._sock is None:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.settimeout(self.timeout)
        self._sock.sendall(data)
        while True:
            status, headers = self._head()
            if not 100 <= status < 200:
                break
        if method == "HEAD" or status in (204, 304):
            out = b""
        elif "chunked" in headers.get("transfer-encoding", ""):
            out = self._chunked()
        elif "content-length" in headers:
            out = self._exactly(int(headers["content-length"]))
        else:  # the body ends where the connection does
            out = self._until_close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, out

    def _more(self) -> bool:
        """Read what the socket has into the buffer; False at the end of the stream."""
        assert self._sock is not None
        chunk = self._sock.recv(65536)
        self._buf += chunk
        return bool(chunk)

    def _head(self) -> tuple[int, dict[str, str]]:
        first = True
        while (end := self._buf.find(b"\r\n\r\n")) < 0:
            if len(self._buf) > _HEAD_MAX:
                raise ConnectionError(f"an answer's head longer than {_HEAD_MAX} bytes")
            if not self._more():
                if first and not self._buf:
                    raise ServerClosed(f"{self.host}:{self.port} closed the connection")
                raise ConnectionError("the connection closed inside an answer's head")
            first = False
        lines = self._buf[:end].decode("latin-1").split("\r\n")
        self._buf = self._buf[end + 4:]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise ConnectionError(f"not an HTTP answer: {lines[0][:100]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(parts[1]), headers

    def _exactly(self, n: int) -> bytes:
        while len(self._buf) < n:
            if not self._more():
                raise ConnectionError("the connection closed inside an answer's body")
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _line(self) -> bytes:
        while (end := self._buf.find(b"\r\n")) < 0:
            if not self._more():
                raise ConnectionError("the connection closed inside a chunked body")
        out, self._buf = self._buf[:end], self._buf[end + 2:]
        return out

    def _chunked(self) -> bytes:
        parts = []
        while size := int(self._line().split(b";")[0].strip() or b"0", 16):
            parts.append(self._exactly(size))
            self._line()  # the CRLF after the chunk
        while self._line():  # trailers, up to the empty line
            pass
        return b"".join(parts)

    def _until_close(self) -> bytes:
        while self._more():
            pass
        out = self._buf
        self.close()
        return out


def payloads(events: list[dict[str, Any]], clients: int, per_request: int) -> list[list[bytes]]:
    """Each client's request bodies, encoded before any clock starts (a producer's encoding is
    its own machine's work, not the server's)."""
    out = []
    for k in range(clients):
        mine = events[k::clients]
        out.append([json.dumps(mine[i] if per_request == 1 else mine[i:i + per_request]).encode()
                    for i in range(0, len(mine), per_request)])
    return out

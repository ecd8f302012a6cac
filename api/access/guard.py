"""Access in front of every route (docs/access.md): the caller's grant, its write namespaces, the
redaction of what it may not see, and the audit of every read.

For a caller whose grant hides something:

* a request that names a hidden namespace, node or column (a query parameter, a Marquez path
  segment, a ``nodeId``, an object of a question asked by POST) is served as if the name did
  not exist: the name is swapped for one no node has before routing, and swapped back in the
  answer, so the answer (a 404, an empty page) is the one a missing name gets;
* the answer is redacted (``api.access.redact``): JSON answers node by node, text answers (CSV,
  Markdown, HTML, Prometheus' format) name by name; headers ``Lineage-Redacted`` (how many nodes
  and names) and ``Lineage-Redacted-Ask`` (whom to ask) say what was.

A write (any method but GET, HEAD and OPTIONS, except the questions asked by POST) on a Marquez
path of a namespace the grant does not write is refused with 403 naming it; other writes that name
no namespace need ``write: ['*']``. Events (``POST /api/v1/lineage``) are checked by their route,
before anything is logged (``refused_namespace``).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, unquote, urlencode

import orjson

from api import errors
from api.access.audit import Read
from api.access.hidden import Hidden
from api.access.redact import (
    Redaction,
    answer_keys,
    drop_hidden_results,
    redact,
    redact_text,
    without_hidden,
)
from api.auth import BadToken, signed_in
from api.guard import SAFE_METHODS, App, Receive, Scope, Send, client_host, header_of
from api.paths import SLASH
from impact.access.grants import Grant

if TYPE_CHECKING:
    from api.deps import AppContext

UNAUDITED = frozenset({"/health", "/ready"})
QUESTIONS_BY_POST = frozenset({"/api/v1/impact/check", "/api/v1/erasure/plan",
                               "/api/v1/erasure/status"})
EVENTS = "/api/v1/lineage"
INLINE_BYTES = 1 << 20
"""An answer up to this size is first searched for hidden names on the event loop (one pass in C):
most answers hold none and go out as they are."""
REDACT_INLINE_BYTES = 64 * 1024
"""An answer up to this size that names something hidden is redacted on the event loop (about
3 ms for 50 KB, docs/benchmarks.md "Access"); a larger one on a thread, not to hold the loop."""
GRANT = "lineage.grant"
"""The scope key of the caller's grant (None: a token of LINEAGE_API_TOKENS, or no tokens)."""
_NAMED_BY = ("name", "dataset", "job")


def caller(scope: Scope, found: AppContext) -> tuple[Grant | None, str, str | None]:
    """The caller's grant, who it is for the audit log and its counts (the grant's name), and
    the user a trusted proxy names, if one does."""
    header = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
    kind, _, given = header.decode("latin-1").partition(" ")
    token = given.strip() if kind.lower() == "bearer" and given.strip() else None
    if token is not None:
        grant = found.access.grant_of(token) if found.access is not None else None
        if grant is not None:
            return grant, grant.name, None
        if found.tokens.scope_of(token):
            return None, "token", None
    try:
        signed = signed_in(found.access, client_host(scope), header_of(scope), token)
    except BadToken:
        signed = None
    if signed is not None:
        return signed.grant, signed.grant.name if signed.grant else "signed-in", signed.who
    if token is not None:
        return None, "unknown-token", None
    return None, "anonymous" if found.tokens.enabled else "loopback", None


def refused_namespace(grant: Grant | None, namespaces: set[str]) -> str | None:
    """The first of ``namespaces`` ``grant`` may not write, if any."""
    if grant is None:
        return None
    return next((ns for ns in sorted(namespaces) if not grant.writes(ns)), None)


class AccessGuard:
    def __init__(self, app: App, found: AppContext,
                 described: Callable[[], dict[str, Any]]) -> None:
        self.app, self.found = app, found
        self._described = described
        self._keys: frozenset[str] | None = None

    def answer_keys(self) -> frozenset[str]:
        if self._keys is None:
            self._keys = answer_keys(self._described())
        return self._keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in UNAUDITED:
            await self.app(scope, receive, send)
            return
        grant, who, user = caller(scope, self.found)
        scope[GRANT] = grant  # in place: the router's "route" must reach the request log outside
        method, path = scope.get("method", "GET"), scope.get("path", "")
        if method not in SAFE_METHODS and path not in QUESTIONS_BY_POST:
            refusal = self._write_refusal(grant, path)
            if refusal is not None:
                await _answer(send, 403, refusal)
                return
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        if grant is not None and grant.restricted:
            hidden = self.found.hidden.kept(grant)
            if hidden is None:
                hidden = await asyncio.to_thread(self.found.hidden.of, grant)
            status, size, redacted = await self._redacted(scope, receive, send, hidden)
        else:
            status, size, redacted = await _measured(self.app, scope, receive, send)
        self.found.audit.record(Read(
            who, method, path, scope.get("query_string", b"").decode("latin-1"), status, size,
            redacted, (time.perf_counter() - started) * 1000, user))

    def _write_refusal(self, grant: Grant | None, path: str) -> str | None:
        if grant is None or path == EVENTS:
            return None
        parts = path.split("/")
        if len(parts) > 4 and parts[1:4] == ["api", "v1", "namespaces"]:
            namespace = parts[4].replace(SLASH, "/")
            if not grant.writes(namespace):
                return (f"the grant {grant.name!r} may not write namespace {namespace!r} "
                        f"(it writes: {', '.join(grant.write) or 'nothing'})")
            return None
        if not grant.writes_everything():
            return (f"the grant {grant.name!r} may not make writes that name no namespace "
                    "(they need write: ['*'])")
        return None

    async def _redacted(self, scope: Scope, receive: Receive, send: Send,
                        hidden: Hidden) -> tuple[int, int, dict[str, int]]:
        asked, swapped = _swap_hidden_names(scope, hidden)
        if scope.get("method") == "POST" and scope.get("path") in QUESTIONS_BY_POST:
            receive = await _body_swapped(asked, receive, hidden, swapped)
        start: MutableMapping[str, Any] = {}
        chunks: list[bytes] = []

        async def keep(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(asked, receive, keep)
        if "route" in asked:  # the path template, for the request log outside
            scope["route"] = asked["route"]
        body = b"".join(chunks)
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        media = next((v for k, v in headers if k.lower() == b"content-type"), b"").decode("latin-1")
        status = int(start.get("status", 500))
        # nothing loaded since the names were read (else a node of a hidden namespace loaded
        # since holds no name they know, and only the walk finds it)
        current = self.found.hidden.current(hidden)
        redact_args = (body, media, hidden, self.answer_keys(),
                       scope.get("path") == "/api/v1/search", status >= 400, current)
        if len(body) <= INLINE_BYTES and current and \
                not hidden.may_name(body.decode("utf-8", "replace"), _request_text(scope)):
            done = Redaction()  # no hidden name in it
        elif len(body) <= REDACT_INLINE_BYTES:
            body, done = _redact_body(*redact_args)  # a few milliseconds: no thread to wait for
        else:
            body, done = await asyncio.to_thread(_redact_body, *redact_args)
        back = dict(swapped)
        if status >= 400:  # an error says back the names it was given, as a missing name's does
            back.update({hidden.opaque(v): v for v in _given(scope)})
        for placeholder, original in back.items():  # as the answer's format writes it
            written = json.dumps(original, ensure_ascii=False)[1:-1] if "json" in media else original
            body = body.replace(placeholder.encode(), written.encode("utf-8"))
        headers += [(b"content-length", str(len(body)).encode()),
                    (b"lineage-redacted", str(done.count).encode())]
        if done.asks:
            headers.append((b"lineage-redacted-ask", "; ".join(sorted(done.asks)).encode("utf-8")))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return status, len(body), {**done.nodes, "names": done.names}


async def _body_swapped(scope: Scope, receive: Receive, hidden: Hidden,
                        swapped: dict[str, str]) -> Receive:
    """What the route receives of a question asked by POST: its body read whole (as the route
    reads it) with each hidden name it gives swapped for a placeholder, as a query's are;
    ``swapped`` learns the placeholders."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = _swapped_body(b"".join(chunks), hidden, swapper(swapped))
    scope["headers"] = [(k, v) for k, v in scope["headers"] if k != b"content-length"] + [
        (b"content-length", str(len(body)).encode())]
    sent = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal sent
        if sent:
            return await receive()  # the client's disconnect, when it comes
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _redact_body(body: bytes, media: str, hidden: Hidden, keys: frozenset[str],
                 search: bool, error: bool, current: bool = False) -> tuple[bytes, Redaction]:
    if "json" in media and "ndjson" not in media and body:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            value = None
        if value is not None:
            if search:
                value = drop_hidden_results(value, hidden)
            shown, done = redact(value, hidden, keys, current)
            return orjson.dumps(without_hidden(shown) if error else shown), done
    if media.startswith("text/") or "ndjson" in media or "json" in media:
        text, done = redact_text(body.decode("utf-8", "replace"), hidden)
        if "ndjson" in media:
            lines = [redact(orjson.loads(line), hidden, keys) for line in text.splitlines() if line]
            for _, d in lines:
                done.nodes.update({k: done.nodes.get(k, 0) + n for k, n in d.nodes.items()})
                done.names += d.names
                done.asks |= d.asks
            text = "".join(orjson.dumps(v).decode() + "\n" for v, _ in lines)
        return text.encode("utf-8"), done
    return body, Redaction()


def _request_text(scope: Scope) -> str:
    """The request's path and query as text: the names it asks about (an answer may leave them
    unsaid)."""
    query = unquote(scope.get("query_string", b"").decode("latin-1").replace("+", " "))
    return f"{scope.get('path', '').replace(SLASH, '/')}?{query}"


def _swap_hidden_names(scope: Scope, hidden: Hidden) -> tuple[Scope, dict[str, str]]:
    """The request with each hidden name it gives swapped for a placeholder no node has."""
    swapped: dict[str, str] = {}
    swap = swapper(swapped)

    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if query:
        given = dict(query)
        renamed = _renamed(given, hidden, swap)
        node_id = given.get("nodeId")
        if node_id is not None and _node_id_hidden(node_id, hidden):
            kind, _, rest = node_id.partition(":")
            renamed["nodeId"] = f"{kind}:{swap(rest)}"
        if renamed:
            query = [(k, renamed.get(k, v)) for k, v in query]
            scope = {**scope, "query_string": urlencode(query).encode("latin-1")}
    parts = scope.get("path", "").split("/")
    if len(parts) > 4 and parts[1:4] == ["api", "v1", "namespaces"]:
        namespace = parts[4].replace(SLASH, "/")
        if hidden.namespace_hidden(namespace):
            parts[4] = swap(namespace)
        elif len(parts) > 6 and parts[5] in ("datasets", "jobs"):
            name = parts[6].replace(SLASH, "/")
            if hidden.node_hidden(namespace, name):
                parts[6] = swap(name)
            elif len(parts) > 8 and parts[7] == "fields" and hidden.column_hidden(
                    namespace, name, unquote(parts[8])):
                parts[8] = swap(parts[8])
        path = "/".join(parts)
        if path != scope["path"]:
            scope = {**scope, "path": path,
                     "raw_path": quote(path.replace(SLASH, "/")).encode("latin-1")}
    return scope, swapped


def swapper(swapped: dict[str, str]) -> Callable[[str], str]:
    """A function giving a name's placeholder, which ``swapped`` keeps (placeholder: name): a
    name no node has, so that a hidden name asked for is answered as a missing one (the API's
    requests here, the command line's arguments in api.cli.access)."""
    def swap(value: str) -> str:
        placeholder = f"nothing-{secrets.token_hex(8)}"
        swapped[placeholder] = value
        return placeholder
    return swap


def _renamed(given: Mapping[str, Any], hidden: Hidden, swap: Callable[[str], str]) -> dict[str, str]:
    """The values of ``given`` (a query, or an object of a request's body) that name what the
    grant may not see, swapped: a hidden namespace, a hidden node of a visible one (``name``,
    ``dataset`` or ``job``), a hidden column (``column`` or ``field``)."""
    namespace = given.get("namespace")
    if not isinstance(namespace, str):
        return {}
    if hidden.namespace_hidden(namespace):
        return {"namespace": swap(namespace)}
    renamed: dict[str, str] = {}
    for key in _NAMED_BY:
        name = given.get(key)
        if isinstance(name, str) and hidden.node_hidden(namespace, name):
            renamed[key] = swap(name)
    dataset = given.get("dataset", given.get("name"))
    column = given.get("column", given.get("field"))
    if isinstance(dataset, str) and isinstance(column, str) and hidden.column_hidden(
            namespace, dataset, column):
        renamed["column" if "column" in given else "field"] = swap(column)
    return renamed


def _swapped_body(body: bytes, hidden: Hidden, swap: Callable[[str], str]) -> bytes:
    """A question's JSON body (the erasure plan's keys, a change file, an OpenLineage event) with
    each object that names something hidden renamed as :func:`_renamed` does (a change's
    ``job_namespace`` and ``job`` too); a body that is not JSON goes as it is, for the route to
    refuse."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    changed = False

    def walk(node: Any) -> Any:
        nonlocal changed
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items()}
        # a change's job is named in its own namespace (job_namespace), not the dataset's
        renamed = _renamed({k: v for k, v in out.items()
                            if not (k == "job" and "job_namespace" in out)}, hidden, swap)
        job = _renamed({"namespace": out.get("job_namespace"), "job": out.get("job")}, hidden, swap)
        renamed |= {"job_namespace" if k == "namespace" else k: v for k, v in job.items()}
        changed = changed or bool(renamed)
        return out | renamed

    swapped = walk(value)
    return orjson.dumps(swapped) if changed else body


def _given(scope: Scope) -> set[str]:
    """The names a request gives: its query's values, its path's segments (and their parts)."""
    found = {v for _, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))}
    found |= {p.replace(SLASH, "/") for p in scope.get("path", "").split("/") if p}
    return found | {part for v in list(found) for part in v.split(":") if part}


def _node_id_hidden(node_id: str, hidden: Hidden) -> bool:
    """Whether a Marquez node id (``dataset:NS:NAME``, ``job:NS:NAME``, ``datasetField:NS:NAME:F``)
    names a node the grant may not see, for any reading of where its namespace ends."""
    kind, _, rest = node_id.partition(":")
    cuts = [i for i, ch in enumerate(rest) if ch == ":"]
    for i in cuts:
        namespace, name = rest[:i], rest[i + 1:]
        if namespace in hidden.namespaces:
            return True
        if hidden.namespace_hidden(namespace):
            continue  # no such namespace: a longer one may be
        if kind == "datasetField":
            dataset, _, column = name.rpartition(":")
            if dataset and hidden.column_hidden(namespace, dataset, column):
                return True
        elif hidden.node_hidden(namespace, name):
            return True
    return False


async def _measured(app: App, scope: Scope, receive: Receive,
                    send: Send) -> tuple[int, int, dict[str, int]]:
    status, size = 500, 0

    async def counting(message: MutableMapping[str, Any]) -> None:
        nonlocal status, size
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body":
            size += len(message.get("body", b""))
        await send(message)

    await app(scope, receive, counting)
    return status, size, {}


async def _answer(send: Send, status: int, message: str) -> None:
    body = json.dumps(errors.body(status, message)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})

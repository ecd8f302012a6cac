"""The HTTP API (FastAPI): the four questions, freshness, lookups, and Marquez-compatible lineage.

Every read is one named Cypher query in a read transaction with the configured timeout; parameters
are always passed as parameters. Depth and page sizes are clamped; unknown nodes give 404 saying
what was looked for; bad parameters 422 naming the field; Neo4j down gives 503 with Retry-After.
Run it with ``lineage serve``; OpenAPI docs at ``/docs``.
"""


import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Body, Depends, FastAPI, HTTPException, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from api.auth import Tokens, is_loopback, parse_tokens
from api.guard import Guard
from api.metrics import Counters, render
from api.receive import BodyError, check_media_type, parse
from graph.db import Graph
from graph.errors import DatabaseUnavailable, NotFound, QueryError, QueryTimeout
from graph.settings import Settings, get_settings
from impact import blast_radius as br
from impact import check as check_mod
from impact import freshness as fr
from impact import gdpr, root_cause, upstream
from impact import lineage_graph as lg
from ingest.log import GroupCommitter, LogError, SQLiteLog
from ingest.times import parse_time

log = logging.getLogger(__name__)

API = "/api/v1"
RETRY_AFTER_S = 5
LOG_APPEND_TIMEOUT_S = 60


def create_app(settings: Settings | None = None, graph: Graph | None = None,
               events: SQLiteLog | None = None) -> FastAPI:
    """The application. ``graph`` and the event log are opened from ``settings`` on first use."""
    settings = settings or get_settings()
    tokens = parse_tokens(settings.api_tokens)
    state: dict[str, Graph] = {} if graph is None else {"graph": graph}
    logs: dict[str, Any] = {} if events is None else {"log": events}
    counters = Counters()

    def get_log() -> SQLiteLog:
        if "log" not in logs:
            logs["log"] = SQLiteLog(settings.log_path)
        found: SQLiteLog = logs["log"]
        return found

    def committer() -> GroupCommitter:
        if "committer" not in logs:
            logs["committer"] = GroupCommitter(get_log())
        found: GroupCommitter = logs["committer"]
        return found

    def get_graph() -> Graph:
        if "graph" not in state:
            from graph.db import connect

            state["graph"] = Graph(connect(settings, retry_time=2.0), timeout=settings.query_timeout)
        return state["graph"]

    app = FastAPI(
        title="lineage-graph",
        version="0.1.0",
        summary="OpenLineage lineage on Neo4j: blast radius, root cause, GDPR reach, lineage graphs.",
        description=__doc__,
    )
    app.state.settings = settings
    app.state.tokens = tokens
    app.add_middleware(Guard, tokens=tokens)
    _errors(app)

    read = Depends(_require(tokens, "read"))
    may_write = _require(tokens, "write")
    G = Annotated[Graph, Depends(get_graph)]
    Depth = Annotated[int | None, Query(ge=1, description="Hops to follow; default 20, clamped to 50.")]
    AsOf = Annotated[str | None, Query(alias="asOf", description="ISO time: only lineage seen by then.")]
    Ns = Annotated[str, Query(min_length=1, description="Namespace, e.g. postgres://db:5432")]
    Name = Annotated[str, Query(min_length=1, description="Dataset or job name")]
    Limit = Annotated[int, Query(ge=1, description="Page size (clamped to the configured maximum).")]
    Offset = Annotated[int, Query(ge=0, le=2_000_000_000, description="Rows to skip.")]

    @app.get("/health", tags=["ops"], summary="Alive")
    async def health() -> dict[str, str]:
        # async: answered on the event loop at once, never queued behind busy worker threads
        return {"status": "ok"}

    @app.post(f"{API}/lineage", tags=["ingest"], status_code=201,
              summary="Receive OpenLineage events: one, a JSON array, or NDJSON",
              responses={201: {"description": "at least one event accepted (durably logged)"},
                         400: {"description": "no event accepted, or the body is not JSON"},
                         413: {"description": "body over the size limit"},
                         415: {"description": "not JSON or NDJSON"}})
    async def receive(request: Request) -> JSONResponse:
        # the token check is called here, not declared as a dependency: FastAPI's dependency
        # machinery was a good part of the cost of a one-event request
        await may_write(request)
        try:
            kind = check_media_type(request.headers.get("content-type"))
            declared = request.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > settings.max_body_bytes:
                raise BodyError(413, f"body of {declared} bytes is over the limit of "
                                     f"{settings.max_body_bytes} bytes: split it")
            body = bytearray()
            async for chunk in request.stream():
                body += chunk
                if len(body) > settings.max_body_bytes:
                    raise BodyError(413, f"body is over the limit of {settings.max_body_bytes} "
                                         "bytes: split it")
            verdict = parse(bytes(body), kind, settings.log_raw_events)
        except BodyError as e:
            counters.add(rejected={_reason(e.status): 1}, status=e.status)
            return JSONResponse({"error": e.message}, status_code=e.status)
        rejected_by = {"invalid_event": len(verdict.rejected)} if verdict.rejected else {}
        if not verdict.accepted:
            counters.add(rejected=rejected_by, status=400)
            return JSONResponse({"accepted": 0, "rejected": verdict.rejected}, status_code=400)
        try:
            queued = committer().enqueue(verdict.accepted)
        except ValueError as e:  # validation lets no such event through: a last guard
            counters.add(rejected={"invalid_event": len(verdict.accepted)}, status=400)
            return JSONResponse({"error": f"events cannot be stored: {e}"}, status_code=400)
        try:
            # awaited on the event loop (no thread hop); shielded so a timeout leaves the append
            # itself alone
            seqs = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(queued)),
                                          LOG_APPEND_TIMEOUT_S)
        except LogError as e:
            log.error("event log append failed: %s", e)
            counters.add(status=503)
            return JSONResponse({"error": "the event log cannot be written; nothing was accepted",
                                 "detail": str(e)}, status_code=503,
                                headers={"Retry-After": str(RETRY_AFTER_S)})
        except TimeoutError:
            log.error("event log append not confirmed within %s s", LOG_APPEND_TIMEOUT_S)
            counters.add(status=503)
            return JSONResponse({"error": f"the event log did not confirm the write within "
                                          f"{LOG_APPEND_TIMEOUT_S} s; send the events again (an "
                                          "event sent twice is recognised and loaded once)"},
                                status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})
        counters.add(accepted=len(seqs), rejected=rejected_by, status=201)
        return JSONResponse({"accepted": len(seqs), "first_seq": seqs[0], "last_seq": seqs[-1],
                             "rejected": verdict.rejected}, status_code=201)

    @app.post(f"{API}/impact/check", tags=["questions"], dependencies=[read],
              summary="Pre-deploy check of a proposed change: BREAKING / RISKY / SAFE per consumer")
    def impact_check(graph: G, body: Annotated[dict[str, Any], Body(
            description="A change document, as for `lineage check`: {changes: [...]}, an "
                        "OpenLineage event, {namespace, dataset, columns}, or {job, namespace, sql}")],
                     depth: Depth = None, as_of: AsOf = None,
                     stale_days: Annotated[int, Query(ge=0, le=36_500)] = 30,
                     exclude_stale: bool = False) -> Any:
        try:
            changes = check_mod.parse_change(body, graph)
            report = check_mod.check(graph, changes, depth=br.clamp_depth(depth), as_of=_time(as_of),
                                     stale_days=stale_days, exclude_stale=exclude_stale)
        except check_mod.CheckInputError as e:
            raise _BadParam("body", str(e)) from e
        return _json(report)

    @app.get("/ready", tags=["ops"], summary="Ready: the log is writable and Neo4j answers")
    def ready() -> JSONResponse:
        checks = {"log": get_log().writable()}
        try:
            get_graph().driver.verify_connectivity()
            checks["neo4j"] = True
        except Exception:
            checks["neo4j"] = False
        ok = all(checks.values())
        return JSONResponse({"ready": ok, "checks": checks}, status_code=200 if ok else 503)

    @app.get("/metrics", tags=["ops"], summary="Prometheus metrics",
             response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(render(counters, get_log()),
                                 media_type="text/plain; version=0.0.4")

    @app.get(f"{API}/namespaces", tags=["lookup"], dependencies=[read])
    def namespaces(graph: G) -> dict[str, Any]:
        return {"namespaces": graph.read("lookup/namespaces")}

    @app.get(f"{API}/datasets", tags=["lookup"], dependencies=[read],
             summary="Datasets with columns and owners, a page at a time")
    def datasets(graph: G, namespace: str | None = None, limit: Limit = 50,
                 offset: Offset = 0) -> Any:
        limit = min(limit, settings.api_max_page)
        rows = graph.read("lookup/datasets", namespace=namespace, skip=offset, limit=limit)
        return _page("datasets", rows, limit, offset)

    @app.get(f"{API}/dataset", tags=["lookup"], dependencies=[read],
             summary="One dataset: columns, owners, writers, readers, neighbours, last run")
    def dataset(graph: G, namespace: Ns, name: Name) -> Any:
        rows = graph.read("lookup/dataset", namespace=namespace, name=name)
        if not rows:
            raise NotFound("dataset", f"{namespace}:{name}")
        return _json(_lean(rows[0]))

    @app.get(f"{API}/jobs", tags=["lookup"], dependencies=[read],
             summary="Jobs with their latest run, a page at a time")
    def jobs(graph: G, namespace: str | None = None, limit: Limit = 50, offset: Offset = 0) -> Any:
        limit = min(limit, settings.api_max_page)
        rows = graph.read("lookup/jobs", namespace=namespace, skip=offset, limit=limit)
        return _page("jobs", rows, limit, offset)

    @app.get(f"{API}/job", tags=["lookup"], dependencies=[read],
             summary="One job: what it reads and writes, its parents and latest runs")
    def job(graph: G, namespace: Ns, name: Name,
            runs: Annotated[int, Query(ge=1, le=100)] = 10) -> Any:
        rows = graph.read("lookup/job", namespace=namespace, name=name, runs=runs)
        if not rows:
            raise NotFound("job", f"{namespace}:{name}")
        return _json(_lean(rows[0]))

    @app.get(f"{API}/runs/{{run_id}}", tags=["lookup"], dependencies=[read],
             summary="One run with its facets, inputs, outputs, parent and children")
    def run(graph: G, run_id: str) -> Any:
        rows = graph.read("lookup/run", runId=run_id)
        if not rows:
            raise NotFound("run", run_id)
        return _json(_lean(rows[0]))

    @app.get(f"{API}/impact/dataset", tags=["questions"], dependencies=[read],
             summary="Blast radius of a dataset: derived datasets and the jobs reading them")
    def impact_dataset(graph: G, namespace: Ns, name: Name, depth: Depth = None,
                       as_of: AsOf = None) -> Any:
        return _json(br.dataset_blast_radius(graph, namespace, name, depth, _time(as_of)))

    @app.get(f"{API}/impact/job", tags=["questions"], dependencies=[read],
             summary="Blast radius of a job: its outputs, what derives from them, who reads them")
    def impact_job(graph: G, namespace: Ns, name: Name, depth: Depth = None, as_of: AsOf = None) -> Any:
        return _json(br.job_blast_radius(graph, namespace, name, depth, _time(as_of)))

    @app.get(f"{API}/impact/column", tags=["questions"], dependencies=[read],
             summary="Blast radius of a column, with each step's transformation")
    def impact_column(graph: G, namespace: Ns, dataset: Name, column: Name,
                      depth: Depth = None, as_of: AsOf = None) -> Any:
        return _json(br.column_blast_radius(graph, namespace, dataset, column, depth, _time(as_of)))

    @app.get(f"{API}/upstream/dataset", tags=["questions"], dependencies=[read],
             summary="Upstream lineage of a dataset")
    def upstream_dataset(graph: G, namespace: Ns, name: Name, depth: Depth = None,
                         as_of: AsOf = None) -> Any:
        return _json(upstream.dataset_upstream(graph, namespace, name, depth, _time(as_of)))

    @app.get(f"{API}/upstream/column", tags=["questions"], dependencies=[read],
             summary="Upstream lineage of a column")
    def upstream_column(graph: G, namespace: Ns, dataset: Name, column: Name,
                        depth: Depth = None, as_of: AsOf = None) -> Any:
        return _json(upstream.column_upstream(graph, namespace, dataset, column, depth, _time(as_of)))

    @app.get(f"{API}/root-cause/dataset", tags=["questions"], dependencies=[read],
             summary="Ranked root-cause candidates for a wrong dataset")
    def root_cause_dataset(graph: G, namespace: Ns, name: Name, depth: Depth = None,
                           as_of: AsOf = None) -> Any:
        return _json(root_cause.root_cause_dataset(graph, namespace, name, depth, _time(as_of)))

    @app.get(f"{API}/root-cause/run/{{run_id}}", tags=["questions"], dependencies=[read],
             summary="Ranked root-cause candidates for a failed or wrong run")
    def root_cause_run(graph: G, run_id: str, depth: Depth = None, as_of: AsOf = None) -> Any:
        return _json(root_cause.root_cause_run(graph, run_id, depth, _time(as_of)))

    @app.get(f"{API}/where", tags=["questions"], dependencies=[read],
             summary="GDPR: every column a column's data reaches, raw / transformed / masked / "
                     "aggregated / influence; JSON or CSV",
             responses={200: {"content": {"text/csv": {}}}})
    def where(graph: G, namespace: Ns, dataset: Name, column: Name, depth: Depth = None,
              as_of: AsOf = None, format: Literal["json", "csv"] = "json") -> Any:
        report = gdpr.where_column_goes(graph, namespace, dataset, column, depth, _time(as_of))
        if format == "csv":
            return PlainTextResponse(report.to_csv(), media_type="text/csv")
        return _json({**dataclasses.asdict(report), "counts": report.counts()})

    @app.get(f"{API}/freshness", tags=["questions"], dependencies=[read],
             summary="Last successful write of a dataset and whether it is late")
    def freshness(graph: G, namespace: Ns, name: Name, as_of: AsOf = None) -> Any:
        f = fr.freshness(graph, namespace, name, _time(as_of))
        return _json({**dataclasses.asdict(f), "verdict": f.verdict})

    @app.get(f"{API}/lineage", tags=["marquez"], dependencies=[read],
             summary="Marquez-compatible lineage graph around a dataset or job")
    def lineage(graph: G, node_id: Annotated[str, Query(alias="nodeId", min_length=3,
                max_length=lg.MAX_NODE_ID,
                description="dataset:NAMESPACE:NAME or job:NAMESPACE:NAME")],
                depth: Depth = None) -> Any:
        return _bad_node(lambda: lg.lineage(graph, node_id, depth))

    @app.get(f"{API}/column-lineage", tags=["marquez"], dependencies=[read],
             summary="Marquez-compatible column lineage around a field (or all fields of a dataset)")
    def column_lineage(graph: G, node_id: Annotated[str, Query(alias="nodeId", min_length=3,
                       max_length=lg.MAX_NODE_ID,
                       description="datasetField:NAMESPACE:DATASET:FIELD or dataset:NAMESPACE:NAME")],
                       depth: Depth = None,
                       with_downstream: Annotated[bool, Query(alias="withDownstream")] = False) -> Any:
        return _bad_node(lambda: lg.column_lineage(graph, node_id, depth, with_downstream))

    return app


def _reason(status: int) -> str:
    return {413: "too_large", 415: "unsupported_media_type"}.get(status, "invalid_body")


def _require(tokens: Tokens, scope: str) -> Callable[[Request], Awaitable[None]]:
    # async, so that FastAPI runs it on the event loop instead of a thread-pool hop per request
    async def check(request: Request) -> None:
        if not tokens.enabled:
            host = request.client.host if request.client else None
            if not is_loopback(host):
                raise HTTPException(403, "no API tokens are configured, so only loopback clients "
                                         "are served; set LINEAGE_API_TOKENS")
            return
        header = request.headers.get("authorization", "")
        kind, _, token = header.partition(" ")
        if kind.lower() != "bearer" or not token:
            raise HTTPException(401, "missing bearer token (Authorization: Bearer TOKEN)",
                                headers={"WWW-Authenticate": "Bearer"})
        if tokens.scope_of(token.strip()) is None:
            raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})
        if not tokens.allows(token.strip(), scope):
            raise HTTPException(403, f"this token lacks the {scope} scope")
    return check


class _BadParam(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _time(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError as e:
        raise _BadParam("asOf", f"not an ISO 8601 time: {e}") from e


def _bad_node(answer: Callable[[], Any]) -> Any:
    try:
        return answer()
    except lg.BadNodeId as e:
        raise _BadParam("nodeId", str(e)) from e


def _json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return jsonable_encoder(value, custom_encoder=_NEO4J_TYPES)


def _lean(row: dict[str, Any]) -> dict[str, Any]:
    """Drop bookkeeping properties (event digests) from a node's properties."""
    props = {k: v for k, v in row["props"].items() if k not in ("events", "propsTime")}
    return {**row, "props": props}


def _page(key: str, rows: list[dict[str, Any]], limit: int, offset: int) -> Any:
    total = rows[0]["total"] if rows else None
    items = [{k: v for k, v in r.items() if k != "total"} for r in rows]
    return _json({key: items, "limit": limit, "offset": offset, "total": total})


def _neo4j_time(value: Any) -> str:
    return str(value.to_native().isoformat())


def _types() -> dict[Any, Callable[[Any], Any]]:
    from neo4j.time import Date, DateTime, Duration

    return {DateTime: _neo4j_time, Date: _neo4j_time, Duration: str}


_NEO4J_TYPES = _types()


def _errors(app: FastAPI) -> None:
    @app.exception_handler(NotFound)
    def not_found(_: Request, e: NotFound) -> JSONResponse:
        return JSONResponse({"error": "not found", "detail": str(e), "kind": e.kind, "key": e.key},
                            status_code=404)

    @app.exception_handler(_BadParam)
    def bad_param(_: Request, e: _BadParam) -> JSONResponse:
        where = "body" if e.field == "body" else "query"
        return JSONResponse({"detail": [{"loc": [where, e.field], "msg": e.message,
                                         "type": "value_error"}]}, status_code=422)

    @app.exception_handler(DatabaseUnavailable)
    def unavailable(_: Request, e: DatabaseUnavailable) -> JSONResponse:
        log.warning("Neo4j unavailable: %s", e)
        return JSONResponse({"error": "database unavailable", "detail": "Neo4j is not answering; "
                             f"retry in {RETRY_AFTER_S} s"}, status_code=503,
                            headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.exception_handler(QueryTimeout)
    def timeout(_: Request, e: QueryTimeout) -> JSONResponse:
        return JSONResponse({"error": "query timed out", "detail": str(e)}, status_code=504)

    @app.exception_handler(QueryError)
    def query_error(_: Request, e: QueryError) -> JSONResponse:
        log.error("query failed: %s", e)
        return JSONResponse({"error": "query failed", "detail": f"query {e.query} failed; see the "
                             "server log"}, status_code=500)

    @app.exception_handler(Exception)
    def internal(_: Request, e: Exception) -> Response:
        log.exception("unhandled error")
        return JSONResponse({"error": "internal error", "detail": type(e).__name__}, status_code=500)



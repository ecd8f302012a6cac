"""The connection to Neo4j: one driver per process, named queries only, each tagged and timed out."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from neo4j import (
    Driver,
    GraphDatabase,
    ManagedTransaction,
    NotificationMinimumSeverity,
    Query,
    Result,
    Transaction,
    unit_of_work,
)
from neo4j.exceptions import (
    AuthError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from neo4j.time import Date, DateTime, Duration, Time

from graph.errors import Busy, DatabaseUnavailable, QueryError, QueryTimeout, TooLarge
from graph.local_server import LocalServer
from graph.queries import NamedQuery, query
from graph.settings import Settings

_T = TypeVar("_T")

log = logging.getLogger(__name__)

QueryStep = tuple[str, dict[str, Any]]
"""A named query and its parameters."""


class _Rows(list[Any]):
    """A list parameter whose ``repr`` is short. The driver formats every RUN's parameters with
    ``repr`` for its debug log whether or not that log is on (neo4j 6.4, ``Bolt5x5.run``): for a
    batch of thousands of rows that cost more than packing them. It packs as the list it
    holds."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} items>"


def _quiet(params: dict[str, Any]) -> dict[str, Any]:
    return {k: _Rows(v) if type(v) is list else v for k, v in params.items()}


def _run(tx: Transaction | ManagedTransaction, step: QueryStep) -> list[dict[str, Any]]:
    """One step in ``tx``, its rows read. Its row lists are emptied afterwards: the driver keeps
    what it sent in objects that refer to each other, which only the cyclic garbage collector
    frees (rarely, in a process that ingests: ingest.pipeline.relax_gc), and the rows would wait
    with them (docs/benchmarks.md, "A worker's memory")."""
    params = _quiet(step[1])
    try:
        return tx.run(query(step[0]).text, params).data()
    finally:
        for value in params.values():
            if type(value) is _Rows:
                value.clear()

# Neo4j's codes for a transaction refused for its memory. They are transient errors, which the
# driver would retry as they are for up to max_transaction_retry_time: the same transaction fails
# the same way (a backlog batch for over a minute per try), so they are raised at once instead.
_MEMORY_CODES = ("MemoryPoolOutOfMemoryError", "TransactionMemoryLimit", "OutOfMemoryError")


def _memory_error(e: Neo4jError) -> bool:
    return any(code in (e.code or "") for code in _MEMORY_CODES)


# values a row holds as they are; lists and maps of them are copied as plain lists and dicts
_AS_IS = frozenset({str, int, float, bool, type(None), DateTime, Date, Time, Duration})


class _Entity(Exception):
    """A row holds a node, relationship or path: the driver's own export flattens those."""


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is list:
        return [v if type(v) in _AS_IS else _plain(v) for v in value]
    if kind is dict:
        return {k: v if type(v) in _AS_IS else _plain(v) for k, v in value.items()}
    raise _Entity


def rows_of(result: Result) -> list[dict[str, Any]]:
    """A result's rows as dicts, the same as ``Result.data()``. That walks every value through
    isinstance checks against abstract types (about a fifth of a 500-row walk's time in the
    driver); rows of plain values are copied by exact type here, and a row holding a node,
    relationship or path goes through the driver's export."""
    keys = result.keys()
    found: list[dict[str, Any]] = []
    for record in result:
        try:
            found.append({k: _plain(v) for k, v in zip(keys, record.values(), strict=True)})
        except _Entity:
            found.append(record.data())
    return found


def connect(settings: Settings, retry_time: float = 30.0) -> Driver:
    """A driver for the configured server: NEO4J_URI if set, else the local provisioned one.

    ``retry_time`` bounds how long a transaction is retried while Neo4j is unreachable: the HTTP
    API keeps it short so a client gets its 503 promptly.
    """
    if settings.uses_local_server:
        server = LocalServer(settings)
        uri, password = server.bolt_uri, server.password()
    else:
        uri, password = cast(str, settings.neo4j_uri), settings.neo4j_password or ""
    # Notifications (e.g. "property key does not exist" on an empty graph) are not errors here.
    return GraphDatabase.driver(uri, auth=(settings.neo4j_user, password),
                                notifications_min_severity=NotificationMinimumSeverity.OFF,
                                max_transaction_retry_time=retry_time)


def open_graph(settings: Settings, retry_time: float = 30.0, readers: int | None = None) -> Graph:
    """A :class:`Graph` on the configured server whose driver (reads) and write loop retry for
    the same ``retry_time``, with the configured query timeout; ``readers``: at most this many
    reads at once."""
    return Graph(connect(settings, retry_time=retry_time), timeout=settings.query_timeout,
                 retry_time=retry_time, readers=readers)


class Graph:
    """Runs named queries on one driver. Owns no I/O until a method is called."""

    def __init__(self, driver: Driver, timeout: float = 30.0, retry_time: float = 30.0,
                 readers: int | None = None) -> None:
        self.driver = driver
        self.timeout = timeout
        self.retry_time = retry_time  # how long a write is retried on transient errors
        # reads at once (None: no bound); the others wait their turn, up to the timeout
        self._turns = threading.BoundedSemaphore(readers) if readers else None

    def close(self) -> None:
        self.driver.close()

    @staticmethod
    def _tag(*names: str) -> dict[str, str]:
        return {"app": "lineage-graph", "query": ",".join(dict.fromkeys(names))}

    def _query(self, named: NamedQuery, statement: str) -> Query:
        return Query(statement, metadata=self._tag(named.name),
                     timeout=self.timeout)

    def write(self, steps: Sequence[QueryStep],
              then: Callable[[list[list[dict[str, Any]]]], Sequence[QueryStep]] | None = None
              ) -> list[tuple[QueryStep, list[dict[str, Any]]]]:
        """Run the steps in order in one write transaction, then, in the same transaction, the
        steps ``then`` returns given their results; returns each step run with its rows. A step's
        query has one statement.

        Retried on transient errors for up to ``retry_time`` seconds, except a refusal for memory:
        Neo4j may raise it at commit, where the driver's managed retries would try the same
        transaction again and again; it is raised at once as :class:`TooLarge` for the caller to
        split. A write has no time limit of its own (the questions' ``timeout`` is for reads): a
        cold or busy server makes it slow, not wrong. A transient error past the retries, or a
        timeout the server imposes, is :class:`Busy`: the data is fine, try again later.
        """
        names = [name for name, _ in steps]  # what an error names: the queries of both rounds

        def work(tx: Transaction) -> list[tuple[QueryStep, list[dict[str, Any]]]]:
            done = [(step, _run(tx, step)) for step in steps]
            if then is not None:
                more = then([rows for _, rows in done])
                names[len(steps):] = [name for name, _ in more]
                done += [(step, _run(tx, step)) for step in more]
            tx.commit()
            return done

        deadline = time.monotonic() + self.retry_time
        for attempt in itertools.count():
            try:
                with self.driver.session() as session, session.begin_transaction(
                        metadata=self._tag(*names)) as tx:
                    return work(tx)
            except (Neo4jError, DriverError) as e:
                retry = e.is_retryable() and not (isinstance(e, Neo4jError) and _memory_error(e))
                if not retry or time.monotonic() >= deadline:
                    error = self._translated(e, names)
                    if isinstance(error, QueryTimeout):
                        error = Busy(f"Neo4j ended the write {','.join(names)} at its own time "
                                     f"limit (db.transaction.timeout): {e}")
                    raise error from e
                log.info("write %s failed (%s); retrying", ",".join(names), e)
                time.sleep(min(0.2 * 2 ** attempt, 5.0, max(0.0, deadline - time.monotonic())))
            except OSError as e:
                raise DatabaseUnavailable(f"Neo4j is unreachable: {e}") from e
        raise AssertionError("unreachable")

    def rehearse(self, steps: Sequence[QueryStep],
                 then: Callable[[list[list[dict[str, Any]]]], Sequence[QueryStep]] | None,
                 inspect: Callable[[Graph], _T]) -> _T:
        """Write as :meth:`write` would, then, in the same transaction, what ``inspect`` asks of
        the graph it is given (which sees those writes), then roll back: the graph as a change
        would leave it, nothing kept. The transaction holds its write locks meanwhile: writes
        to the same nodes wait for it. Not retried: an error is raised as :meth:`read` raises
        it."""
        names = [name for name, _ in steps]
        try:
            with self.driver.session() as session, session.begin_transaction(
                    metadata=self._tag("rehearsal", *names)) as tx:
                results = [_run(tx, step) for step in steps]
                for step in then(results) if then is not None else ():
                    _run(tx, step)
                found = inspect(_InTransaction(self, tx))
                tx.rollback()
                return found
        except (Neo4jError, DriverError) as e:
            raise self._translated(e, names) from e
        except OSError as e:
            raise DatabaseUnavailable(f"Neo4j is unreachable: {e}") from e

    def trial(self, work: Callable[[Graph], _T]) -> _T:
        """What ``work`` finds when it reads and writes the graph it is given, all in one
        transaction that is then rolled back: a maintenance's exact plan, nothing kept. The
        transaction holds every write lock ``work`` takes until it ends."""
        try:
            with self.driver.session() as session, session.begin_transaction(
                    metadata=self._tag("trial")) as tx:
                found = work(_Trial(self, tx))
                tx.rollback()
                return found
        except (Neo4jError, DriverError) as e:
            raise self._translated(e, ["trial"]) from e
        except OSError as e:
            raise DatabaseUnavailable(f"Neo4j is unreachable: {e}") from e

    def read(self, query_name: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run one named query in a read transaction and return its rows."""
        named = query(query_name)

        @unit_of_work(metadata=self._tag(query_name), timeout=self.timeout)
        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return rows_of(tx.run(named.text, params))

        found: list[dict[str, Any]] = self._read_call(work, [query_name])
        return found

    def reading(self, work: Callable[[Graph], _T]) -> _T:
        """What ``work`` finds when every read it asks of the graph it is given runs in one read
        transaction: one snapshot of the graph for an answer made of several queries, and one
        transaction's set-up instead of one per query (an empty read transaction costs about a
        millisecond, docs/benchmarks.md "Marquez's lineage in one read"). Retried as a whole on transient
        errors, as :meth:`read` is; ``work`` must only read."""
        @unit_of_work(metadata=self._tag("reading"), timeout=self.timeout)
        def run(tx: ManagedTransaction) -> _T:
            return work(_InTransaction(self, tx))

        found: _T = self._read_call(run, ["reading"])
        return found

    def read_each(self, name: str, timeout: float | None = None) -> Iterable[list[dict[str, Any]]]:
        """Run each statement of a multi-statement read file in its own read transaction (with
        ``timeout`` seconds instead of the configured one), yielding each one's rows as it ends."""
        named = query(name)
        for statement in named.statements:
            @unit_of_work(metadata=self._tag(name), timeout=timeout or self.timeout)
            def work(tx: ManagedTransaction, statement: str = statement) -> list[dict[str, Any]]:
                return rows_of(tx.run(statement))

            rows: list[dict[str, Any]] = self._read_call(work, [name])
            yield rows

    def run_statements(self, name: str) -> None:
        """Run each statement of a multi-statement file in its own auto-commit transaction.

        Schema commands (constraints, indexes) cannot share a transaction with each other.
        """
        named = query(name)
        for attempt in range(10):
            try:
                with self.driver.session() as session:
                    for statement in named.statements:
                        session.run(self._query(named, statement)).consume()
                return
            except (ServiceUnavailable, SessionExpired) as e:
                raise DatabaseUnavailable(f"Neo4j is unreachable: {e}") from e
            except TransientError as e:  # e.g. two processes creating the constraints at once
                if attempt == 9:
                    raise QueryError(name, str(e)) from e
                time.sleep(0.2 * (attempt + 1))
            except Neo4jError as e:
                raise QueryError(name, str(e)) from e

    def _read_call(self, work: Any, names: Iterable[str]) -> Any:
        if self._turns is not None and not self._turns.acquire(timeout=self.timeout):
            raise QueryTimeout(",".join(names), f"waited {self.timeout:g} s for a turn: "
                                                "other questions held every one")
        try:
            with self.driver.session() as session:
                return session.execute_read(work)
        except (Neo4jError, DriverError) as e:
            raise self._translated(e, names) from e
        except OSError as e:
            raise DatabaseUnavailable(f"Neo4j is unreachable: {e}") from e
        finally:
            if self._turns is not None:
                self._turns.release()

    def _translated(self, e: Neo4jError | DriverError, names: Iterable[str]) -> Exception:
        """The driver's error as one of :mod:`graph.errors`."""
        what = ",".join(names)
        if isinstance(e, AuthError):
            return DatabaseUnavailable(f"Neo4j refused the credentials: {e.message}")
        if isinstance(e, (ServiceUnavailable, SessionExpired)) or not isinstance(e, Neo4jError):
            return DatabaseUnavailable(f"Neo4j is unreachable: {e}")
        if _memory_error(e):
            return TooLarge(what, str(e))
        if "TransactionTimedOut" in (e.code or "") or "Terminated" in (e.code or ""):
            return QueryTimeout(what, f"ran past {self.timeout:g} s")
        if e.is_retryable():  # a deadlock, a database starting or stopping: not the query's fault
            return Busy(f"Neo4j could not run {what} now ({e.code}): {e.message}")
        return QueryError(what, str(e))


class _InTransaction(Graph):
    """A :class:`Graph` whose reads run in one open transaction (:meth:`Graph.rehearse`,
    :meth:`Graph.reading`)."""

    def __init__(self, graph: Graph, tx: Transaction | ManagedTransaction) -> None:
        super().__init__(graph.driver, graph.timeout, graph.retry_time)
        self._tx = tx

    def read(self, query_name: str, /, **params: Any) -> list[dict[str, Any]]:
        return rows_of(self._tx.run(query(query_name).text, params))

    def reading(self, work: Callable[[Graph], _T]) -> _T:
        return work(self)  # already in one transaction

    def write(self, steps: Sequence[QueryStep],
              then: Callable[[list[list[dict[str, Any]]]], Sequence[QueryStep]] | None = None
              ) -> list[tuple[QueryStep, list[dict[str, Any]]]]:
        raise TypeError("a rehearsal or a reading only reads")


class _Trial(_InTransaction):
    """A :class:`Graph` whose reads and writes run in one open transaction (:meth:`Graph.trial`)."""

    def write(self, steps: Sequence[QueryStep],
              then: Callable[[list[list[dict[str, Any]]]], Sequence[QueryStep]] | None = None
              ) -> list[tuple[QueryStep, list[dict[str, Any]]]]:
        done = [(step, _run(self._tx, step)) for step in steps]
        if then is not None:
            done += [(step, _run(self._tx, step)) for step in then([rows for _, rows in done])]
        return done

"""The connection to Neo4j: one driver per process, named queries only, each tagged and timed out."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from neo4j import (
    Driver,
    GraphDatabase,
    ManagedTransaction,
    NotificationMinimumSeverity,
    Query,
    unit_of_work,
)
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired, TransientError

from graph.errors import DatabaseUnavailable, QueryError, QueryTimeout, TooLarge
from graph.local_server import LocalServer
from graph.queries import NamedQuery, query
from graph.settings import Settings

log = logging.getLogger(__name__)

Step = tuple[str, dict[str, Any]]
"""A named query and its parameters."""

# Neo4j's codes for a transaction refused for its memory. They are transient errors, which the
# driver would retry as they are for up to max_transaction_retry_time: the same transaction fails
# the same way (a backlog batch took 83-87 s per try), so they are raised at once instead.
_MEMORY_CODES = ("MemoryPoolOutOfMemoryError", "TransactionMemoryLimit", "OutOfMemoryError")


def _memory_error(e: Neo4jError) -> bool:
    return any(code in (e.code or "") for code in _MEMORY_CODES)


class _Refused(Exception):
    """Carries a memory error out of a unit of work without the driver's retries."""

    def __init__(self, error: Neo4jError) -> None:
        super().__init__(str(error))
        self.error = error


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


class Graph:
    """Runs named queries on one driver. Owns no I/O until a method is called."""

    def __init__(self, driver: Driver, timeout: float = 30.0) -> None:
        self.driver = driver
        self.timeout = timeout

    def close(self) -> None:
        self.driver.close()

    @staticmethod
    def _tag(*names: str) -> dict[str, str]:
        return {"app": "lineage-graph", "query": ",".join(dict.fromkeys(names))}

    def _query(self, named: NamedQuery, statement: str) -> Query:
        return Query(statement, metadata=self._tag(named.name),
                     timeout=self.timeout)

    def write(self, steps: Sequence[Step],
              then: Callable[[list[list[dict[str, Any]]]], Sequence[Step]] | None = None
              ) -> list[tuple[Step, list[dict[str, Any]]]]:
        """Run the steps in order in one write transaction (retried on transient errors), then, in
        the same transaction, the steps ``then`` returns given their results; returns each step run
        with its rows. A step's query has one statement."""

        names = [name for name, _ in steps]  # what an error names: the queries of both rounds

        def run(tx: ManagedTransaction, step: Step) -> list[dict[str, Any]]:
            try:
                return tx.run(query(step[0]).text, step[1]).data()
            except Neo4jError as e:
                if _memory_error(e):
                    raise _Refused(e) from e
                raise

        @unit_of_work(metadata=self._tag(*names), timeout=self.timeout)
        def work(tx: ManagedTransaction) -> list[tuple[Step, list[dict[str, Any]]]]:
            done = [(step, run(tx, step)) for step in steps]
            if then is not None:
                more = then([rows for _, rows in done])
                names[len(steps):] = [name for name, _ in more]
                done += [(step, run(tx, step)) for step in more]
            return done

        done: list[tuple[Step, list[dict[str, Any]]]] = self._session_call("write", work, names)
        return done

    def read(self, query_name: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run one named query in a read transaction and return its rows."""
        named = query(query_name)

        @unit_of_work(metadata=self._tag(query_name), timeout=self.timeout)
        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return tx.run(named.text, params).data()

        found: list[dict[str, Any]] = self._session_call("read", work, [query_name])
        return found

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

    def _session_call(self, mode: str, work: Any, names: Iterable[str]) -> Any:
        try:
            with self.driver.session() as session:
                if mode == "write":
                    return session.execute_write(work)
                result: Any = session.execute_read(work)
                return result
        except AuthError as e:
            raise DatabaseUnavailable(f"Neo4j refused the credentials: {e.message}") from e
        except (ServiceUnavailable, SessionExpired, OSError) as e:
            raise DatabaseUnavailable(f"Neo4j is unreachable: {e}") from e
        except _Refused as e:
            raise TooLarge(",".join(names), str(e.error)) from e.error
        except Neo4jError as e:
            if _memory_error(e):
                raise TooLarge(",".join(names), str(e)) from e
            if "TransactionTimedOut" in (e.code or "") or "Terminated" in (e.code or ""):
                raise QueryTimeout(",".join(names), f"ran past {self.timeout:g} s") from e
            raise QueryError(",".join(names), str(e)) from e

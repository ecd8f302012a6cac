"""The one exception root of lineage-graph, and the errors every part shares.

Errors and settings (``graph.settings``) live in ``graph/``, the ground layer every other part
already depends on; each part's own errors derive from :class:`LineageError` too:

::

    LineageError
    ├── ConfigError              settings or environment cannot work (missing Java, Maven …)
    ├── ServerError              the local Neo4j server cannot be provisioned, started or stopped
    ├── DatabaseUnavailable      Neo4j does not answer (wraps the driver's error)
    │   └── Busy                 … or answers but cannot do the work now (transient, timed out)
    ├── QueryError               a named query failed (carries the query name)
    │   ├── QueryTimeout         … because it ran past the configured timeout
    │   └── TooLarge             … because Neo4j refused the transaction for its memory
    ├── QueryLibraryError        a .cypher file is malformed (carries file and line)
    ├── EventError               an OpenLineage event is rejected (carries where and why)
    ├── NotFound                 a dataset, column, job or run asked about does not exist
    ├── NotJson                  (ingest.limits) a payload is not JSON, or holds NaN / Infinity
    ├── LogError                 (ingest.log.protocol) the event log cannot be read or written
    │   └── NotOffered           … because this kind of log does not keep what is asked (Kafka)
    ├── MlflowError              (ingest.mlflow.records) an MLflow tracking server cannot be read
    ├── UnknownCommand           (ingest.commands) a log entry is not a command this version knows
    ├── OrderMatters             (ingest.replay) a Spark replay cannot keep commands among events
    ├── CheckInputError          (impact.change.check) a change to check names what the graph lacks
    ├── FileProblem              (impact.user_files) where a file users write is wrong (PolicyError,
    │                            TiersError and SloError say it to the user)
    ├── PolicyError              (impact.policy.rules) a policy file that cannot be used
    ├── DocumentError            (impact.change.document) a change document is malformed
    ├── SqlError                 (impact.change.sql) SQL too large, crashing the parser, or past its limits
    ├── TiersError               (impact.health.tiers) a tiers file that cannot be used
    ├── SloError                 (impact.health.slo) an SLO file that cannot be used
    ├── AccessError              (impact.access.grants) an access file that cannot be used
    ├── AmbiguousModel           (impact.ml.provenance) a model name several models carry
    └── BadNodeId                (impact.marquez.lineage) a Marquez nodeId cannot be parsed
        └── AmbiguousNodeId      … because it names several nodes (400 with the candidates)

The HTTP API's own errors are drawn in :mod:`api.errors`.
"""

from __future__ import annotations


class LineageError(Exception):
    """Root of every error lineage-graph raises on purpose."""


class ConfigError(LineageError):
    """The settings or the machine cannot support what was asked."""


class ServerError(LineageError):
    """The local Neo4j server could not be provisioned, started or stopped."""


class DatabaseUnavailable(LineageError):
    """Neo4j could not be reached; retrying later may help."""


class Busy(DatabaseUnavailable):
    """Neo4j answers but could not do the work now: a transient error that outlasted the
    retries (a deadlock, a database starting), or a write past the server's own time limit.
    Nothing is wrong with the data: the caller holds it and tries again later."""


class QueryError(LineageError):
    """A named query failed."""

    def __init__(self, query: str, message: str) -> None:
        super().__init__(f"{query}: {message}")
        self.query = query


class QueryTimeout(QueryError):
    """A named query ran past its timeout."""


class TooLarge(QueryError):
    """Neo4j refused a transaction for the memory it needs (``db.memory.transaction.max``, the
    global transaction pool, or the heap): a smaller batch may pass."""


class QueryLibraryError(LineageError):
    """A file of the Cypher library is malformed."""

    def __init__(self, file: str, line: int, message: str) -> None:
        super().__init__(f"{file}:{line}: {message}")
        self.file = file
        self.line = line


class EventError(LineageError):
    """An OpenLineage event was rejected; ``where`` says which one (file and index)."""

    def __init__(self, where: str, reasons: list[str]) -> None:
        super().__init__(f"{where}: {'; '.join(reasons)}")
        self.where = where
        self.reasons = reasons


class NotFound(LineageError):
    """A dataset, column, job or run that was asked about is not in the graph."""

    def __init__(self, kind: str, key: str, name: str | None = None,
                 dataset: tuple[str, str] | None = None) -> None:
        super().__init__(f"no {kind} {key} in the graph")
        self.kind = kind
        self.key = key
        self.name = name
        """The name asked for without its namespace, for "did you mean" (datasets, jobs and
        columns)."""
        self.dataset = dataset
        """A column's dataset (namespace, name), for "did you mean"."""

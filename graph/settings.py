"""Settings for every part of lineage-graph, read from the environment.

Variables are ``LINEAGE_``-prefixed (``LINEAGE_STATE_DIR``, ``LINEAGE_BATCH_SIZE`` …). The Neo4j
connection also honours the plain ``NEO4J_URI``, ``NEO4J_USER`` and ``NEO4J_PASSWORD`` that other
Neo4j tools use. When no URI is given, the tool uses the local server it provisions itself.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_state_dir() -> Path:
    return Path(platformdirs.user_data_dir("lineage-graph", appauthor=False))


# The worker's micro-batch bounds by default (Settings.worker_batch and ingest.worker.Worker)
WORKER_BATCH = 10_000
WORKER_BATCH_BYTES = 32 * 1024 * 1024


class Settings(BaseSettings):
    """Everything configurable; build it with :func:`get_settings`, never at import time."""

    model_config = SettingsConfigDict(env_prefix="LINEAGE_", extra="forbid", frozen=True)

    state_dir: Path = Field(default_factory=_default_state_dir)

    neo4j_uri: str | None = Field(
        default=None, validation_alias=AliasChoices("LINEAGE_NEO4J_URI", "NEO4J_URI")
    )
    neo4j_user: str = Field(
        default="neo4j", validation_alias=AliasChoices("LINEAGE_NEO4J_USER", "NEO4J_USER")
    )
    neo4j_password: str | None = Field(
        default=None,
        validation_alias=AliasChoices("LINEAGE_NEO4J_PASSWORD", "NEO4J_PASSWORD"),
    )

    neo4j_version: str = "5.26.30"
    neo4j_bolt_port: int = 7687
    neo4j_http_port: int = 7474
    neo4j_heap: str = "1g"
    neo4j_pagecache: str = "512m"
    neo4j_start_timeout: float = 120.0
    neo4j_tx_memory: str = "0"
    """Neo4j's ``db.memory.transaction.max``: the most heap one transaction may use (``0``: no
    limit of its own; Neo4j's pool for all transactions, 70% of the heap, still applies). A worker
    batch over it is split and the worker's batches shrink (``ingest.worker``)."""

    neo4j_tx_log_retention: str = "256M size"
    """Neo4j's ``db.tx_log.rotation.retention_policy`` for the local server: how much of its
    transaction logs it keeps past what recovery needs (Neo4j's own default, two days, held
    24.3 GB at a million datasets). With your own server, set it there (docs/graph-model.md,
    "Retention")."""

    neo4j_replan_interval: str = "10s"
    """Neo4j's ``dbms.cypher.min_replan_interval`` for the local server: how long a cached plan is
    kept before the statistics may make Neo4j plan the query again (Neo4j's default, 10 s). The
    tests' servers keep plans for good: their graphs are wiped and filled again in every test, so
    with the default nearly every query was planned again (docs/benchmarks.md, "The test
    suite")."""

    query_timeout: float = 30.0

    warm_on_start: bool = True
    """``lineage serve`` warms Neo4j in the background at start (``impact.warm``: the store's lineage
    records into the page cache, each question planned once), so the first questions after a
    restart answer as fast as later ones."""

    plan_keeper_seconds: float = Field(default=2.0, ge=0)
    """``lineage serve`` reads the graph's size (from Neo4j's count store) and the event log's
    backlog this often and asks each question of a small sample, so that Neo4j plans the question
    queries again on that round rather than on a user's question (``impact.warm.PlanKeeper``): once
    a load has ended (the size changed, then held still for one check, the worker has loaded every
    event and none arrived since), and once a minute while the worker keeps up. 0 turns it off
    (docs/benchmarks.md, "the plan keeper")."""

    api_host: str = "127.0.0.1"
    api_port: int = 5000
    api_tokens: str | None = None
    """``token:scope`` pairs, comma-separated; scope ``read`` or ``write`` (write includes read)."""
    access: Path | None = None
    """The access file (docs/access.md): grants of read and write by namespace and tag, each to
    its tokens; what a grant may not see is redacted in every answer, never dropped."""
    token: str | None = None
    """The command line's caller: a token of the access file, whose grant the questions answer
    as (docs/access.md, "The command line"); unset, the command line sees everything."""
    audit_dir: Path | None = None
    """Where the audit log of reads goes (``reads.jsonl``, rotated); default ``audit/`` in the
    state directory."""
    api_max_page: int = Field(default=500, ge=1)
    api_max_questions: int = Field(default=2, ge=1)
    """Questions one API process has Neo4j answer at once; more wait their turn (up to the query
    timeout), so that a crowd of readers leaves Neo4j time for the worker's writes."""
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024 * 1024)
    """Largest POST body accepted (413 beyond); never below 1 MiB."""

    api_head_bytes: int = Field(default=64 * 1024, ge=8 * 1024)
    """Largest request head (request line and headers) served; 431 and the connection closed beyond."""
    api_max_headers: int = Field(default=100, ge=16)
    """Most header lines in a request; 431 beyond."""
    api_idle_seconds: float = Field(default=20.0, gt=0)
    """A connection whose client owes a request (none yet, half a head or half a body) and sends
    nothing for this long is closed (408 when a request was under way)."""

    log_file: Path | None = None
    """The event log's SQLite file; default ``<state_dir>/log/events.db``."""
    log_format: Literal["auto", "json", "text"] = "auto"
    """Logs of the API and the worker: JSON lines, text, or ``auto`` (text on a terminal, JSON
    lines otherwise, e.g. the log files of ``lineage up``)."""
    log_raw_events: bool = False
    """Keep events in the log (and exports) exactly as received, secrets included, instead of as
    scrubbed as the graph holds them (``ingest.secrets``). Opt in only where the log is as well
    guarded as the producers' own credentials."""
    policies: Path | None = None
    """The policy file (docs/policies.md): ``lineage policy check`` reads it by default, and with
    it set ``lineage worker`` keeps its rules checked after each batch it loads, and the API
    serves them (``/api/v1/policies``, ``/metrics``)."""
    policy_webhook: str | None = None
    """A URL the worker POSTs a JSON document to when a violation of a policy rule appears or
    clears (docs/policies.md, "Kept checked"); retried with backoff, never holding up loading."""
    tiers: Path | None = None
    """The tiers file (docs/health.md, "Tiers"): namespace and name patterns of each tier, for
    datasets that carry no ``tier:`` tag."""
    slos: Path | None = None
    """The SLO file (docs/health.md, "SLOs"): ``lineage slo check`` reads it by default, and the
    API exports its objectives on ``/metrics`` for the alert rules."""
    health_interval: float = Field(default=60.0, ge=1.0)
    """Seconds between two measures of lineage health by the API (each a pass over the datasets
    and jobs); ``/metrics`` serves the latest, never measuring in a scrape."""
    retention_detailed_days: float = Field(default=90.0, gt=0)
    """Days of detailed lineage (docs/graph-model.md, "Retention"): runs older than this, by the
    latest event time the graph holds, fold into summary lineage."""
    retention_summary_days: float = Field(default=365.0, gt=0)
    """Days of summary lineage: lineage no run has stated for this long is removed (current
    lineage never is). At least the detailed window."""
    retention_interval: float = Field(default=3600.0, ge=0)
    """Seconds between two retention runs by the worker (``lineage worker``, ``lineage up``);
    ``0``: none (run ``lineage retention run`` yourself)."""
    retention_pace: float = Field(default=3.0, ge=0)
    """How much the worker's retention runs pause after each of their transactions, as a multiple
    of its length (3: a run takes at most a quarter of Neo4j's time for its writes), so that
    ingest beside it keeps its rate (docs/benchmarks.md, "Retention"); ``lineage retention run``
    does not pause."""
    archive: Path | None = None
    """Where retention archives the event log's entries older than the detailed window, as
    date-partitioned Parquet (``ingest.log.archive``); default ``archive/`` in the state
    directory. ``lineage replay`` reads it before the log."""
    erasure_salt: str | None = None
    """The secret an erasure request's subject reference is hashed with (HMAC-SHA256): the store
    keeps the hash, never the reference (docs/graph-model.md, "Erasure"); default: a random one
    kept in ``erasure-salt`` in the state directory (keep it with your backups: without it a
    request is not found by its reference)."""
    erasure_deadline_days: float = Field(default=30.0, gt=0)
    """Days from an erasure request until it is overdue (GDPR's month)."""
    mlflow_uri: str | None = None
    """An MLflow tracking server (``http://HOST:PORT``) that ``lineage up`` keeps in sync: its runs,
    logged datasets and model versions become lineage (docs/producers.md, "MLflow")."""
    mlflow_interval: float = Field(default=30.0, ge=1.0)
    """Seconds between two syncs of ``LINEAGE_MLFLOW_URI`` while ``lineage up`` runs."""
    mlflow_port: int = 5055
    """The port of the local tracking server ``lineage mlflow start`` and the ML demo start."""
    worker_batch: int = Field(default=WORKER_BATCH, ge=1)
    worker_batch_bytes: int = Field(default=WORKER_BATCH_BYTES, ge=1024)
    """The most events and bytes of event JSON the worker loads in one transaction. A backlog
    loads cheaper per event in larger batches (a job that ran several times in one batch writes its
    nodes and edges once; measured in docs/benchmarks.md, "batches of 10,000"). A batch Neo4j
    refuses for its size is split, and the next ones are smaller."""
    # an idle worker looks for new events every worker_poll seconds: the first batch after a
    # quiet spell waits up to that long (its cost idle: docs/benchmarks.md, "Measurements
    # behind the code")
    worker_poll: float = Field(default=0.05, gt=0)
    tags: str = ("PII=Personally identifiable information;"
                 "SENSITIVE=Contains sensitive information")
    """The tags every store has from the start, ``NAME=description`` separated by ``;`` (Marquez's
    configuration declares the same two): listed by ``GET /api/v1/tags`` before anyone uses them."""
    ingest_wait: float = Field(default=0.0, ge=0)
    """How long ``POST /api/v1/lineage`` waits, once the events are durable, for the worker to
    load them before it answers 201 (at most; 0: answer once durable). Marquez's clients and
    scripts read right after a write and expect to find it; a request asks for it alone with the
    header ``Lineage-Wait: loaded`` (then 10 s at most when this is 0)."""
    command_wait: float = Field(default=10.0, ge=0)
    """How long a writer other than the worker (the API's metadata commands and Marquez's legacy
    writes, the CLI's loads) waits for a running worker to apply what it appended to the log, in
    its place, before it applies it itself (ingest.handoff)."""
    worker_nice: int = Field(default=10, ge=0, le=19)
    """How much lower ``lineage worker``'s CPU priority is than the API's (Unix ``nice``): when
    the cores are short, producers are acknowledged first and the durable log absorbs the burst;
    the worker then loads bigger batches, which cost less per event (docs/benchmarks.md, "The
    worker's priority"). 0: the same priority."""
    neo4j_nice: int = Field(default=10, ge=0, le=19)
    """The CPU priority (Unix ``nice``) the local Neo4j server is started at, or the starting
    process's own when that is lower: the same as the worker's by default, so that when the cores
    are short the API acknowledges producers first and loading (the worker and the Neo4j work it
    asks for) takes what is left; the cost: a question asked during such a burst waits behind
    the acknowledgements, on quiet cores nothing changes (docs/benchmarks.md, "Neo4j's
    priority"). 0: the API's priority, for questions first. A server already running keeps its
    priority; an external Neo4j is not touched."""
    batch_size: int = Field(default=500, ge=1, le=100_000)
    facet_max_bytes: int = Field(default=16_384, ge=256)
    log: str = "sqlite"
    """Where accepted events are kept: ``sqlite`` (the embedded log at ``LINEAGE_LOG_FILE``), or a
    Kafka topic, ``kafka://HOST:PORT[,HOST:PORT...]/TOPIC`` (docs/kafka.md); ``kafka`` alone is the
    local broker ``lineage kafka start`` runs, topic ``openlineage``."""
    workers: int = Field(default=1, ge=1, le=64)
    """How many worker processes ``lineage up`` starts: with a Kafka log they share its partitions
    (one consumer group); the SQLite log has one worker."""
    kafka_port: int = 9092
    """The local broker's port (``lineage kafka start``)."""
    kafka_controller_port: int = 9093
    """The local broker's KRaft controller port."""
    kafka_heap: str = "512m"
    kafka_partitions: int = Field(default=4, ge=1, le=1024)
    """Partitions of a topic the project creates (the local broker's, or ``lineage kafka
    topic``): at most this many workers share the load."""
    kafka_session_timeout: float = Field(default=45.0, ge=6.0, le=1800.0)
    """Seconds a worker of a consumer group may go unheard before the broker gives its partitions
    to the others (``session.timeout.ms``; librdkafka's default, and within the broker's default
    bounds, 6 s to 30 min): a worker killed or cut off holds its partitions this long."""

    @property
    def uses_local_server(self) -> bool:
        """True when no external URI is configured and the provisioned server is used."""
        return self.neo4j_uri is None

    @property
    def tag_definitions(self) -> dict[str, str | None]:
        """``tags`` as name: description (an entry without ``=`` has no description)."""
        found: dict[str, str | None] = {}
        for entry in self.tags.split(";"):
            name, _, description = entry.partition("=")
            if name.strip():
                found[name.strip()] = description.strip() or None
        return found

    @property
    def neo4j_home(self) -> Path:
        return self.state_dir / "neo4j"

    @property
    def archive_dir(self) -> Path:
        """The event log's archive (LINEAGE_ARCHIVE, or ``archive/`` in the state directory)."""
        return self.archive or self.state_dir / "archive"

    @property
    def log_path(self) -> Path:
        """The embedded event log (SQLite, WAL)."""
        return self.log_file or self.state_dir / "log" / "events.db"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()

"""Keeping the policy rules checked as the graph changes (``LINEAGE_POLICIES`` on a worker).

Once at start every rule is checked in full and the store (impact.policy.violations) made to agree.
After that, each batch the worker loads is followed by a check of what the batch could have
changed, never the whole graph:

* the datasets the batch touched (read, written, renamed, named by a symlink or a lineage facet);
* for rules that follow data from a source (flow, residency), the sources upstream of those
  datasets: only a path from them can have gained or lost a step;
* for ``sources`` rules, the sinks downstream of them: only their origins can have changed;
* for ``metadata`` rules, the touched datasets themselves.

Those are the rule's anchors (impact.policy.check.Scope); the rule is checked for them only, and
only its violations anchored there are replaced. "Touched" means touched in what the rules read:
the batch's datasets and jobs are printed (impact.policy.prints), and only those whose print
changed since the last check count, so a batch that restates yesterday's lineage costs its
prints and no check. A batch of metadata commands (tags set or removed through the API, soft
deletes) is followed by a full check: a tag can select sources anywhere, and such batches are
rare; so is the first batch of a day when a rule has waivers (one may have expired).

:class:`Watching` does this on a thread of its own, so that a check never holds the worker up:
batches that arrive while a check runs are merged into the next one. A check waits for the worker
to be quiet (no batch for ``QUIET`` seconds) and then runs at once; while batches keep coming (a
backfill, a burst) it runs every ``BUSY_HOLD`` seconds at most, and no more than a share of the
time (``busy_share``: after a check of T seconds the next waits (1/share - 1)·T), batches merging
meanwhile, so that the checks' queries leave the worker and Neo4j the machine (docs/benchmarks.md,
"Policies"). A violation is found a moment after the burst that made it, or within
``BUSY_HOLD`` (or T/share) while a backfill goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Protocol

from graph.db import Graph
from impact.policy.check import Scope, check_rule
from impact.policy.kept import LogState, mark
from impact.policy.prints import Key, Prints, read_prints
from impact.policy.rules import Policies
from impact.policy.violations import ViolationChange, record

log = logging.getLogger(__name__)

Notify = Callable[[list[ViolationChange]], None]
QUIET = 1.0
"""Seconds without a batch after which the worker counts as idle: a waiting check runs."""
BUSY_HOLD = 30.0
"""While batches keep coming, the most seconds a batch waits for its check."""


@dataclass
class Round:
    """What one check did: the rules checked, the anchors (None: the whole graph), the changes."""

    rules: int
    anchors: int | None
    changes: list[ViolationChange]
    seconds: float
    scope_seconds: float = 0.0
    """Of ``seconds``, finding the anchors: the prints, and the walk up and down from the
    datasets whose lineage changed."""
    printed: int = 0
    """Datasets printed (impact.policy.prints)."""
    changed: int = 0
    """Of them (and of the batch's datasets), those whose lineage changed."""
    print_seconds: float = 0.0
    """Of ``scope_seconds``, reading the prints."""


class PolicyWatch:
    """The rules of ``policies`` kept checked against ``graph`` (see the module's doc)."""

    def __init__(self, graph: Graph, policies: Policies, depth: int | None = None,
                 today: Callable[[], date] | None = None) -> None:
        self.graph = graph
        self.policies = policies
        self.depth = depth
        self.today = today or (lambda: datetime.now(UTC).date())
        self.prints = Prints()
        self._waived = any(rule.waivers for rule in policies.rules)
        self._day = self.today()

    def full(self) -> Round:
        """Every rule on the whole graph; clears what rules no longer in the file left open."""
        started = datetime.now(UTC)
        self._day = self.today()
        now = read_prints(self.graph, None)  # before the check: it stores no older state
        results = [check_rule(self.graph, rule, self.depth, self.today())
                   for rule in self.policies.rules]
        stored = {r["rule"] for r in self.graph.read("policies/open_violations", rules=None,
                                                     anchors=None)}
        retired = sorted(stored - {rule.id for rule in self.policies.rules})
        changes = record(self.graph, [(result, None) for result in results], started, retired)
        self.prints.replace(now)
        return Round(len(results), None, changes, _since(started))

    def after(self, batch: Batch | Touched) -> Round:
        """What a batch (or batches, merged: :class:`Touched`) changed; see the module's doc."""
        if not isinstance(batch, Touched):
            batch = Touched.of(batch)
        if batch.commands or (self._waived and self.today() != self._day):
            return self.full()  # a command can select sources anywhere; a waiver may expire
        started = datetime.now(UTC)
        touched, hands, ran = frozenset(batch.datasets), frozenset(batch.handoffs), frozenset(batch.jobs)
        if not touched and not hands:
            return Round(0, 0, [], 0.0)
        now = read_prints(self.graph, touched, ran)
        found = self.prints.compare(touched, ran, now, batch.unprinted)
        changed = found.lineage
        if hands:  # lineage joined through jobs: not in the prints
            changed |= touched | now.datasets.keys() | frozenset().union(*now.of_job.values())
        # what a check may have seen part of: every dataset the batch could have changed
        changed |= frozenset(batch.unsure) | frozenset().union(
            *(now.of_job.get(job, frozenset()) for job in batch.unsure_jobs))
        measured = found.measured | changed
        printed = _since(started)
        scope = Scope(changed, frozenset(), frozenset(), measured)
        if changed or hands:
            [row] = self.graph.read("policies/scope", datasets=[
                {"namespace": ns, "name": name} for ns, name in sorted(changed)], jobs=[
                {"namespace": ns, "name": name} for ns, name in sorted(hands)])
            scope = Scope(changed, frozenset((d["namespace"], d["name"]) for d in row["upstream"]),
                          frozenset((d["namespace"], d["name"]) for d in row["downstream"]),
                          measured)
        scoped = _since(started)
        checks = []
        for rule in self.policies.rules:
            if within := scope.anchors(rule):
                checks.append((check_rule(self.graph, rule, self.depth, self.today(), within),
                               within))
        changes = record(self.graph, checks, started) if checks else []
        if restated := sorted(f"{ns}:{name}" for ns, name in touched - changed):
            self.graph.write([("policies/seen_again", {"anchors": restated,
                                                        "at": started.isoformat()})])
        self.prints.keep(touched, ran, now)
        anchors = sum(len(within) for _, within in checks)
        return Round(len(checks), anchors, changes, _since(started), scoped, found.printed,
                     len(changed), printed)


class Batch(Protocol):
    """What the worker says of a batch it loaded (ingest.worker.BatchResult)."""

    @property
    def datasets(self) -> frozenset[Key]: ...
    @property
    def handoffs(self) -> frozenset[Key]: ...
    @property
    def commands(self) -> bool: ...
    @property
    def jobs(self) -> frozenset[Key]: ...
    @property
    def unprinted(self) -> frozenset[Key]: ...
    @property
    def began(self) -> float: ...
    @property
    def through(self) -> int: ...


@dataclass
class Touched:
    """What batches touched, merged: the datasets, the hand-off jobs of their lineage facets,
    whether they applied metadata commands, the jobs they ran, the datasets given lineage no
    print tells (impact.policy.prints); ``unsure`` and ``unsure_jobs``: the datasets and jobs of
    those loaded while a check ran (see :meth:`Watching.offer`)."""

    datasets: set[Key] = field(default_factory=set)
    handoffs: set[Key] = field(default_factory=set)
    commands: bool = False
    jobs: set[Key] = field(default_factory=set)
    unprinted: set[Key] = field(default_factory=set)
    unsure: set[Key] = field(default_factory=set)
    unsure_jobs: set[Key] = field(default_factory=set)
    through: int = 0
    """The log's seq of the last batch merged."""

    @classmethod
    def of(cls, batch: Batch) -> Touched:
        return cls().add(batch)

    def add(self, batch: Batch | Touched) -> Touched:
        self.datasets |= batch.datasets
        self.handoffs |= batch.handoffs
        self.commands = self.commands or batch.commands
        self.jobs |= batch.jobs
        self.unprinted |= batch.unprinted
        self.through = max(self.through, batch.through)
        if isinstance(batch, Touched):
            self.unsure |= batch.unsure
            self.unsure_jobs |= batch.unsure_jobs
        return self

    def __bool__(self) -> bool:
        return bool(self.datasets or self.handoffs or self.commands)


def _since(started: datetime) -> float:
    return (datetime.now(UTC) - started).total_seconds()


@dataclass
class Watching:
    """A :class:`PolicyWatch` on a thread of its own: a full check at start, then one after each
    batch offered, batches offered meanwhile merged. A failed check (Neo4j away) is retried with
    the same batches after a pause; it never stops the thread or the worker."""

    watch: PolicyWatch
    notify: Notify = lambda changes: None
    retry_seconds: float = 5.0
    check_all_first: bool = True
    """Check every rule at start (the store may be behind the graph and the file)."""
    busy_share: float = 0.1
    """The most of the time the checks take while batches keep coming (see the module's doc)."""
    through: LogState | None = None
    """The worker's position in the log at start (a sole consumer's: a SQLite log) and its last
    bulk load: then each check marks the position through which every batch is checked
    (impact.policy.kept), and gates read the store while it is current. None: no mark (a Kafka
    group's positions are per partition)."""
    rounds: int = 0
    _pending: Touched = field(default_factory=Touched)
    _offered: float = 0.0
    _since: float = 0.0  # when the oldest batch not yet checked was offered
    _checking: bool = False  # a check is running
    _checked_until: float = 0.0  # when the last check ended (time.monotonic())
    _full: bool = True
    _wake: threading.Condition = field(default_factory=threading.Condition)
    _stop: threading.Event = field(default_factory=threading.Event)
    _idle: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Watching:
        self._full = self.check_all_first
        threading.Thread(target=self._run, name="policy-watch", daemon=True).start()
        return self

    def offer(self, batch: Batch) -> None:
        """A batch was loaded: check what it touched (soon, on the watching thread). A batch a
        check may have seen part of (its writes began before the check ended) counts as
        changing every dataset it touched and every dataset of its jobs: the prints that check
        keeps of them may be of neither state (impact.policy.prints)."""
        with self._wake:
            self._offered = time.monotonic()
            if not self._work():
                self._since = self._offered
            self._pending.add(batch)
            if self._checking or batch.began < self._checked_until:
                self._pending.unsure |= batch.datasets
                self._pending.unsure_jobs |= batch.jobs
            self._idle.clear()
            self._wake.notify()

    def stop(self) -> None:
        self._stop.set()
        with self._wake:
            self._wake.notify()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every batch offered so far is checked; False on timeout."""
        return self._idle.wait(timeout)

    def _mark(self, pending: Touched) -> None:
        """Mark how far the store is current: a full check covers what was loaded before it
        began, a check after batches those batches (merged while it waited)."""
        if self.through is None:
            return
        self.through = LogState(max(self.through.position, pending.through), self.through.bulk)
        try:
            mark(self.watch.graph, self.watch.policies, self.through, datetime.now(UTC))
        except Exception as e:  # Neo4j away: gates check the rules themselves meanwhile
            log.warning("marking the policy watch's position failed (%s)", e)

    def _work(self) -> bool:
        return bool(self._pending or self._full)

    def _run(self) -> None:
        not_before = 0.0  # after a check, the next waits its turn (busy_share)
        while not self._stop.is_set():
            with self._wake:
                while not self._stop.is_set():
                    if not self._work():
                        self._idle.set()
                        self._wake.wait()
                    elif ((left := max(not_before, self._since + BUSY_HOLD) - time.monotonic()) > 0
                          and time.monotonic() - self._offered < QUIET):
                        self._wake.wait(min(left, QUIET))  # busy: batches merge meanwhile
                    else:
                        break
                full, pending = self._full, self._pending
                self._full, self._pending = False, Touched()
                self._checking = True
            if self._stop.is_set():
                return
            try:
                done = (self.watch.full() if full
                        else self.watch.after(pending))
            except Exception as e:  # Neo4j away, or a bug: say it, keep the batches, go on
                log.warning("checking the policy rules failed (%s); trying again in %.0f s",
                            e, self.retry_seconds)
                with self._wake:
                    self._checking = False
                    self._checked_until = time.monotonic()
                    self._full = self._full or full
                    self._pending.add(pending)
                self._stop.wait(self.retry_seconds)
                continue
            with self._wake:
                self._checking = False
                self._checked_until = time.monotonic()
            self._mark(pending)
            self.rounds += 1
            if self.busy_share < 1:
                not_before = time.monotonic() + done.seconds * (1 / self.busy_share - 1)
            if done.changes or full:
                log.info("policy rules checked (%s): %d appeared, %d cleared, %.2f s",
                         "all" if done.anchors is None else f"{done.anchors} anchors",
                         sum(c.event == "appeared" for c in done.changes),
                         sum(c.event == "cleared" for c in done.changes), done.seconds)
            if done.changes:
                self.notify(done.changes)

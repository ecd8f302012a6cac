"""What ``lineage serve`` runs beside the API, started and stopped with the app (its lifespan,
api.app): the warm-up after a start, and the plan keeper. Each is an optimisation on a thread of
its own: a failure is said, never raised into the API."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from api.deps import AppContext
from graph.db import Graph
from impact.warm import PlanKeeper, warm
from ingest.log.protocol import WORKER


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def start(services: AppContext) -> Keeping | None:
    """Start what ``lineage serve`` runs beside the API, each on a thread of its own, as its
    settings say: the warm-up (``warm_on_start``) and the plan keeper (``plan_keeper_seconds``),
    which reads from the event log how far the worker has loaded what the API received."""
    settings = services.settings
    if settings.warm_on_start:
        warm_in_background(services.graph, services.warmed)
    else:
        services.warmed.set()
    if settings.plan_keeper_seconds <= 0:
        return None

    def backlog() -> tuple[int, int]:
        events = services.log()
        return events.last_seq(), events.position(WORKER)

    return keep_plans_in_background(services.graph, settings.plan_keeper_seconds, backlog)


def warm_in_background(graph: Callable[[], Graph], warmed: threading.Event) -> None:
    """Warm Neo4j (impact.warm) on a thread of its own, through ``graph``, the API's own
    connection (opened here if it is not yet), saying when it is done; questions asked meanwhile
    are answered as usual, only not yet at their warm speed.

    Through the API's own connection, the first question a user asks finds the driver open, its
    pool holding a connection, and this process's code for each question already run once
    (measured in docs/benchmarks.md, "Measurements behind the code"). ``warmed`` is set when
    it ends, done or not (``/ready`` says so, and ``lineage up`` waits for it)."""

    def run() -> None:
        try:
            done = warm(graph())
        except Exception as e:  # warming is an optimisation: never take the API down with it
            _say(f"warming Neo4j stopped: {e}")
            return
        finally:
            warmed.set()
        _say(f"Neo4j warmed in {done.seconds:.1f} s" + (f" (questions planned on {done.hub})"
                                                           if done.hub else ""))

    threading.Thread(target=run, name="warm", daemon=True).start()


@dataclass
class Keeping:
    """What the plan keeper's thread has done: its rounds (failed ones too), and its keeper once
    the API's graph could be opened; ``stop`` ends the thread after the round under way."""

    rounds: int = 0
    keeper: PlanKeeper | None = None
    stop: threading.Event = field(default_factory=threading.Event)


def keep_plans_in_background(graph: Callable[[], Graph], every: float,
                             backlog: Callable[[], tuple[int, int]] | None = None) -> Keeping:
    """Tick the plan keeper (impact.warm.PlanKeeper, with ``backlog``) every ``every`` seconds on
    a thread of its own, through the API's own connection (it asks once a load has ended, and once
    a minute while the worker keeps up). A failed round (Neo4j away) is said once for as long
    as the failure lasts, not at every round, and the keeper goes on."""
    state = Keeping()

    def run() -> None:
        said: str | None = None
        while not state.stop.wait(every):
            try:
                state.keeper = state.keeper or PlanKeeper(graph(), backlog=backlog)
                state.keeper.tick()
                said = None
            except Exception as e:  # an optimisation: never take the API down with it
                if str(e) != said:
                    _say(f"plan keeper: a round failed ({e}); it will try again")
                    said = str(e)
            finally:
                state.rounds += 1

    threading.Thread(target=run, name="plan-keeper", daemon=True).start()
    return state

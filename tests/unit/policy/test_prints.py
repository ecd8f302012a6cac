"""What the watch counts as changed (impact.policy.prints, impact.policy.watch), without a graph:
prints compared with those kept, kept only once a check has stored its answer, and a batch a
check may have seen part of counted as changing everything it printed."""

from __future__ import annotations

from dataclasses import dataclass

from impact.policy.prints import Print, Printed, Prints
from impact.policy.watch import Touched, Watching

A, B, C = ("ns", "a"), ("ns", "b"), ("ns", "c")
JOB = ("jobs", "copy")


def _printed(a: int = 1, b: int = 2, job: int = 3, measure: int = 0) -> Printed:
    return Printed({A: Print(a, measure), B: Print(b)}, {JOB: Print(job)}, {JOB: frozenset({A, C})})


def test_nothing_kept_counts_as_changed_and_a_restatement_as_unchanged() -> None:
    prints = Prints()
    first = prints.compare({A, B}, {JOB}, _printed())
    assert first.lineage == {A, B, C}  # C: a dataset of the job, seen for the first time
    assert prints.compare({A, B}, {JOB}, _printed()).lineage == {A, B, C}  # nothing kept yet
    prints.keep({A, B}, {JOB}, _printed())
    again = prints.compare({A, B}, {JOB}, _printed())
    assert (again.lineage, again.measured, again.printed) == (frozenset(), frozenset(), 3)


def test_what_changed_and_what_it_brings_with_it() -> None:
    prints = Prints()
    prints.keep({A, B}, {JOB}, _printed())
    assert prints.compare({A, B}, {JOB}, _printed(b=9)).lineage == {B}
    # the job's own part changed: every dataset it reads or writes
    assert prints.compare({A, B}, {JOB}, _printed(job=9)).lineage == {A, C}
    # only the figures of A: a quality rule's, not the others'
    figures = prints.compare({A, B}, {JOB}, _printed(measure=5))
    assert figures.lineage == frozenset() and figures.measured == {A}
    # gone from the graph, and lineage no print tells
    gone = prints.compare({A, B, C}, {JOB}, _printed(), unprinted={B})
    assert gone.lineage == {B, C}


def test_a_full_check_replaces_every_print_and_the_oldest_are_forgotten() -> None:
    prints = Prints(most=2)
    prints.keep({A, B}, {JOB}, _printed())
    assert len(prints) == 2  # A's print, then B's, then the job's: A is forgotten
    assert prints.compare({A}, (), Printed({A: Print(1)}, {}, {})).lineage == {A}
    prints.replace(Printed({C: Print(4)}, {}, {}))
    assert len(prints) == 1
    assert prints.compare({C}, (), Printed({C: Print(4)}, {}, {})).lineage == frozenset()


@dataclass(frozen=True)
class _Batch:
    datasets: frozenset[tuple[str, str]] = frozenset({A})
    handoffs: frozenset[tuple[str, str]] = frozenset()
    commands: bool = False
    jobs: frozenset[tuple[str, str]] = frozenset({JOB})
    unprinted: frozenset[tuple[str, str]] = frozenset()
    began: float = 0.0
    through: int = 0


def _unsure(watching: Watching) -> set[tuple[str, str]]:
    return watching._pending.unsure


def test_a_batch_loaded_while_a_check_ran_is_unsure() -> None:
    """Its datasets and jobs count as changed at the next check, whatever their prints."""
    watching = Watching(watch=None)  # type: ignore[arg-type]  # never started: no thread
    watching.offer(_Batch(began=10.0))
    assert _unsure(watching) == set() and watching._pending.datasets == {A}
    watching._checked_until = 20.0  # a check ended at 20 s: a batch whose writes began at 15 s
    watching.offer(_Batch(datasets=frozenset({B}), began=15.0))
    assert _unsure(watching) == {B} and watching._pending.datasets == {A, B}
    assert watching._pending.unsure_jobs == {JOB}
    later = Watching(watch=None)  # type: ignore[arg-type]
    later._checked_until = 20.0
    later.offer(_Batch(began=25.0))
    assert _unsure(later) == set()
    later._checking = True  # loaded during a check
    later.offer(_Batch(began=30.0))
    assert _unsure(later) == {A}
    merged = Touched().add(later._pending).add(_Batch(jobs=frozenset({("jobs", "other")})))
    assert merged.unsure == {A} and merged.unsure_jobs == {JOB}
    assert merged.jobs == {JOB, ("jobs", "other")}

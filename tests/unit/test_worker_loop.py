"""The worker loop's process-wide setting: set while it runs, restored when it stops."""

import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

from ingest.log.sqlite import SQLiteLog
from ingest.worker import SWITCH_INTERVAL, Worker, _ShortSwitches


def test_the_loop_shortens_the_gil_switch_interval_only_while_it_runs(tmp_path: Path) -> None:
    before = sys.getswitchinterval()
    assert before != SWITCH_INTERVAL
    # an empty log: the loop only polls, so it never needs the graph
    worker = Worker(cast(Any, None), SQLiteLog(tmp_path / "events.db"))
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop, 0.01))
    thread.start()
    deadline = time.monotonic() + 10
    while sys.getswitchinterval() != SWITCH_INTERVAL and time.monotonic() < deadline:
        time.sleep(0.01)
    during = sys.getswitchinterval()
    stop.set()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert during == SWITCH_INTERVAL
    assert sys.getswitchinterval() == before


def test_overlapping_loops_leave_the_interval_as_it_was_before_the_first() -> None:
    # two workers in one process: the second starts before the first stops, and ends after it
    before = sys.getswitchinterval()
    shared = _ShortSwitches()
    shared.__enter__()
    shared.__enter__()
    shared.__exit__()
    assert sys.getswitchinterval() == SWITCH_INTERVAL  # the second loop still runs
    shared.__exit__()
    assert sys.getswitchinterval() == before

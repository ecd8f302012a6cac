"""The worker loop's process-wide setting: set while it runs, restored when it stops."""

import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

from ingest.log import SQLiteLog
from ingest.worker import SWITCH_INTERVAL, Worker


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

"""A worker killed before it could remove its ready marker leaves it behind: starting a process
forgets the markers of processes that are gone, so that a new worker given the same pid is not
taken as ready before it has planned its writes."""

import os
import subprocess
import sys
from pathlib import Path

from api.local import processes
from graph.settings import Settings


def test_markers_of_ended_processes_are_forgotten_before_a_start(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    (tmp_path / "run").mkdir()
    gone = processes.ready_marker(settings, ended.pid)
    alive = processes.ready_marker(settings, os.getpid())
    gone.write_text("")
    alive.write_text("")
    processes._forget_dead_markers(settings)
    assert not gone.exists() and alive.exists()

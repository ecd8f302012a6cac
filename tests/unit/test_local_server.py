"""The local server: its generated password, and starting when a server of ours is already there."""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

import pytest

from graph import local_server
from graph.errors import ServerError
from graph.settings import Settings


def test_a_token_that_starts_with_a_dash_still_makes_a_positional_password(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "token_urlsafe", lambda n: "-" + "x" * (n + 5))
    password = local_server.new_password()
    assert not password.startswith("-") and len(password) >= 16


def test_passwords_differ() -> None:
    assert len({local_server.new_password() for _ in range(100)}) == 100


def test_start_waits_for_its_own_server_that_is_alive_but_not_answering(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy server missed a status check's timeout: start() must wait for it, never launch a
    second one (which failed with "something else already answers" once it answered again)."""
    settings = Settings(state_dir=tmp_path, neo4j_bolt_port=_free_port(), neo4j_http_port=_free_port(),
                        neo4j_start_timeout=1.0)
    server = local_server.LocalServer(settings)
    server.pid_file.parent.mkdir(parents=True)
    server.pid_file.write_text(str(os.getpid()))  # alive, and answers on no port
    launched: list[str] = []
    monkeypatch.setattr(server, "_java", lambda *args, **kw: launched.append(args[0]))
    assert server.status().state == "starting"
    with pytest.raises(ServerError, match="did not answer within"):
        server.start()
    assert launched == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_local_neo4j_plans_without_parameter_sizes(tmp_path: Path) -> None:
    # one plan per query whatever the batch size or name length (docs/benchmarks.md, "Plans and
    # parameter sizes"): without it the worker re-planned its queries for each new batch size
    server = local_server.LocalServer(Settings(state_dir=tmp_path))
    server._write_conf()
    conf = (server.home / "conf" / "neo4j.conf").read_text("utf-8").splitlines()
    assert "internal.cypher.use_parameter_size=false" in conf
    assert "server.memory.pagecache.size=512m" in conf  # the template was filled in

"""The local server's generated password is always taken by neo4j-admin as a positional argument."""

from __future__ import annotations

import pytest

from graph import local_server


def test_a_token_that_starts_with_a_dash_still_makes_a_positional_password(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server.secrets, "token_urlsafe", lambda n: "-" + "x" * (n + 5))
    password = local_server.new_password()
    assert not password.startswith("-") and len(password) >= 16


def test_passwords_differ() -> None:
    assert len({local_server.new_password() for _ in range(100)}) == 100

from __future__ import annotations

import pytest

from api.auth import TokenConfigError, is_loopback, parse_tokens


def test_parse_tokens_and_scopes() -> None:
    t = parse_tokens(" reader-123:read , writer-123:write ")
    assert t.enabled and t.scope_of("reader-123") == "read"
    assert t.allows("writer-123", "read") and t.allows("writer-123", "write")
    assert t.allows("reader-123", "read") and not t.allows("reader-123", "write")
    assert not t.allows("nobody-123", "read")
    assert not parse_tokens(None).enabled and not parse_tokens("").enabled


@pytest.mark.parametrize("spec", ["nocolon", "abcdefgh:admin", "short:read", ":read"])
def test_bad_token_specs_say_which_item(spec: str) -> None:
    with pytest.raises(TokenConfigError, match="item 1"):
        parse_tokens(spec)


@pytest.mark.parametrize(("host", "ok"), [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                          ("127.8.9.1", True), ("0.0.0.0", False), ("10.0.0.1", False),
                                          ("example.com", False), (None, False)])
def test_loopback(host: str | None, ok: bool) -> None:
    assert is_loopback(host) is ok

"""Bearer tokens with read or write scope (``LINEAGE_API_TOKENS``), and the loopback rule.

``LINEAGE_API_TOKENS="s3cret-reader:read,s3cret-writer:write"``: a write token may also read. With no
tokens configured the API is open, so it only answers clients on loopback and ``lineage serve``
refuses to bind any other address. The access file may also believe a proxy that signs users in
(``proxy:`` there): its groups header names the caller's grant.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from graph.errors import LineageError
from impact.access.grants import Access, Grant

SCOPES = ("read", "write")


class TokenConfigError(LineageError, ValueError):
    pass


@dataclass(frozen=True)
class Tokens:
    scopes: dict[str, str]  # token -> scope

    @property
    def enabled(self) -> bool:
        return bool(self.scopes)

    def scope_of(self, token: str) -> str | None:
        for known, scope in self.scopes.items():  # compare every token in constant time
            if hmac.compare_digest(known.encode(), token.encode()):
                return scope
        return None

    def allows(self, token: str, needed: str) -> bool:
        scope = self.scope_of(token)
        return scope is not None and (scope == needed or scope == "write")


def parse_tokens(spec: str | None, access: Access | None = None) -> Tokens:
    """Parse ``token:scope,token:scope``; a scope is read or write. The access file's tokens are
    added: write scope for a grant that writes some namespace, read for the others."""
    scopes: dict[str, str] = {}
    for grant in access.grants if access is not None else ():
        for token in grant.tokens:
            scopes[token] = "write" if grant.write else "read"
    for i, item in enumerate(p.strip() for p in (spec or "").split(",")):
        if not item:
            continue
        token, sep, scope = item.rpartition(":")
        if not sep or not token or scope not in SCOPES:
            raise TokenConfigError(
                f"LINEAGE_API_TOKENS item {i + 1}: expected TOKEN:read or TOKEN:write")
        if len(token) < 8:
            raise TokenConfigError(f"LINEAGE_API_TOKENS item {i + 1}: token shorter than 8 characters")
        scopes[token] = scope
    return Tokens(scopes)


@dataclass(frozen=True)
class Proxied:
    """A caller a trusted proxy vouches for (docs/access.md, "Identities from a proxy")."""

    grant: Grant | None  # the first grant naming one of its groups; None: no grant does
    who: str  # the user header, else the groups
    groups: tuple[str, ...]

    def refusal(self, needed: str) -> str | None:
        """Why this caller may not do what needs scope ``needed``, or None."""
        if self.grant is None:
            return (f"no grant of the access file names any of the groups "
                    f"{', '.join(self.groups) or '(none)'} (from the proxy's header)")
        if needed == "write" and not self.grant.write:
            return f"the grant {self.grant.name!r} lacks the write scope"
        return None


def proxied(access: Access | None, host: str | None, header: Callable[[str], str | None]
            ) -> Proxied | None:
    """The caller a trusted proxy names in its headers (``header`` reads one by name); None when
    the request did not come from a trusted proxy's address or carries no groups header."""
    proxy = access.proxy if access is not None else None
    if access is None or proxy is None or not proxy.trusts(host):
        return None
    given = header(proxy.groups_header)
    if given is None:
        return None
    groups = tuple(g.strip() for g in given.split(",") if g.strip())
    # bounded: the audit log keeps it on every line
    who = (header(proxy.user_header) or "").strip()[:256] or f"groups:{','.join(groups)}"[:256]
    return Proxied(access.grant_of_groups(groups), who, groups)


@functools.lru_cache(maxsize=1024)
def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a client address or a Host header's name) is this machine. Cached: it is
    asked up to three times per request, and the parse was a measured share of a one-event
    request's CPU (docs/benchmarks.md, "Measurements behind the code")."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False

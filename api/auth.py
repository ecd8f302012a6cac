"""Bearer tokens with read or write scope (``LINEAGE_API_TOKENS``), and the loopback rule.

``LINEAGE_API_TOKENS="s3cret-reader:read,s3cret-writer:write"``: a write token may also read. With no
tokens configured the API is open, so it only answers clients on loopback and ``lineage serve``
refuses to bind any other address. The access file may also know callers an identity provider
signed in: by a trusted proxy's headers (``proxy:``) or a signed token (``jwt:``), whose groups
name the caller's grant.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


class BadToken(LineageError):
    """A bearer token that looks signed (a JWT) and is not good: a 401 saying why."""


@dataclass(frozen=True)
class SignedIn:
    """A caller known by an identity provider: through a trusted proxy's headers or a token it
    signed (docs/access.md, "Identities from a sign-in")."""

    grant: Grant | None  # the first grant naming one of its groups; None: no grant does
    who: str  # the user (a header, or a claim), else the groups
    groups: tuple[str, ...]

    def refusal(self, needed: str) -> str | None:
        """Why this caller may not do what needs scope ``needed``, or None."""
        if self.grant is None:
            return (f"no grant of the access file names any of the groups "
                    f"{', '.join(self.groups) or '(none)'}")
        if needed == "write" and not self.grant.write:
            return f"the grant {self.grant.name!r} lacks the write scope"
        return None


def signed_in(access: Access | None, host: str | None, header: Callable[[str], str | None],
              token: str | None) -> SignedIn | None:
    """The caller an identity provider vouches for: by ``token`` (a bearer token not among the
    static ones) when the access file verifies JWTs, else, without a token, by a trusted proxy's
    headers (``header`` reads one by name). None when neither applies; BadToken for a JWT that
    does not verify."""
    if access is None:
        return None
    if token is not None:
        return _by_jwt(access, token)
    proxy = access.proxy
    if proxy is None or not proxy.trusts(host):
        return None
    given = header(proxy.groups_header)
    if given is None:
        return None
    groups = tuple(g.strip() for g in given.split(",") if g.strip())
    return SignedIn(access.grant_of_groups(groups), _who(header(proxy.user_header), groups), groups)


def _by_jwt(access: Access, token: str) -> SignedIn | None:
    config = access.jwt
    if config is None or token.count(".") != 2:
        return None
    import jwt

    try:
        key: Any = _published_keys(config.jwks_url).get_signing_key_from_jwt(token).key \
            if config.jwks_url else config.key
        claims = jwt.decode(token, key, algorithms=list(config.algorithms),
                            audience=config.audience, issuer=config.issuer, leeway=30,
                            options={"require": ["exp", "iss", "aud"]})
    except jwt.PyJWTError as e:
        raise BadToken(f"the signed token was refused: {e}") from None
    given = claims.get(config.groups_claim) or []
    named = given.split(",") if isinstance(given, str) else given if isinstance(given, list) else []
    groups = tuple(str(g).strip() for g in named if str(g).strip())
    user = claims.get(config.user_claim)
    return SignedIn(access.grant_of_groups(groups), _who(str(user) if user else None, groups),
                    groups)


KEY_REFETCH_SECONDS = 30.0
"""The least time between two fetches of the provider's keys for a key id not among them (a
rotated key): a flood of made-up key ids does not become a flood of fetches."""


@functools.lru_cache(maxsize=8)
def _published_keys(url: str) -> Any:
    """The identity provider's published keys (a JWKS document at ``url``), kept five minutes,
    and fetched again for a key id not among them (at most every KEY_REFETCH_SECONDS)."""
    import jwt

    return jwt.PyJWKClient(url, cache_keys=True, lifespan=300, timeout=10,
                           cooldown_duration=KEY_REFETCH_SECONDS)


def _who(user: str | None, groups: tuple[str, ...]) -> str:
    # bounded: the audit log keeps it on every line
    return ((user or "").strip() or f"groups:{','.join(groups)}")[:256]


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

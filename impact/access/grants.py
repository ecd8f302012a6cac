"""The access file (``LINEAGE_ACCESS``, docs/access.md): who may read and write which lineage.

A grant names its callers (API tokens, given as the token or as ``env:VARIABLE``; groups, which
a proxy that signs users in says in a header, believed only from the addresses of ``proxy:
{trusted: [...]}``), the namespaces
they may read and write (shell-style patterns: ``finance.*``, ``postgres://warehouse:5432``,
``*``), the tags whose columns and datasets they may not see outside their own namespaces
(``hide_tags``; own: the ``own`` patterns, by default the ``write`` ones), and the file says whom
to ask about what a caller cannot see (``contacts``, by namespace pattern). A node a grant may not
see is redacted in every answer, never dropped (docs/graph-model.md, "Access").

Pure: reading the file and deciding visibility of a namespace or a node; the graph's hidden names
for a grant are read by ``api.access``.
"""

from __future__ import annotations

import fnmatch
import functools
import hmac
import ipaddress
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from graph.errors import LineageError
from impact.policy.rules import tag_matches
from impact.user_files import Document, FileProblem, Strict, read_yaml, validate

ANYONE = "*"


class AccessError(LineageError, ValueError):
    """The access file cannot be used; the message says the file, the line and the key."""


class _GrantIn(Strict):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    tokens: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    read: list[str] = Field(default_factory=lambda: [ANYONE])
    write: list[str] = Field(default_factory=list)
    own: list[str] | None = None
    hide_tags: list[str] = Field(default_factory=list)


class _ProxyIn(Strict):
    trusted: list[str] = Field(min_length=1)
    groups_header: str = Field(default="X-Forwarded-Groups", min_length=1)
    user_header: str = Field(default="X-Forwarded-User", min_length=1)


JWT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
                  "ES512", "HS256", "HS384", "HS512")


class _JwtIn(Strict):
    issuer: str = Field(min_length=1)
    audience: str = Field(min_length=1)
    key_file: str | None = None  # the identity provider's public key (PEM), for RS, PS and ES
    jwks_url: str | None = None  # or where it publishes its keys (OIDC's jwks_uri), fetched
    secret: str | None = None  # env:VARIABLE, for HS
    algorithms: list[str] = Field(default_factory=lambda: ["RS256"], min_length=1)
    groups_claim: str = Field(default="groups", min_length=1)
    user_claim: str = Field(default="sub", min_length=1)


class _AccessIn(Strict):
    grants: list[_GrantIn] = Field(min_length=1)
    contacts: dict[str, str] = Field(default_factory=dict)
    proxy: _ProxyIn | None = None
    jwt: _JwtIn | None = None


@dataclass(frozen=True)
class Grant:
    """What one caller may read and write."""

    name: str
    tokens: tuple[str, ...]
    groups: tuple[str, ...]
    read: tuple[str, ...]
    write: tuple[str, ...]
    own: tuple[str, ...]
    hide_tags: frozenset[str]

    @property
    def restricted(self) -> bool:
        """Whether some lineage may be hidden from this grant's callers."""
        return ANYONE not in self.read or bool(self.hide_tags)

    def reads(self, namespace: str) -> bool:
        return _matches(self.read, namespace)

    def writes(self, namespace: str) -> bool:
        return _matches(self.write, namespace)

    def writes_everything(self) -> bool:
        """Writes that name no namespace (tags, sources, erasure requests) need ``write: ['*']``."""
        return ANYONE in self.write

    def owns(self, namespace: str) -> bool:
        return _matches(self.own, namespace)

    def sees(self, namespace: str, tags: Iterable[str] = ()) -> bool:
        """Whether a node of ``namespace`` carrying ``tags`` is visible to this grant."""
        if not self.reads(namespace):
            return False
        return self.owns(namespace) or not any(tag_matches(hidden, tag) for hidden in self.hide_tags
                                               for tag in tags)


@dataclass(frozen=True)
class Proxy:
    """A proxy in front of the API that signs users in (OIDC) and says who they are in headers:
    believed only from its own addresses."""

    trusted: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
    groups_header: str  # comma-separated group names
    user_header: str  # who, for the audit log

    def trusts(self, host: str | None) -> bool:
        try:
            address = ipaddress.ip_address(host or "")
        except ValueError:
            return False
        return any(address in network for network in self.trusted)


@dataclass(frozen=True)
class Jwt:
    """Bearer tokens an identity provider signed (OIDC's ID or access tokens), verified here."""

    key: str = field(repr=False)  # the public key (PEM) or the shared secret; "" with jwks_url
    algorithms: tuple[str, ...]
    issuer: str
    audience: str
    groups_claim: str
    user_claim: str
    jwks_url: str | None = None  # the provider's keys, fetched (and again for a key id not seen)


@dataclass(frozen=True)
class Access:
    grants: tuple[Grant, ...]
    contacts: tuple[tuple[str, str], ...]  # (namespace pattern, whom to ask), as written
    proxy: Proxy | None = None
    jwt: Jwt | None = None

    @property
    def signs_in(self) -> bool:
        """Whether callers may be known other than by this file's and LINEAGE_API_TOKENS' tokens."""
        return self.proxy is not None or self.jwt is not None

    def grant_of_groups(self, groups: Iterable[str]) -> Grant | None:
        """The first grant of the file that names one of ``groups`` (a user in several groups
        gets the first such grant: list the wider grants first)."""
        given = set(groups)
        return next((g for g in self.grants if given.intersection(g.groups)), None)

    def grant_of(self, token: str) -> Grant | None:
        found = None
        for grant in self.grants:  # every token compared, in constant time
            for known in grant.tokens:
                if hmac.compare_digest(known.encode(), token.encode()):
                    found = grant
        return found

    def contact_for(self, namespace: str) -> str | None:
        """Whom to ask about a node of ``namespace`` (the first pattern that matches)."""
        return next((who for pattern, who in self.contacts if _match(pattern, namespace)), None)


def read_access(path: Path) -> Access:
    """The access file at ``path``; AccessError saying ``PATH:LINE: KEY: what`` when it is wrong."""
    try:
        document = read_yaml(path, "the access file")
        found = validate(document, _AccessIn)
        return _access(document, found)
    except FileProblem as e:
        raise AccessError(str(e.problem)) from None


def _access(document: Document, found: _AccessIn) -> Access:
    grants, seen_names, seen_tokens = [], set(), set()
    for i, g in enumerate(found.grants):
        if g.name in seen_names:
            raise document.problem(("grants", i, "name"), f"a grant named {g.name!r} is given twice")
        seen_names.add(g.name)
        tokens = []
        for j, given in enumerate(g.tokens):
            token = _token(document, ("grants", i, "tokens", j), given)
            if token in seen_tokens:
                raise document.problem(("grants", i, "tokens", j),
                                       "this token is given to another grant too")
            seen_tokens.add(token)
            tokens.append(token)
        if not tokens and not g.groups:
            raise document.problem(("grants", i), "a grant names its callers: tokens, groups or both")
        if g.groups and found.proxy is None and found.jwt is None:
            raise document.problem(("grants", i, "groups"),
                                   "groups come from a proxy's header or a signed token: the file "
                                   "needs proxy: {trusted: [ADDRESS, ...]} or jwt: {...}")
        for key in ("read", "write", "own"):
            for j, pattern in enumerate(getattr(g, key) or ()):
                _pattern(document, ("grants", i, key, j), pattern)
        grants.append(Grant(g.name, tuple(tokens), tuple(g.groups), tuple(g.read), tuple(g.write),
                            tuple(g.write if g.own is None else g.own), frozenset(g.hide_tags)))
    for pattern in found.contacts:
        _pattern(document, ("contacts", pattern), pattern)
    return Access(tuple(grants), tuple(found.contacts.items()), _proxy(document, found.proxy),
                  _jwt(document, found.jwt))


def _jwt(document: Document, given: _JwtIn | None) -> Jwt | None:
    if given is None:
        return None
    for j, name in enumerate(given.algorithms):
        if name not in JWT_ALGORITHMS:
            raise document.problem(("jwt", "algorithms", j),
                                   f"{name!r} is not one of {', '.join(JWT_ALGORITHMS)}")
    shared = {a.startswith("HS") for a in given.algorithms}
    if len(shared) > 1:
        raise document.problem(("jwt", "algorithms"), "HS algorithms (a shared secret) and the "
                               "others (a public key) cannot be mixed")
    if shared == {True}:
        if given.secret is None or given.key_file is not None or given.jwks_url is not None:
            raise document.problem(("jwt",), "an HS algorithm needs secret: env:VARIABLE (and no "
                                   "key_file or jwks_url)")
        key = _token(document, ("jwt", "secret"), given.secret)
    elif given.jwks_url is not None:
        if given.key_file is not None or given.secret is not None:
            raise document.problem(("jwt",), "jwks_url takes the provider's keys from there: no "
                                   "key_file or secret beside it")
        if not given.jwks_url.startswith(("https://", "http://")):
            raise document.problem(("jwt", "jwks_url"), f"{given.jwks_url!r} is not an http(s) "
                                   "URL (the provider's jwks_uri)")
        key = ""
    else:
        if given.key_file is None or given.secret is not None:
            raise document.problem(("jwt",), f"{given.algorithms[0]} needs key_file: the identity "
                                   "provider's public key (PEM), or jwks_url: where it publishes "
                                   "its keys; and no secret")
        path = Path(given.key_file)
        path = path if path.is_absolute() else Path(document.file).parent / path
        try:
            key = path.read_text("ascii")
        except (OSError, UnicodeDecodeError) as e:
            raise document.problem(("jwt", "key_file"), f"cannot read {path}: {e}") from None
        if "-----BEGIN PUBLIC KEY-----" not in key:
            raise document.problem(("jwt", "key_file"), f"{path} holds no PEM public key")
    return Jwt(key, tuple(given.algorithms), given.issuer, given.audience, given.groups_claim,
               given.user_claim, given.jwks_url)


def _proxy(document: Document, given: _ProxyIn | None) -> Proxy | None:
    if given is None:
        return None
    networks = []
    for j, address in enumerate(given.trusted):
        try:
            networks.append(ipaddress.ip_network(address, strict=False))
        except ValueError:
            raise document.problem(("proxy", "trusted", j),
                                   f"{address!r} is not an address or a network") from None
    return Proxy(tuple(networks), given.groups_header, given.user_header)


def _token(document: Document, loc: tuple[str | int, ...], given: str) -> str:
    if given.startswith("env:"):
        name = given.removeprefix("env:")
        token = os.environ.get(name, "")
        if not token:
            raise document.problem(loc, f"the environment variable {name} is not set")
    else:
        token = given
    if len(token) < 8:
        raise document.problem(loc, "a token has at least 8 characters")
    return token


def _pattern(document: Document, loc: tuple[str | int, ...], pattern: str) -> None:
    if not pattern.strip():
        raise document.problem(loc, "an empty namespace pattern")
    try:
        _compiled(pattern)
    except re.error as e:
        raise document.problem(loc, f"{pattern!r} is not a pattern: {e}") from None


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern))


def _match(pattern: str, namespace: str) -> bool:
    return _compiled(pattern).match(namespace) is not None


def _matches(patterns: Iterable[str], namespace: str) -> bool:
    return any(_match(p, namespace) for p in patterns)

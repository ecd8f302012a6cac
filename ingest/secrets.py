"""Secrets never stored: every event is scrubbed once, when it is validated, before anything keeps it.

What is removed or masked, in every string of the event (facets, error messages, stack traces,
SQL, descriptions, names) and in its keys:

* a URI's user information (``postgres://erin:PW@host:5432`` becomes ``postgres://host:5432``):
  credentials are never part of an identity, so a dataset named with and without them is one
  dataset;
* values of secret-looking keys, as object keys (``password``, ``pwd``, ``GITHUB_PAT``,
  ``spark.hadoop.fs.s3a.access.key`` …) and as ``key=value`` or ``key: value`` inside text
  (query strings, JDBC URLs, ``Password=…;`` connection strings);
* SQL credential clauses (``IDENTIFIED BY …``, ``PASSWORD '…'`` or ``PASSWORD x`` unquoted,
  ``CREDENTIALS = (…)``);
* token shapes: cloud access keys (AWS ``AKIA…``), GitHub, Slack, Google and Stripe keys, JSON Web
  Tokens, ``Bearer``/``Basic`` credentials and PEM private key blocks.

Masked values become ``***``. Scrubbing is deterministic and idempotent, so a re-sent event is
still recognised, and the walk is iterative (no recursion limit). Most events hold nothing to
scrub: two regular-expression searches over their JSON text decide that, and only the others
are walked and copied.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import ahocorasick
import orjson

from ingest import codec

REDACTED = "***"

# An object key names a secret when one of its words (split at separators and camelCase) is one
# of these, or two neighbouring words are one of the pairs: "passenger_count" and "tokenizer" are
# not secrets, "dbPassword", "GITHUB_PAT" and "spark.hadoop.fs.s3a.access.key" are.
_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "pw", "pass", "passphrase", "secret",
                           "token", "credential", "credentials", "authorization", "auth",
                           "signature", "sig", "apikey", "pat", "secretkey", "accesskey",
                           "privatekey"})
# a word ending with one of these is a secret's too (PGPASSWORD, MYSQL_PWD's "mysqlpwd" style)
_SECRET_ENDINGS = ("password", "passwd")
_SECRET_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"),
                           ("session", "key"), ("account", "key"), ("secret", "key")})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Objects keyed by column names, never by secrets: columnLineage.fields, columnMetrics.
_COLUMN_MAPS = frozenset({"fields", "columnMetrics"})

# Finding secrets in text. Python's re tries every branch of an alternation at every position
# (a single pattern of all the rules below is slow on every event), so the text is scanned once
# by an Aho-Corasick automaton (in C) for the words each rule starts or ends with, and each
# rule's own pattern is matched only where its word was found.
_VALUE = r"(?:(?:Bearer|Basic)\s+[^\s&;,'\"<>]+|\"[^\"]*\"|'[^']*'|[^\s&;,'\"<>})\]]+)"
_AFTER_KEY = r"[\"']?\s*(?:[=:]|%3[dD])\s*"  # %3D: '=' URL-encoded
# word (lower case) -> (rule, pattern matched where the word starts, or None)
_RULES: dict[str, tuple[str, re.Pattern[str] | None]] = {
    "-----begin": ("pem", re.compile(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S)),
    "identified": ("sql", re.compile(r"(?i:IDENTIFIED\s+BY\s+)('[^']*'|\"[^\"]*\"|[^\s;,)]+)")),
    "credentials": ("creds", re.compile(r"(?i:CREDENTIALS)\s*=?\s*\(([^)]*)\)")),
    "bearer": ("auth", re.compile(r"Bearer\s+([A-Za-z0-9._~+/-]{8,}=*)")),
    "basic": ("auth", re.compile(r"Basic\s+([A-Za-z0-9._~+/-]{8,}=*)")),
}
# key words of key=value pairs (a secret key's value is the group); "pass" also starts password
for _word, _rest in (("pass", "(?:word|wd|phrase)?"), ("pwd", ""), ("secret", "s?"),
                     ("token", "s?"), ("credential", "s?"), ("authorization", ""),
                     ("signature", ""), ("apikey", ""), ("pat", ""), ("pw", ""), ("auth", ""),
                     ("sig", "")):
    _RULES[_word] = ("pair", re.compile(rf"(?i:{_word}{_rest}){_AFTER_KEY}({_VALUE})"))
_RULES["key"] = ("pair", re.compile(rf"(?i:key){_AFTER_KEY}({_VALUE})"))
_USERINFO = re.compile(r"://([^/\s@\"'<>]*@)")
# user:password@ where the password holds '/' or '@' (up to the last '@' before the host): a
# password, not a port and a path, when it is not all digits before its first '/'
_USERINFO_LONG = re.compile(r"://([^\s/@\"'<>:]*:([^\s\"'<>]*)@)[^\s@\"'<>/]")
_PORT_PATH = re.compile(r"\d+(?:/|$)")
# Oracle's thin driver: jdbc:oracle:thin:user/password@host
_THIN = re.compile(r"(?i:thin):([^\s/@:\"'<>]+/[^\s@\"'<>]*@)")
_KEY_PREFIX = re.compile(r"(?:api|access|private|session|account|secret|client)[_.\s-]?$")
# PASSWORD 'x' in SQL, or unquoted (OPTIONS (user 'u', password PWX30)) unless the word after it
# is plain lower-case prose ("the password policy")
_SQL_PASSWORD = re.compile(r"(?i:PASSWORD)\s+('[^']*'|\"[^\"]*\"|(?![a-z]+\b)[^\s'\";,()]+)")
_TOKENS = re.compile(
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIPA)[A-Z0-9]{16}\b|gh[pousr]_[A-Za-z0-9]{30,}|"
    r"github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|"
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
for _word in ("akia", "asia", "agpa", "aida", "aroa", "anpa", "aipa", "ghp_", "gho_", "ghu_",
              "ghs_", "ghr_", "github_pat_", "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-",
              "aiza", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "eyj"):
    _RULES[_word] = ("token", _TOKENS)


def _automaton() -> Any:
    automaton = ahocorasick.Automaton()
    for word in _RULES:
        automaton.add_word(word, word)
    automaton.make_automaton()
    return automaton


_WORDS = _automaton()


def _credential(token: str) -> bool:
    """A Bearer or Basic value that looks like a credential, not a word ("Basic information")."""
    if token.endswith("=") or any(ch.isdigit() for ch in token):
        return True
    return any(ch.isupper() for ch in token[1:]) and any(ch.islower() for ch in token)


def _spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of each secret in ``text``, in order, not overlapping."""
    lower = text.lower() if text.isascii() else None
    found: list[tuple[int, int, str]] = []
    if "@" in text:
        found += [(m.start(1), m.end(1), "") for m in _USERINFO.finditer(text)]
        found += [(m.start(1), m.end(1), "") for m in _USERINFO_LONG.finditer(text)
                  if not _PORT_PATH.match(m[2])]
        found += [(m.start(1), m.end(1), "@") for m in _THIN.finditer(text)]
    for end, word in _WORDS.iter(lower if lower is not None else text.lower()):
        start = end - len(word) + 1
        if lower is None and text[start:end + 1].lower() != word:
            continue  # lower() changed the length of some character before it: rare, skip
        rule, pattern = _RULES[word]
        if rule == "pair":
            before = (lower or text.lower())[max(0, start - 9):start]
            if word == "key" and not _KEY_PREFIX.search(before):
                continue
            if word in ("pat", "pw", "auth", "sig") and before[-1:].isalpha():
                continue  # part of another word ("path", "oauth", "design")
        if rule == "sql" or word == "pass":  # PASSWORD 'x' in SQL, without a = or :
            m = _SQL_PASSWORD.match(text, start) if word == "pass" else None
            if m is not None:
                found.append((m.start(1), m.end(1), _masked(m[1])))
                continue
        assert pattern is not None
        m = pattern.match(text, start)
        if m is None:
            continue
        if rule in ("pem", "token"):
            found.append((m.start(), m.end(), REDACTED))
        elif rule == "auth":
            if _credential(m[1]):
                found.append((m.start(1), m.end(1), REDACTED))
        elif rule == "creds":
            found.append((m.start(1) - 1, m.end(1) + 1, f"({REDACTED})"))
        else:  # pair, sql: the value, quotes and a Bearer/Basic scheme kept
            value = m[1]
            scheme = value.split()[0] + " " if value[:6].lower() in ("bearer", "basic ") else ""
            found.append((m.start(1) + len(scheme), m.end(1), _masked(value[len(scheme):])))
    found.sort(key=lambda span: (span[0], -span[1]))  # of two at one place, the longer
    kept: list[tuple[int, int, str]] = []
    for span in found:
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


def _masked(value: str) -> str:
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{quote}{REDACTED}{quote}"


def scrub_text(text: str) -> str:
    """``text`` with credentials removed or masked (see the module's docstring)."""
    spans = _spans(text)
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for start, end, replacement in spans:
        out += (text[at:start], replacement)
        at = end
    out.append(text[at:])
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def secret_key(key: str) -> bool:
    """True when an object key names a secret (its value is masked whatever it is)."""
    words = [w.lower() for w in _WORD.findall(key)]
    return any(w in _SECRET_WORDS or w.endswith(_SECRET_ENDINGS) for w in words) or any(
        pair in _SECRET_PAIRS for pair in zip(words, words[1:], strict=False))


def may_hold_secrets(value: Any) -> bool:
    """False when nothing in ``value`` can be scrubbed: none of the words the rules look for is
    in its JSON text (a URI counts only with a user part)."""
    try:
        text = orjson.dumps(value).decode("utf-8")
    except (orjson.JSONEncodeError, UnicodeDecodeError):
        return True
    return _text_may_hold_secrets(text)


def _text_may_hold_secrets(text: str) -> bool:
    """``may_hold_secrets`` of a value by its JSON text, in any key order: no rule's word crosses
    from one JSON token to the next (none holds a quote, colon, comma or bracket)."""
    if "@" in text and (_USERINFO.search(text) or _USERINFO_LONG.search(text)
                        or _THIN.search(text)):
        return True
    for _ in _WORDS.iter(text.lower()):
        return True
    return False


def scrub(value: Any) -> Any:
    """A scrubbed copy of ``value`` (or ``value`` itself when nothing in it needs scrubbing)."""
    if not may_hold_secrets(value):
        return value
    return redact(value)


def scrub_encoded(value: Any) -> tuple[Any, str | None]:
    """``scrub(value)``, and when nothing needed scrubbing, its canonical JSON text as the event
    log stores it (:func:`ingest.log.sqlite.encode`): the API then encodes each event once, for this
    look and for the log, instead of twice."""
    try:
        text = codec.canonical(value).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return redact(value), None
    if _text_may_hold_secrets(text):
        return redact(value), None
    return value, text


def redact(value: Any) -> Any:
    """A copy of ``value`` with secret keys' values masked and every string scrubbed; iterative."""
    if isinstance(value, str):
        return scrub_text(value)
    if not isinstance(value, dict | list):
        return value
    root: Any = {} if isinstance(value, dict) else []
    # (source, its copy, whether its keys are column names rather than field names)
    stack: list[tuple[Any, Any, bool]] = [(value, root, False)]
    while stack:
        source, target, columns = stack.pop()
        is_dict = isinstance(source, dict)
        for key, child in (source.items() if is_dict else enumerate(source)):
            copy: Any
            # in a map keyed by column names a column's spec is an object: a scalar under a
            # secret-looking key is a secret (a "fields" map of settings), not a column
            if is_dict and isinstance(key, str) and secret_key(key) and child is not None \
                    and not isinstance(child, bool) and not (columns and isinstance(child, dict | list)):
                copy = REDACTED
            elif isinstance(child, dict | list):
                copy = {} if isinstance(child, dict) else []
                stack.append((child, copy, is_dict and key in _COLUMN_MAPS and isinstance(child, dict)))
            elif isinstance(child, str):
                copy = scrub_text(child)
            else:
                copy = child
            if is_dict:
                target[scrub_text(key) if isinstance(key, str) else key] = copy
            else:
                target.append(copy)
    return root

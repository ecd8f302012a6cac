"""Scrubbing secrets (ingest.secrets): what is masked or removed in text and in maps, what is
kept, and that scrubbing is idempotent and leaves events with nothing to scrub as they are."""

from __future__ import annotations

from typing import Any

import pytest

from ingest.secrets import REDACTED, may_hold_secrets, redact, scrub, scrub_encoded, scrub_text, secret_key


@pytest.mark.parametrize(("text", "secret"), [
    ("postgres://erin:hunter2@db:5432/shop", "hunter2"),
    ("mysql://bob:pa/ss@db/x", "pa/ss"),
    ("mysql://bob:p@ss@db/x", "p@ss"),
    ("jdbc:oracle:thin:scott/tiger9@host:1521/orcl", "tiger9"),
    ("https://acct.blob.core.windows.net/c?sv=2022&sig=AbCdEf123%2Bxyz", "AbCdEf123"),
    ("jdbc:postgresql://db/x?user=a&password%3Ds3cretvalue", "s3cretvalue"),
    ("Server=db;Password=Sup3rSecret;Database=x", "Sup3rSecret"),
    ("CREATE USER u IDENTIFIED BY 'letmein99'", "letmein99"),
    ("CREATE SERVER s FOREIGN DATA WRAPPER pg OPTIONS (user 'u', password PWX30)", "PWX30"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "eyJhbGciOiJIUzI1NiJ9"),
    ("key AKIAIOSFODNN7EXAMPLE in a message", "AKIAIOSFODNN7EXAMPLE"),
])
def test_secrets_in_text_are_masked_or_removed(text: str, secret: str) -> None:
    clean = scrub_text(text)
    assert secret not in clean
    assert scrub_text(clean) == clean  # idempotent: a re-sent event is the same event


def test_credentials_leave_a_uri_and_the_identity_stays() -> None:
    assert scrub_text("postgres://erin:hunter2@db:5432") == "postgres://db:5432"
    assert scrub_text("postgres://db:5432") == "postgres://db:5432"


@pytest.mark.parametrize("key", ["password", "dbPassword", "PGPASSWORD", "DB_PW", "REDIS_AUTH",
                                 "spark.redis.auth", "GITHUB_PAT",
                                 "spark.hadoop.fs.s3a.access.key", "api_key"])
def test_secret_keys(key: str) -> None:
    assert secret_key(key)


@pytest.mark.parametrize("key", ["passenger_count", "tokenizer", "email", "path", "author"])
def test_ordinary_keys(key: str) -> None:
    assert not secret_key(key)


def test_values_of_secret_keys_are_masked_in_maps_but_not_column_names() -> None:
    properties = {"spark.redis.auth": "pw123", "spark.app.name": "shop"}
    event: dict[str, Any] = {"facets": {"spark_properties": {"properties": properties}},
                             "columnLineage": {"fields": {"password": {"inputFields": []}}},
                             "settings": {"fields": {"password": "inline-secret"}}}
    out = redact(event)
    assert out["facets"]["spark_properties"]["properties"] == {"spark.redis.auth": REDACTED,
                                                               "spark.app.name": "shop"}
    # a column named password keeps its lineage; a "fields" map of settings loses the secret
    assert out["columnLineage"]["fields"] == {"password": {"inputFields": []}}
    assert out["settings"]["fields"]["password"] == REDACTED
    assert event["settings"]["fields"]["password"] == "inline-secret"  # the input is not changed


def test_nothing_to_scrub_returns_the_value_itself_and_its_log_text() -> None:
    event = {"job": {"namespace": "shop", "name": "load_users"}, "inputs": [], "z": 1, "a": 2}
    assert not may_hold_secrets(event)
    assert scrub(event) is event
    value, text = scrub_encoded(event)
    assert value is event and text == '{"a":2,"inputs":[],"job":{"name":"load_users","namespace":"shop"},"z":1}'
    secret = {"run": {"facets": {"error": {"message": "password=abc123xyz failed"}}}}
    value, text = scrub_encoded(secret)
    assert text is None and "abc123xyz" not in str(value)


def test_prose_after_the_word_password_is_kept() -> None:
    assert scrub_text("reset the password policy yearly") == "reset the password policy yearly"

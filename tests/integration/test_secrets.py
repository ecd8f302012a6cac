"""Issue 17, item 5: no secret is kept in clear: not in Neo4j, not in what the API serves, not in
the event log or its export (unless the user opts in), and state files are private."""

from __future__ import annotations

import json
import os
import stat
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.export import export_parquet
from ingest.log.sqlite import Checked, SQLiteLog
from ingest.worker import Worker
from tests.helpers import new_run_id, rows, run_event

pytestmark = pytest.mark.integration

# Each planted secret is a distinct marker, so a leak anywhere names the rule that missed it.
SECRETS = {
    "ns_password": "Pw0ns1", "s3_key": "AKIAIOSFODNN7EXAMPL1", "s3_secret": "wJalrXUtnFEMIbPxRfiCY1",
    "err_url": "Pw0err2", "stack_url": "Pw0stk3", "pwd_key": "Pw0pwd4", "github_pat": "ghpat5value",
    "conn_string": "Pw0conn6", "jdbc": "Pw0jdbc7", "s3a_access": "s3aaccess8", "s3a_secret": "s3asecret9",
    "sql_identified": "Pw0sql10", "sql_password": "Pw0sql11", "bearer": "eyBearerTok12xyz",
    "ghp": "ghp_" + "a" * 36, "description": "Pw0desc13", "api_key_facet": "apikey14value",
    "owner_url": "Pw0own15", "uri_facet": "Pw0uri16", "creds": "credsval17",
}
S = SECRETS


def _events() -> list[dict[str, Any]]:
    with_creds = f"postgres://erin:{S['ns_password']}@db.example:5432"
    s3 = f"s3://{S['s3_key']}:{S['s3_secret']}@bucket"
    run_id = new_run_id()
    out = {"namespace": with_creds, "name": "public.orders", "facets": {
        "documentation": {"description": f"loaded with password={S['description']} nightly"},
        "dataSource": {"name": "db", "uri": f"postgres://app:{S['uri_facet']}@db.example:5432/x"},
        "schema": {"fields": [{"name": "password_hash", "type": "string"},
                              {"name": "id", "type": "int"}]},
        "columnLineage": {"fields": {"password_hash": {"inputFields": [
            {"namespace": s3, "name": "raw/users", "field": "password"}]}}},
    }}
    return [
        run_event("START", run_id, "load_orders", inputs=[{"namespace": s3, "name": "raw/users"}],
                  outputs=[out], job_facets={
                      "sql": {"query": f"CREATE USER bob IDENTIFIED BY '{S['sql_identified']}'; "
                                       f"ALTER ROLE x WITH PASSWORD '{S['sql_password']}'"},
                      "custom": {"env": {"pwd": S["pwd_key"], "GITHUB_PAT": S["github_pat"],
                                         "API_KEY": S["api_key_facet"]}}},
                  run_facets={"spark_properties": {"properties": {
                      "spark.hadoop.fs.s3a.access.key": S["s3a_access"],
                      "spark.hadoop.fs.s3a.secret.key": S["s3a_secret"],
                      "spark.app.name": "orders"}},
                      "http": {"headers": f"Authorization: Bearer {S['bearer']}",
                               "token_seen": S["ghp"]}}),
        run_event("FAIL", run_id, "load_orders", time="2024-05-01T02:05:00Z", run_facets={
            "errorMessage": {
                "message": f"cannot connect to postgres://erin:{S['err_url']}@db.example:5432 "
                           f"with Server=db;User Id=erin;Password={S['conn_string']};",
                "programmingLanguage": "python",
                "stackTrace": f"at jdbc:postgresql://db/x?user=a&password={S['jdbc']}&ssl=true\n"
                              f"  from https://erin:{S['stack_url']}@git.example/repo\n"
                              f"  COPY INTO t CREDENTIALS=(AWS_KEY_ID='{S['creds']}')"},
            "ownership": {"owners": [{"name": f"https://team:{S['owner_url']}@chat.example"}]}}),
        # the same dataset without credentials in its namespace
        run_event("COMPLETE", new_run_id(), "read_orders", time="2024-05-01T03:00:00Z",
                  inputs=[{"namespace": "postgres://db.example:5432", "name": "public.orders"}]),
    ]


def _graph_text(graph: Graph) -> str:
    found = rows(graph, "MATCH (n) RETURN properties(n) AS p UNION ALL "
                        "MATCH ()-[e]->() RETURN properties(e) AS p")
    return json.dumps([r["p"] for r in found], default=str)


def _leaks(text: str) -> list[str]:
    return sorted(name for name, value in SECRETS.items() if value in text)


def test_planted_secrets_are_in_no_store_and_no_answer(graph: Graph, tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "log" / "events.db")
    with TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                    client=("127.0.0.1", 1)) as api:
        r = api.post("/api/v1/lineage", json=_events())
        assert r.status_code == 201 and r.json()["accepted"] == 3, r.text
        # logged as scrubbed: the worker does not scrub them a second time
        assert [e.checked >= Checked.SCRUBBED for e in log.scan()] == [True] * 3
        Worker(graph, log).run_once()
        assert _leaks(_graph_text(graph)) == []
        answers = [api.get("/api/v1/namespaces").text,
                   api.get("/api/v1/datasets").text, api.get("/api/v1/jobs").text,
                   api.get("/api/v1/job", params={"namespace": "ns", "name": "load_orders"}).text,
                   api.get("/api/v1/dataset", params={"namespace": "postgres://db.example:5432",
                                                      "name": "public.orders"}).text]
        runs = rows(graph, "MATCH (r:Run) RETURN r.runId AS id")
        answers += [api.get(f"/api/v1/runs/{r['id']}").text for r in runs]
        assert _leaks("\n".join(answers)) == []
        assert "erin" not in api.get("/api/v1/namespaces").text
    # credentials are no part of an identity: one dataset, read and written under one name
    [ds] = rows(graph, "MATCH (d:Dataset {name: 'public.orders'}) RETURN d.namespace AS ns, "
                       "COUNT { (d)<-[:WROTE|READ]-() } AS runs")
    assert ds == {"ns": "postgres://db.example:5432", "runs": 2}
    assert rows(graph, "MATCH (d:Dataset {name: 'raw/users'}) RETURN d.namespace AS ns") == [
        {"ns": "s3://bucket"}]
    # a column named like a secret keeps its lineage
    assert rows(graph, "MATCH (:Column {name: 'password_hash'})-[:DERIVED_FROM]->(c:Column) "
                       "RETURN c.name AS n") == [{"n": "password"}]
    # the log, its export and the dead letters hold what the graph holds
    db_bytes = b"".join(p.read_bytes() for p in log.path.parent.iterdir())
    assert _leaks(db_bytes.decode("utf-8", "replace")) == []
    export_parquet(log, tmp_path / "lake")
    lake = b"".join(p.read_bytes() for p in (tmp_path / "lake").rglob("*") if p.is_file())
    assert _leaks(lake.decode("utf-8", "replace")) == []
    # state files are private
    for path in [log.path.parent, log.path, *log.path.parent.iterdir()]:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode & 0o077 == 0, (path, oct(mode))


def test_raw_events_stay_in_the_log_only_when_the_user_opts_in(graph: Graph, tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    app = create_app(Settings(log_raw_events=True), graph, log)
    with TestClient(app, base_url="http://localhost", client=("127.0.0.1", 1)) as api:
        assert api.post("/api/v1/lineage", json=_events()).status_code == 201
    assert S["ns_password"] in json.dumps([e.event for e in log.scan()])  # kept as received
    assert not any(e.checked >= Checked.SCRUBBED for e in log.scan())  # so the worker scrubs them
    Worker(graph, log).run_once()
    assert _leaks(_graph_text(graph)) == []  # the graph is scrubbed all the same


def test_provisioning_is_private_and_the_password_never_on_a_command_line(tmp_path: Path) -> None:
    """Provision a scratch server (jars from the local Maven cache) while watching every
    process's command line: the generated password never shows, and the state is private."""
    import contextlib
    import threading
    import time

    from graph.local_server import LocalServer

    server = LocalServer(Settings(state_dir=tmp_path / "state", neo4j_bolt_port=1, neo4j_http_port=2))
    seen: list[bytes] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for pid in os.listdir("/proc"):
                if pid.isdigit():
                    with contextlib.suppress(OSError):  # a process that just ended
                        seen.append(Path(f"/proc/{pid}/cmdline").read_bytes())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        server.provision()
    finally:
        done.set()
        watcher.join()
    password = server.password().encode()
    assert any(b"Neo4jAdminCommand" in c for c in seen), "the watcher saw no neo4j-admin"
    assert not any(password in c for c in seen)
    home = server.home
    for path in (home.parent, home, home / "data", home / "logs", home / "conf",
                 home / "data" / "dbms" / "auth.ini", server.password_file):
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode & 0o077 == 0, (path, oct(mode))


# the shapes that got through before (issue 47.5), each a distinct marker
MORE = {"oracle_thin": "Pw0thin20", "uri_slash": "Pw0sl21", "uri_at": "Pw0at22", "sas": "Sig0sas23",
        "url_encoded": "Pw0enc24", "pgpassword": "Pw0pg25", "db_pw": "Pw0dbpw26",
        "redis_auth": "Pw0redis27", "spark_redis": "Pw0sr28", "in_fields": "Pw0fields29",
        "put_namespace": "Pw0put30", "ns_description": "Pw0nsd31", "tag_description": "Pw0tag32"}


def test_secrets_in_side_doors_are_scrubbed_too(graph: Graph, tmp_path: Path) -> None:
    m = MORE
    event = run_event("COMPLETE", new_run_id(), "side_doors", job_facets={"custom": {
        "jdbc": f"jdbc:oracle:thin:scott/{m['oracle_thin']}@db.example:1521/orcl",
        "slash": f"mysql://bob:{m['uri_slash']}/x@db.example:3306/shop",
        "at": f"mysql://bob:P@{m['uri_at']}@db.example:3306/shop",
        "sas": f"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig={m['sas']}&se=2030",
        "encoded": f"https://h/cb?user%3Dbob%26password%3D{m['url_encoded']}",
        "env": {"PGPASSWORD": m["pgpassword"], "DB_PW": m["db_pw"], "REDIS_AUTH": m["redis_auth"],
                "spark.redis.auth": m["spark_redis"]},
        "fields": {"password": m["in_fields"]}}})
    log = SQLiteLog(tmp_path / "log" / "events.db")
    with TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                    client=("127.0.0.1", 1)) as api:
        assert api.post("/api/v1/lineage", json=event).status_code == 201
        Worker(graph, log).run_once()
        # Marquez's writes go through the same scrubbing
        ns = f"postgres://u:{m['put_namespace']}@h"
        r = api.put(f"/api/v1/namespaces/{urllib.parse.quote(ns, safe='')}",
                    json={"ownerName": "me", "description": f"token={m['ns_description']}"})
        assert r.status_code == 200 and r.json()["name"] == "postgres://h", r.text
        r = api.put("/api/v1/tags/secretive", json={"description": f"password={m['tag_description']}"})
        assert r.status_code == 200, r.text
        answers = "\n".join(api.get(p).text for p in (
            "/api/v1/namespaces", "/api/v1/tags", "/api/v1/jobs",
            "/api/v1/job?namespace=ns&name=side_doors"))
    leaked = sorted(k for k, v in MORE.items() if v in _graph_text(graph) + answers)
    assert leaked == []
    db_bytes = b"".join(p.read_bytes() for p in log.path.parent.iterdir())
    assert sorted(k for k, v in MORE.items() if v in db_bytes.decode("utf-8", "replace")) == []

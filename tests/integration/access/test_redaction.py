"""Access-controlled lineage against the real server (docs/access.md): a restricted grant asks every
GET route of the OpenAPI document and no hidden namespace, name, column or facet value is anywhere
in the bytes of any answer, while the answers' counts equal the unrestricted ones; a hidden name
asked for is answered as a missing one; search finds nothing hidden; a producer's token may write
only its namespaces, and what it may not write is not logged; every read is in the audit log and
counted on /metrics."""

from __future__ import annotations

import difflib
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from api.access.audit import read_lines
from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from impact.access.grants import AccessError, read_access
from impact.policy.rules import read_policies
from impact.policy.watch import PolicyWatch
from ingest.log.sqlite import SQLiteLog
from ingest.worker import Worker
from tests.helpers import new_run_id, run_event, wait_loaded

pytestmark = pytest.mark.integration

SEEN = "shopns"  # readable, not own: its PII columns are hidden
VAULT = "vaultns-kestrel"  # not readable at all
OWN = "ownns"
MARK = b"kestrel"  # in every hidden string, and in nothing the restricted grant may see
ADMIN, READER, PRODUCER = "admin-token-0001", "reader-token-0001", "producer-token-01"

ACCESS = f"""\
contacts:
  "vaultns-*": finance-data@example.com
grants:
  - name: analyst
    tokens: [{READER}]
    read: ["{SEEN}", "{OWN}*"]
    hide_tags: [PII]
    own: ["{OWN}*"]
  - name: shop-producer
    tokens: [{PRODUCER}]
    read: ["*"]
    write: ["{OWN}*"]
"""

POLICIES = f"""\
version: 1
rules:
  - id: ledger-off-dashboards
    description: The ledger never reaches a dashboard
    flow:
      from: {{namespace: "{VAULT}"}}
      to: {{dataset: "dash.*"}}
      must: never
"""

RUN_VAULT, RUN_SHOP, RUN_REPORT = new_run_id(), new_run_id(), new_run_id()


def _ds(ns: str, name: str, columns: list[str], **facets: Any) -> dict[str, Any]:
    return {"namespace": ns, "name": name, "facets": {
        "schema": {"fields": [{"name": c, "type": "STRING", "description": f"the {c}"}
                              for c in columns]}, **facets}}


def _events() -> list[dict[str, Any]]:
    ledger = _ds(VAULT, "vault.ledger_kestrel", ["iban_kestrel", "amount"],
                 documentation={"description": "kestrel ledger"},
                 ownership={"owners": [{"name": "team:finance"}]})
    users = _ds(SEEN, "raw.users", ["id", "contact_kestrel", "country"],
                tags={"tags": [{"key": "PII", "value": "true", "field": "contact_kestrel"}]})
    revenue = _ds(SEEN, "marts.revenue", ["country", "total", "contact_hash"], columnLineage={
        "fields": {
            "total": {"inputFields": [{"namespace": VAULT, "name": "vault.ledger_kestrel",
                                       "field": "amount", "transformations": [
                                           {"type": "DIRECT", "subtype": "AGGREGATION"}]}]},
            "country": {"inputFields": [{"namespace": SEEN, "name": "raw.users",
                                         "field": "country"}]},
            "contact_hash": {"inputFields": [{"namespace": SEEN, "name": "raw.users",
                                              "field": "contact_kestrel", "transformations": [
                                                  {"type": "DIRECT", "subtype": "TRANSFORMATION",
                                                   "masking": True}]}]}}})
    report = _ds(VAULT, "vault.report_kestrel", ["total"])
    board = _ds(SEEN, "dash.board", ["total"])
    return [
        run_event("COMPLETE", RUN_VAULT, "vault_load_kestrel", ns=VAULT, outputs=[ledger],
                  job_facets={"sql": {"query": "insert into vault.ledger_kestrel select 1"}},
                  run_facets={"kestrelRunFacet": {"note": "kestrel run"}}),
        run_event("COMPLETE", RUN_SHOP, "shop_enrich", ns=SEEN, time="2024-05-01T03:00:00Z",
                  inputs=[{"namespace": VAULT, "name": "vault.ledger_kestrel"},
                          {"namespace": SEEN, "name": "raw.users"}], outputs=[revenue, users]),
        run_event("COMPLETE", RUN_REPORT, "shop_report", ns=SEEN, time="2024-05-01T04:00:00Z",
                  inputs=[{"namespace": SEEN, "name": "marts.revenue"}], outputs=[report, board]),
    ]


@pytest.fixture
def stack(graph: Graph, tmp_path: Path) -> Iterator[tuple[TestClient, SQLiteLog, Path]]:
    access = tmp_path / "access.yaml"
    access.write_text(ACCESS, encoding="utf-8")
    policies = tmp_path / "policies.yaml"
    policies.write_text(POLICIES, encoding="utf-8")
    log = SQLiteLog(tmp_path / "events.db")
    settings = Settings(state_dir=tmp_path / "state", api_tokens=f"{ADMIN}:write",
                        access=access, api_max_page=50, policies=policies)
    stop = threading.Event()
    worker = threading.Thread(target=Worker(graph, log).run, args=(stop, 0.05), daemon=True)
    worker.start()
    try:
        with TestClient(create_app(settings, graph, log), base_url="http://localhost") as client:
            r = client.post("/api/v1/lineage", json=_events(), headers=_auth(ADMIN))
            assert r.status_code == 201, r.text
            wait_loaded(log)
            assert PolicyWatch(graph, read_policies(policies)).full().changes  # a violation
            yield client, log, tmp_path / "state" / "audit" / "reads.jsonl"
    finally:
        stop.set()
        worker.join(timeout=10)


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


PARAMS = {"namespace": SEEN, "name": "marts.revenue", "dataset": "marts.revenue",
          "column": "total", "nodeId": f"dataset:{SEEN}:marts.revenue", "runId": RUN_SHOP,
          "run_id": RUN_SHOP, "q": "e", "period": "DAY", "kind": "datasets", "type": "run",
          "job": "shop_enrich", "source": "none", "version": "none", "tag": "PII"}
"""A value for each required parameter of a GET route: the visible middle of the pipeline, so
that every answer reaches the hidden parts upstream and downstream."""
SPECIAL = {"/api/v1/impact/job": {"name": "shop_enrich"}, "/api/v1/job": {"name": "shop_enrich"},
           "/api/v1/changes/job": {"name": "shop_enrich"},
           "/api/v1/provenance/model": {"name": "marts.revenue"},
           "/api/v1/stats/{kind}": {"kind": "datasets"},
           "/api/v2beta/search/{kind}": {"kind": "datasets"}}
FORMATS = {"/api/v1/where": ["json", "csv"], "/api/v1/rerun-plan/run/{run_id}": ["json", "markdown"],
           "/api/v1/changes/dataset": ["json", "markdown"]}


def _gets(client: TestClient) -> list[str]:
    """Every GET route of the OpenAPI document as a URL, its required parameters filled in."""
    doc = client.get("/openapi.json", headers=_auth(ADMIN)).json()
    urls = []
    for path, ops in doc["paths"].items():
        op = ops.get("get")
        if op is None:
            continue
        values = {**PARAMS, **SPECIAL.get(path, {})}
        url, query = path, {}
        for p in op.get("parameters", []):
            if p["in"] == "path":
                url = url.replace("{" + p["name"] + "}", quote(values[p["name"]], safe=""))
            elif p.get("required"):
                query[p["name"]] = values[p["name"]]
        if "{" in url:
            raise AssertionError(f"no value for a parameter of {path}")
        for fmt in FORMATS.get(path, [None]):
            q = {**query, **({"format": fmt} if fmt else {})}
            urls.append(url + ("?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in q.items())
                               if q else ""))
    urls += [f"/api/v1/namespaces/{SEEN}/datasets/marts.revenue",
             f"/api/v1/namespaces/{SEEN}/jobs/shop_enrich",
             f"/api/v1/namespaces/{SEEN}/datasets", f"/api/v1/namespaces/{SEEN}/jobs",
             f"/api/v1/namespaces/{SEEN}/jobs/shop_enrich/runs",
             f"/api/v1/where?namespace={SEEN}&dataset=raw.users&column=country",
             "/api/v1/where?tag=PII", f"/api/v1/column-lineage?nodeId=datasetField:{SEEN}:"
             "marts.revenue:total&withDownstream=true"]
    return urls


def _counts(value: Any) -> Any:
    """The shape of an answer: every list's length, every key of every object (but facets, which
    a hidden node's answer leaves out, opaque ids and the redaction's own keys)."""
    if isinstance(value, dict):
        return {k: _counts(v) for k, v in value.items()
                if k not in ("redacted", "ask", "facets", "inputFacets", "outputFacets")
                and not k.startswith("hidden-")
                and MARK.decode() not in k and not k.startswith("contact")}
    if isinstance(value, list):  # in any order: an answer sorted by name sorts opaque ids apart
        return sorted((_counts(v) for v in value), key=repr)
    return None


def test_no_hidden_name_reaches_a_restricted_caller_and_the_counts_hold(stack: Any) -> None:
    client, _, audit = stack
    urls = _gets(client)
    assert len(urls) > 45
    redacted_somewhere = reaching_hidden = 0
    for url in urls:
        full = client.get(url, headers=_auth(ADMIN))
        reaching_hidden += MARK in full.content.lower()
        seen = client.get(url, headers=_auth(READER))
        assert seen.status_code == full.status_code, (url, seen.text)
        leaked = [m.start() for m in re.finditer(MARK, seen.content.lower())]
        assert not leaked, (url, seen.content[max(0, leaked[0] - 80):leaked[0] + 80])
        redacted_somewhere += int(seen.headers.get("lineage-redacted", "0")) > 0
        if seen.headers.get("content-type", "").startswith("application/json") and \
                "/search" not in url:
            _same_shape(seen.json(), full.json(), url)
    assert redacted_somewhere > 20 and reaching_hidden > 20, (redacted_somewhere, reaching_hidden)
    plan = {"keys": [{"namespace": SEEN, "dataset": "raw.users", "column": "id"}],
            "personal": ["country"]}
    change = {"namespace": SEEN, "dataset": "marts.revenue", "columns": ["country"]}
    for url, body in [("/api/v1/erasure/plan", plan), ("/api/v1/erasure/plan?format=csv", plan),
                      ("/api/v1/erasure/plan?format=markdown", plan),
                      ("/api/v1/impact/check", change)]:
        full = client.post(url, json=body, headers=_auth(ADMIN))
        assert MARK in full.content.lower(), url  # the answer reaches what the reader may not see
        seen = client.post(url, json=body, headers=_auth(READER))
        assert seen.status_code == full.status_code == 200, (url, seen.text)
        assert MARK not in seen.content.lower(), (url, seen.text)
        if "format" not in url:
            _same_shape(seen.json(), full.json(), url)
    violations = client.get("/api/v1/policies/violations", headers=_auth(READER)).json()
    [violation] = violations["violations"]  # from the hidden ledger to a visible dashboard
    assert violation["source"].startswith("hidden-") and violation["target"] == f"{SEEN}:dash.board"
    lines = read_lines(audit)
    assert {line["who"] for line in lines} >= {"analyst", "token"}
    assert any(line["outcome"] == "redacted" and line["who"] == "analyst" for line in lines)


def _same_shape(seen: Any, full: Any, url: str) -> None:
    a = json.dumps(_counts(seen), indent=1, sort_keys=True).splitlines()
    b = json.dumps(_counts(full), indent=1, sort_keys=True).splitlines()
    assert a == b, url + "\n" + "\n".join(difflib.unified_diff(b, a, lineterm="", n=2))


def test_the_blast_radius_counts_what_it_hides_and_says_whom_to_ask(stack: Any) -> None:
    client, _, _ = stack
    q = {"namespace": SEEN, "name": "marts.revenue"}
    full = client.get("/api/v1/impact/dataset", params=q, headers=_auth(ADMIN)).json()
    seen = client.get("/api/v1/impact/dataset", params=q, headers=_auth(READER))
    body = seen.json()
    assert len(body["impacted"]) == len(full["impacted"])
    hidden = [i for i in body["impacted"] if i.get("redacted")]
    assert [(i["kind"], i["distance"], i["job"], i["ask"]) for i in hidden] == [
        (i["kind"], i["distance"], i["job"], "finance-data@example.com") for i in full["impacted"]
        if i["namespace"] == VAULT]
    assert all(i["name"].startswith("hidden-") for i in hidden)
    assert seen.headers["lineage-redacted-ask"] == "finance-data@example.com"
    # the same hidden node has the same opaque id in every answer
    lineage = client.get("/api/v1/lineage", params={"nodeId": f"dataset:{SEEN}:marts.revenue"},
                         headers=_auth(READER)).json()
    ids = {n["id"] for n in lineage["graph"]}
    assert {f"dataset:{i['namespace']}:{i['name']}" for i in hidden if i["kind"] == "dataset"} <= ids
    # the edges still connect: every edge's ends are nodes of the graph
    assert all(e["origin"] in ids and e["destination"] in ids
               for n in lineage["graph"] for e in n["inEdges"] + n["outEdges"])


def test_a_hidden_name_is_answered_as_a_missing_one(stack: Any) -> None:
    client, _, _ = stack
    for hidden, missing in [
            (f"/api/v1/namespaces/{VAULT}/datasets/vault.ledger_kestrel",
             f"/api/v1/namespaces/{VAULT}/datasets/vault.nothing_kestrel"),
            (f"/api/v1/namespaces/{VAULT}", "/api/v1/namespaces/nothingns-kestrel"),
            (f"/api/v1/impact/dataset?namespace={VAULT}&name=vault.ledger_kestrel",
             f"/api/v1/impact/dataset?namespace={VAULT}&name=vault.nothing_kestrel"),
            (f"/api/v1/where?namespace={SEEN}&dataset=raw.users&column=contact_kestrel",
             f"/api/v1/where?namespace={SEEN}&dataset=raw.users&column=nothing_kestrel"),
            (f"/api/v1/lineage?nodeId=dataset:{VAULT}:vault.ledger_kestrel",
             f"/api/v1/lineage?nodeId=dataset:{VAULT}:vault.nothing_kestrel")]:
        a = client.get(hidden, headers=_auth(READER))
        b = client.get(missing, headers=_auth(READER))
        assert a.status_code == b.status_code and a.status_code in (400, 404), (hidden, a.text)
        assert _shape(a.json()) == _shape(b.json()), (a.text, b.text)
    # asked by POST: the names in the body are answered as missing ones too
    erasure, check = "/api/v1/erasure/plan", "/api/v1/impact/check"
    for path, hidden_body, missing_body in [
            (erasure, {"keys": [{"namespace": SEEN, "dataset": "raw.users", "column": "contact_kestrel"}]},
             {"keys": [{"namespace": SEEN, "dataset": "raw.users", "column": "nothing_kestrel"}]}),
            (erasure, {"keys": [{"namespace": VAULT, "dataset": "vault.ledger_kestrel", "column": "amount"}]},
             {"keys": [{"namespace": VAULT, "dataset": "vault.nothing_kestrel", "column": "amount"}]}),
            (check, {"changes": [{"op": "drop_column", "namespace": VAULT,
                                  "dataset": "vault.ledger_kestrel", "column": "amount"}]},
             {"changes": [{"op": "drop_column", "namespace": VAULT,
                           "dataset": "vault.nothing_kestrel", "column": "amount"}]}),
            (check, {"changes": [{"op": "drop_column", "namespace": SEEN, "dataset": "raw.users",
                                  "column": "contact_kestrel"}]},
             {"changes": [{"op": "drop_column", "namespace": SEEN, "dataset": "raw.users",
                           "column": "nothing_kestrel"}]})]:
        a = client.post(path, json=hidden_body, headers=_auth(READER))
        b = client.post(path, json=missing_body, headers=_auth(READER))
        assert a.status_code == b.status_code and a.status_code in (404, 422), (hidden_body, a.text)
        assert _shape(a.json()) == _shape(b.json()), (a.text, b.text)
    found = client.get("/api/v1/search", params={"q": "kestrel"}, headers=_auth(READER)).json()
    assert found == {"totalCount": 0, "results": []}
    assert client.get("/api/v1/search", params={"q": "kestrel"},
                      headers=_auth(ADMIN)).json()["totalCount"] >= 3


def _shape(body: Any) -> Any:
    """An error's words with the names the caller gave taken out."""
    text = json.dumps(body, sort_keys=True)
    return re.sub(r"[\w.:/-]*(kestrel|ledger|nothing)[\w.:/-]*", "NAME", text)


def test_a_producer_writes_only_its_namespaces(stack: Any) -> None:
    client, log, _ = stack
    before = log.last_seq()
    foreign = run_event("COMPLETE", new_run_id(), "sneaky", ns=OWN,
                        outputs=[{"namespace": SEEN, "name": "marts.revenue"}])
    r = client.post("/api/v1/lineage", json=foreign, headers=_auth(PRODUCER))
    assert r.status_code == 403 and repr(SEEN) in r.json()["message"], r.text
    assert log.last_seq() == before  # nothing logged
    r = client.put(f"/api/v1/namespaces/{SEEN}/datasets/raw.users", json={
        "type": "DB_TABLE", "physicalName": "raw.users", "sourceName": "x"},
        headers=_auth(PRODUCER))
    assert r.status_code == 403 and SEEN in r.json()["message"]
    assert client.put("/api/v1/tags/Finance", json={}, headers=_auth(PRODUCER)).status_code == 403
    assert log.last_seq() == before
    own = run_event("COMPLETE", new_run_id(), "load", ns=OWN,
                    inputs=[{"namespace": SEEN, "name": "marts.revenue"}],
                    outputs=[{"namespace": OWN, "name": "own.copy"}])
    assert client.post("/api/v1/lineage", json=own, headers=_auth(PRODUCER)).status_code == 201
    assert log.last_seq() == before + 1
    refused = client.get("/api/v1/datasets", headers=_auth("not-a-token-at-all"))
    assert refused.status_code == 401
    client.get("/api/v1/namespaces", headers=_auth(READER))
    metrics = client.get("/metrics", headers=_auth(ADMIN)).text
    assert re.search(r'^lineage_access_reads_total\{grant="analyst",outcome="redacted"\} [1-9]',
                     metrics, re.M), metrics
    assert re.search(r'^lineage_access_reads_total\{grant="unknown-token",outcome="refused"\} 1$',
                     metrics, re.M)
    page = client.get("/status", headers=_auth(ADMIN)).text
    assert re.search(r"unauthorised attempts: 1 of \d+ reads", page), page


def test_the_access_file_is_checked_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "access.yaml"
    path.write_text("grants:\n  - name: a\n    tokens: [abcdefgh12]\n    reed: ['*']\n")
    with pytest.raises(AccessError, match=r"access.yaml:4: grants\[0\]\.reed: unknown key"):
        read_access(path)
    path.write_text("grants:\n  - name: a\n    tokens: [short]\n")
    with pytest.raises(AccessError, match=r"access.yaml:3: .*at least 8 characters"):
        read_access(path)
    path.write_text("grants:\n  - name: a\n    tokens: [env:LINEAGE_TEST_NO_SUCH_VAR]\n")
    with pytest.raises(AccessError, match=r":3: .*LINEAGE_TEST_NO_SUCH_VAR is not set"):
        read_access(path)
    path.write_text("grants:\n  - name: a\n    groups: [analysts]\n")
    with pytest.raises(AccessError, match=r":3: grants\[0\]\.groups: .*needs proxy"):
        read_access(path)
    path.write_text("proxy:\n  trusted: [10.0.0.0/8, not-an-address]\n"
                    "grants:\n  - name: a\n    groups: [analysts]\n")
    with pytest.raises(AccessError, match=r":2: proxy\.trusted\[1\]: 'not-an-address' is not"):
        read_access(path)
    path.write_text("grants:\n  - name: a\n    read: ['*']\n")
    with pytest.raises(AccessError, match=r":2: grants\[0\]: a grant names its callers"):
        read_access(path)
    jwt = "jwt:\n  issuer: https://idp\n  audience: lineage\n"
    grants = "grants:\n  - name: a\n    groups: [g]\n"
    path.write_text(jwt + "  key_file: nowhere.pem\n" + grants)
    with pytest.raises(AccessError, match=r":4: jwt\.key_file: cannot read .*nowhere\.pem"):
        read_access(path)
    path.write_text(jwt + "  algorithms: [HS256]\n" + grants)
    with pytest.raises(AccessError, match=r":1: jwt: an HS algorithm needs secret"):
        read_access(path)
    path.write_text(jwt + "  algorithms: [none]\n  key_file: k.pem\n" + grants)
    with pytest.raises(AccessError, match=r":4: jwt\.algorithms\[0\]: 'none' is not one of"):
        read_access(path)


PROXY = "10.9.8.7"  # the proxy that signs users in (OIDC) and says their groups

SIGNED_IN_GRANTS = f"""\
grants:
  - name: admins
    tokens: [{ADMIN}]
    groups: [platform]
    read: ["*"]
    write: ["*"]
  - name: analyst
    groups: [data-analysts]
    read: ["{SEEN}", "{OWN}*"]
    hide_tags: [PII]
"""
"""Grants of users an identity provider signed in, by group (the wider first), and a static token."""

PROXIED_ACCESS = f'proxy:\n  trusted: ["{PROXY}/32"]\n{SIGNED_IN_GRANTS}'


def _from_proxy(groups: str, user: str = "ada@example.com") -> dict[str, str]:
    return {"X-Forwarded-Groups": groups, "X-Forwarded-User": user}


def test_a_proxy_that_signs_users_in_names_their_grant_by_group(
        stack: Any, graph: Graph, tmp_path: Path) -> None:
    """Groups from a trusted proxy's header choose the grant (the first of the file naming one of
    them); the same header from any other address is ignored; groups that no grant names, and a
    write by a read-only group, are refused; the audit log keeps the user, the counts the grant."""
    _, log, _ = stack
    access = tmp_path / "proxied.yaml"
    access.write_text(PROXIED_ACCESS, encoding="utf-8")
    settings = Settings(state_dir=tmp_path / "proxied", access=access)
    app = create_app(settings, graph, log)
    with TestClient(app, client=(PROXY, 40000), base_url="http://lineage.example.com") as proxy, \
            TestClient(app, client=("10.9.8.8", 40000), base_url="http://lineage.example.com") as other:
        asked = f"/api/v1/impact/dataset?namespace={SEEN}&name=raw.users&depth=5"
        seen = proxy.get(asked, headers=_from_proxy("staff, data-analysts"))
        assert seen.status_code == 200, seen.text
        assert MARK not in seen.content and int(seen.headers["lineage-redacted"]) > 0
        # in both groups: the first grant of the file naming one of them
        whole = proxy.get(asked, headers=_from_proxy("data-analysts,platform"))
        assert whole.status_code == 200 and MARK in whole.content
        assert other.get(asked, headers=_from_proxy("platform")).status_code == 401  # not believed
        nobody = proxy.get(asked, headers=_from_proxy("staff"))
        assert nobody.status_code == 403 and "staff" in nobody.json()["message"]
        event = run_event("COMPLETE", new_run_id(), "load", ns=OWN, outputs=[_ds(OWN, "own.t", ["a"])])
        write = proxy.post("/api/v1/lineage", json=event, headers=_from_proxy("data-analysts"))
        assert write.status_code == 403 and "write" in write.json()["message"], write.text
        assert proxy.get("/openapi.json", headers=_from_proxy("data-analysts")).status_code == 200
        assert proxy.get("/openapi.json").status_code == 401  # no groups said: a token is needed
    lines = [json.loads(x) for x in (tmp_path / "proxied" / "audit" / "reads.jsonl").read_text().splitlines()]
    analyst = [x for x in lines if x["who"] == "analyst"]
    assert analyst and {x["user"] for x in analyst} == {"ada@example.com"}
    assert {x["who"] for x in lines if x["status"] == 403} >= {"signed-in"}


def test_a_token_the_identity_provider_signed_names_its_grant_by_group(
        stack: Any, graph: Graph, tmp_path: Path) -> None:
    """A JWT verified against the provider's public key, issuer and audience: its groups claim
    chooses the grant; an expired token, one for another audience and one signed by another key
    are refused with 401 saying why; the file's static tokens keep working beside it."""
    import time

    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    _, log, _ = stack
    key, other = (rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2))
    (tmp_path / "idp.pem").write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    access = tmp_path / "signed.yaml"
    access.write_text("jwt:\n  issuer: https://idp.example.com\n  audience: lineage-graph\n"
                      "  key_file: idp.pem\n" + SIGNED_IN_GRANTS, encoding="utf-8")

    def signed(signer: Any = key, **claims: Any) -> dict[str, str]:
        body = {"iss": "https://idp.example.com", "aud": "lineage-graph", "sub": "ada@example.com",
                "groups": ["data-analysts"], "exp": int(time.time()) + 600, **claims}
        return _auth(jwt.encode(body, signer, algorithm="RS256"))

    settings = Settings(state_dir=tmp_path / "signed", access=access)
    with TestClient(create_app(settings, graph, log), base_url="http://lineage.example.com") as client:
        asked = f"/api/v1/impact/dataset?namespace={SEEN}&name=raw.users&depth=5"
        seen = client.get(asked, headers=signed())
        assert seen.status_code == 200 and MARK not in seen.content, seen.text
        assert int(seen.headers["lineage-redacted"]) > 0
        assert MARK in client.get(asked, headers=_auth(ADMIN)).content  # a static token
        for refused, why in [(signed(exp=int(time.time()) - 3600), "expired"),
                             (signed(aud="another-service"), "audience"),
                             (signed(other), "signature")]:
            r = client.get(asked, headers=refused)
            assert r.status_code == 401 and why in r.json()["message"].lower(), r.text
        nobody = client.get(asked, headers=signed(groups=["staff"]))
        assert nobody.status_code == 403 and "staff" in nobody.json()["message"]
        assert client.get("/openapi.json", headers=signed()).status_code == 200
        assert client.get("/openapi.json", headers=signed(other)).status_code == 401
    lines = [json.loads(x) for x in (tmp_path / "signed" / "audit" / "reads.jsonl").read_text().splitlines()]
    assert {x["user"] for x in lines if x["who"] == "analyst"} == {"ada@example.com"}


def test_the_providers_published_keys_verify_its_tokens_and_a_rotated_key_is_fetched(
        stack: Any, graph: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``jwks_url``: the provider's keys fetched from where it publishes them (OIDC's
    jwks_uri); a token of a key id it does not publish is refused with 401, and once the
    provider publishes a new key its tokens are taken without a restart (fetched again for
    the unknown key id; the wait between two such fetches, 30 s, is taken out here)."""
    import http.server
    import time

    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    from api import auth

    monkeypatch.setattr(auth, "KEY_REFETCH_SECONDS", 0.0)
    auth._published_keys.cache_clear()
    _, log, _ = stack
    old, new = (rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2))
    published = {"keys": [{**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(old.public_key())),
                           "kid": "key-1", "use": "sig", "alg": "RS256"}]}
    fetched: list[str] = []

    class Provider(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            body = json.dumps(published).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    provider = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    threading.Thread(target=provider.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{provider.server_address[1]}/.well-known/jwks.json"
    access = tmp_path / "jwks.yaml"
    access.write_text(f"jwt:\n  issuer: https://idp.example.com\n  audience: lineage-graph\n"
                      f"  jwks_url: {url}\n" + SIGNED_IN_GRANTS, encoding="utf-8")

    def signed(signer: Any, kid: str) -> dict[str, str]:
        body = {"iss": "https://idp.example.com", "aud": "lineage-graph", "sub": "ada@example.com",
                "groups": ["data-analysts"], "exp": int(time.time()) + 600}
        return _auth(jwt.encode(body, signer, algorithm="RS256", headers={"kid": kid}))

    asked = f"/api/v1/impact/dataset?namespace={SEEN}&name=raw.users&depth=5"
    try:
        with TestClient(create_app(Settings(state_dir=tmp_path / "jwks", access=access), graph,
                                   log), base_url="http://lineage.example.com") as client:
            seen = client.get(asked, headers=signed(old, "key-1"))
            assert seen.status_code == 200 and MARK not in seen.content, seen.text
            refused = client.get(asked, headers=signed(new, "key-2"))
            assert refused.status_code == 401 and "key-2" in refused.json()["message"], refused.text
            forged = client.get(asked, headers=signed(new, "key-1"))  # a published id, another key
            assert forged.status_code == 401 and "signature" in forged.json()["message"].lower()
            published["keys"].append({**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(
                new.public_key())), "kid": "key-2", "use": "sig", "alg": "RS256"})
            rotated = client.get(asked, headers=signed(new, "key-2"))
            assert rotated.status_code == 200 and MARK not in rotated.content, rotated.text
        assert fetched and set(fetched) == {"/.well-known/jwks.json"}
    finally:
        provider.shutdown()


def test_jwks_url_beside_a_key_file_or_not_a_url_is_refused_with_the_line(tmp_path: Path) -> None:
    for jwt_lines, said in [
            ("  jwks_url: https://idp.example.com/jwks\n  key_file: idp.pem\n", "no key_file"),
            ("  jwks_url: file:///etc/keys\n", "not an http(s) URL")]:
        access = tmp_path / "access.yaml"
        access.write_text("jwt:\n  issuer: https://idp.example.com\n  audience: lineage-graph\n"
                          + jwt_lines + SIGNED_IN_GRANTS, encoding="utf-8")
        with pytest.raises(AccessError) as e:
            read_access(access)
        assert said in str(e.value) and f"{access}:" in str(e.value), e.value

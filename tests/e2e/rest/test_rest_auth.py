"""API keys on a real server: 401 without a valid key on every route, user-bound keys
(403 on other users, every user route), tenant-wide and admin routes, key management
over the admin API, revocation taking effect in the running server."""

from __future__ import annotations

import httpx
import pytest
from rest_server import ENDPOINTS, Endpoint, Server, ids

from mnemolayer.server import KeyStore

NAMES = {
    "memory_id": "0" * 32,
    "session_id": "s1",
    "message_id": "0" * 32,
    "entity": "user",
    "key_id": "0123456789abcdef",
}
USER_ROUTES = tuple(e for e in ENDPOINTS if e.user_scoped)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=list(ids()))
def test_every_route_needs_a_key(server: Server, endpoint: Endpoint) -> None:
    r = endpoint.call(server.client(), user_id="alice", **NAMES)
    assert r.status_code == 401, r.text
    assert r.json()["error"] == {
        "type": "unauthorized",
        "field": "authorization",
        "message": r.json()["error"]["message"],
    }
    assert r.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "token",
    [
        "nonsense",
        "msk_0123456789abcdef_" + "x" * 43,  # well formed, unknown id
        "msk_0123456789ABCDEF_" + "x" * 43,  # upper-case id: malformed
        "Bearer",
    ],
)
def test_malformed_and_unknown_keys_are_401(server: Server, token: str) -> None:
    for header in ("bearer", "x-api-key"):
        r = server.client(token, header=header).get("/v1/whoami")
        assert r.status_code == 401, (header, token, r.text)


def test_a_right_id_with_a_wrong_secret_is_401(server: Server) -> None:
    good = server.keys["acme"]
    forged = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
    assert server.client(forged).get("/v1/whoami").status_code == 401
    assert server.client(good).get("/v1/whoami").status_code == 200


def test_x_api_key_header_works_like_bearer(server: Server) -> None:
    r = server.client(server.keys["acme"], header="x-api-key").get("/v1/whoami")
    assert r.json() == {
        "tenant": "acme",
        "users": None,
        "admin": False,
        "operator": False,
        "key_id": server.keys["acme"].split("_")[1],
        "auth": True,
    }


def test_a_key_revoked_on_disk_fails_in_the_running_server(server: Server) -> None:
    assert server.data_dir is not None
    store = KeyStore(server.data_dir / "keys.db")
    token, info = store.create("acme", name="short-lived")
    assert server.client(token).get("/v1/whoami").status_code == 200
    store.revoke(info.id)
    store.close()
    assert server.client(token).get("/v1/whoami").status_code == 401


@pytest.mark.parametrize("endpoint", USER_ROUTES, ids=list(ids(USER_ROUTES)))
def test_a_user_bound_key_reaches_its_user_only(server: Server, endpoint: Endpoint) -> None:
    alice = server.as_("acme_alice")
    denied = endpoint.call(alice, user_id="bob", **NAMES)
    assert denied.status_code == 403, denied.text
    assert denied.json()["error"]["field"] == "user_id"
    allowed = endpoint.call(alice, user_id="alice", **NAMES)
    assert allowed.status_code not in (401, 403) and allowed.status_code < 500, allowed.text


def test_a_user_bound_key_is_refused_tenant_wide_routes(server: Server) -> None:
    alice = server.as_("acme_alice")
    assert alice.get("/v1/whoami").json()["users"] == ["alice"]
    r = alice.get("/v1/stats")
    assert r.status_code == 403 and r.json()["error"]["type"] == "forbidden"
    assert server.as_("acme").get("/v1/stats").json()["tenant"] == "acme"


@pytest.mark.parametrize(
    "endpoint",
    [e for e in ENDPOINTS if e.admin],
    ids=list(ids(tuple(e for e in ENDPOINTS if e.admin))),
)
def test_admin_routes_need_an_admin_key(server: Server, endpoint: Endpoint) -> None:
    for name in ("acme", "acme_alice", "globex"):
        r = endpoint.call(server.as_(name), user_id="alice", **NAMES)
        assert r.status_code == 403, (name, r.text)


def test_the_operator_manages_keys_over_the_api(server: Server) -> None:
    operator = server.as_("operator")
    r = operator.post(
        "/v1/admin/keys", json={"tenant": "initech", "users": ["peter"], "name": "peter"}
    )
    assert r.status_code == 201, r.text
    token, info = r.json()["key"], r.json()["info"]
    assert info["tenant"] == "initech" and info["users"] == ["peter"] and "hash" not in info
    peter = server.client(token)
    assert peter.post("/v1/users/peter/memories", json={"content": "TPS reports"}).is_success
    assert peter.get("/v1/users/milton/memories").status_code == 403
    listed = operator.get("/v1/admin/keys", params={"tenant": "initech"}).json()["keys"]
    assert [k["id"] for k in listed] == [info["id"]] and listed[0]["last_used_at"] is not None
    assert token not in operator.get("/v1/admin/keys").text
    revoked = operator.delete(f"/v1/admin/keys/{info['id']}")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert peter.get("/v1/whoami").status_code == 401
    assert operator.delete("/v1/admin/keys/ffffffffffffffff").status_code == 404
    bad = operator.post("/v1/admin/keys", json={"tenant": "../etc"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "tenant"


def test_the_operator_sees_every_tenants_stats(server: Server) -> None:
    server.as_("globex").post("/v1/users/g1/memories", json={"content": "globex note"})
    listing = server.as_("operator").get("/v1/admin/tenants").json()
    by_name = {t["tenant"]: t for t in listing["tenants"]}
    assert {"acme", "globex"} <= set(by_name)
    assert by_name["globex"]["memories"] >= 1 and "path" not in by_name["globex"]
    # A store that cannot be opened is reported apart and hides nothing else.
    assert [(t["tenant"], t["type"]) for t in listing["unavailable"]] == [
        ("legacy", "embedding_mismatch")
    ]


def test_a_key_sent_without_its_scheme_is_told_how_to_send_it(server: Server) -> None:
    key = server.keys["acme"]
    r = httpx.get(f"{server.url}/v1/whoami", headers={"Authorization": key})
    assert r.status_code == 401
    error = r.json()["error"]
    assert error["field"] == "authorization" and "must read 'Bearer <key>'" in error["message"]
    assert key not in r.text  # the key is never echoed
    bare = httpx.get(f"{server.url}/v1/whoami")
    assert "an API key is required" in bare.json()["error"]["message"]

"""Tenant isolation, route by route: a key of tenant ``globex``, and globex's tenant-admin
key, call every endpoint with tenant ``acme``'s user, memory, message, entity and key ids,
and must neither see nor change anything of acme's (its memories, windows or keys)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from rest_server import ENDPOINTS, Endpoint, Server, ids

MARK = "zebracorn"  # a word only acme's data contains


def _acme_state(api: httpx.Client, admin: httpx.Client) -> dict[str, Any]:
    """Everything of acme's user ``alice``: export rows and the saved window; and acme's
    keys (as its tenant admin lists them; ``last_used_at`` moves with every request)."""
    rows = api.get("/v1/users/alice/export").json()["rows"]
    window = api.get("/v1/users/alice/sessions/s-zebra/window").json()
    keys = admin.get("/v1/admin/keys").json()["keys"]
    kept = [{k: v for k, v in key.items() if k != "last_used_at"} for key in keys]
    return {"rows": rows, "window": window, "keys": kept}


def _ids_in(state: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for row in state["rows"]:
        found.update(str(row[k]) for k in ("id", "memory_id", "subject_id") if row.get(k))
    found.update(m["id"] for m in state["window"]["window"])
    return found


@pytest.fixture(scope="module")
def acme(server: Server) -> dict[str, Any]:
    """acme's user alice with memories, facts, an outcome and a window; the names to
    fill endpoint paths with, and the state to compare against."""
    api = server.as_("acme")
    rec = api.post(
        "/v1/users/alice/memories",
        json={"content": f"My name is Lena {MARK.title()}. I live in Lisbon.", "session_id": "s"},
    ).json()["items"][0]
    api.post(
        "/v1/users/alice/outcomes",
        json={"task": f"{MARK} deploy", "strategy": "blue green", "success": True},
    )
    turn = api.post(
        "/v1/users/alice/sessions/s-zebra/window/messages",
        json={"role": "user", "content": f"the {MARK} plan is secret"},
    ).json()["message"]
    state = _acme_state(api, server.as_("acme_admin"))
    assert MARK in json.dumps(state).lower() and state["window"]["window"]
    names = {
        "user_id": "alice",
        "memory_id": rec["id"],
        "session_id": "s-zebra",
        "message_id": turn["id"],
        "entity": "Lena",
        "key_id": server.keys["acme"].split("_")[1],
    }
    return {"names": names, "state": state, "ids": _ids_in(state)}


def test_the_endpoint_table_covers_every_route(server: Server) -> None:
    schema = httpx.get(f"{server.url}/openapi.json").json()
    served = {
        f"{method.upper()} {path}"
        for path, ops in schema["paths"].items()
        for method in ops
        if path.startswith("/v1/")
    }
    table = {f"{e.method} {e.path.replace('{entity}', '{name}')}" for e in ENDPOINTS}
    assert served == table


#: What an admin route answers globex's tenant admin called with acme's names: acme's
#: key is an unknown key to it, a key for acme is refused, and its listing is globex's.
GLOBEX_ADMIN = {
    "GET /v1/admin/tenants": 403,
    "POST /v1/admin/keys": 403,
    "GET /v1/admin/keys": 200,
    "DELETE /v1/admin/keys/{key_id}": 404,
}


@pytest.mark.parametrize("key", ["globex", "globex_admin"])
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=list(ids()))
def test_another_tenants_key_never_reaches_acme(
    server: Server, acme: dict[str, Any], endpoint: Endpoint, key: str
) -> None:
    names = acme["names"]
    r = endpoint.call(server.as_(key), **names)
    assert r.status_code < 500, r.text
    if endpoint.admin:
        expected = GLOBEX_ADMIN[f"{endpoint.method} {endpoint.path}"] if key != "globex" else 403
        assert r.status_code == expected, r.text
    elif any(f"{{{n}}}" in endpoint.path for n in ("memory_id", "message_id", "entity")):
        assert r.status_code == 404, r.text  # acme's ids do not exist in globex's store
    else:
        assert r.is_success, r.text
    # Nothing of acme's comes back: not its words, not an id the caller did not send.
    text = r.text.lower()
    assert MARK not in text
    sent = endpoint.path.format(**names)
    assert not {i for i in acme["ids"] if i in r.text and i not in sent}
    if endpoint.path == "/v1/whoami":
        assert r.json()["tenant"] == "globex"
    # And nothing of acme's changed.
    assert _acme_state(server.as_("acme"), server.as_("acme_admin")) == acme["state"]


def test_acme_still_sees_its_own_data(server: Server, acme: dict[str, Any]) -> None:
    api = server.as_("acme")
    rec = api.get(f"/v1/users/alice/memories/{acme['names']['memory_id']}")
    assert rec.status_code == 200 and MARK in rec.text.lower()
    hits = api.post("/v1/users/alice/search", json={"query": f"{MARK} plan"}).json()["hits"]
    assert hits and all(h["memory"]["user_id"] == "alice" for h in hits)
    other = server.as_("globex").post("/v1/users/alice/search", json={"query": f"{MARK} plan"})
    assert MARK not in other.text.lower()


def test_tenant_stores_are_separate_files(server: Server, acme: dict[str, Any]) -> None:
    assert server.data_dir is not None
    tenants = server.data_dir / "tenants"
    assert (tenants / "acme" / "memory.db").is_file()
    assert (tenants / "globex" / "memory.db").is_file()
    for part in (tenants / "globex").iterdir():  # memory.db and its -wal journal
        assert MARK.encode() not in part.read_bytes().lower()

"""Who manages keys, on a real server: every key route (and a data route or two) called
with each kind of key: the operator's, the tenant admins of ``acme`` and of ``globex``, a
plain key of acme, one of acme bound to a user, and none. A tenant admin manages its own
tenant's keys and nothing else; only the operator makes tenants, operator keys, and sees
every tenant's keys and stats; the operator's key reaches no tenant's memories."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from rest_server import Server, start

from mnemolayer.server import KeyStore

#: The callers, in the order of each case's expected statuses.
CALLERS = ("operator", "acme_admin", "globex_admin", "acme", "acme_alice", None)
#: The tenant each caller's key belongs to (``None``: the operator's, or no key).
TENANT = {"acme_admin": "acme", "globex_admin": "globex", "acme": "acme", "acme_alice": "acme"}


@dataclass(frozen=True)
class Case:
    """One request and the status each of :data:`CALLERS` gets for it. ``target``: the
    path's ``{key_id}`` is a fresh key of that tenant (``"operator"``: an operator key)."""

    name: str
    method: str
    path: str
    expect: tuple[int, int, int, int, int, int]
    json: Any = None
    params: dict[str, str] = field(default_factory=dict)
    target: str | None = None


CASES = (
    Case("every tenant's stats", "GET", "/v1/admin/tenants", (200, 403, 403, 403, 403, 401)),
    Case("a key of acme", "POST", "/v1/admin/keys", (201, 201, 403, 403, 403, 401), {"tenant": "acme"}),
    Case("a key of its own tenant", "POST", "/v1/admin/keys", (422, 201, 201, 403, 403, 401), {}),
    Case(
        "an admin key of acme", "POST", "/v1/admin/keys", (201, 201, 403, 403, 403, 401),
        {"tenant": "acme", "admin": True},
    ),
    Case("a new tenant", "POST", "/v1/admin/keys", (201, 403, 403, 403, 403, 401), {"tenant": "newco"}),
    Case("an operator key", "POST", "/v1/admin/keys", (201, 403, 403, 403, 403, 401), {"operator": True}),
    Case("the keys it manages", "GET", "/v1/admin/keys", (200, 200, 200, 403, 403, 401)),
    Case(
        "globex's keys", "GET", "/v1/admin/keys", (200, 403, 200, 403, 403, 401),
        params={"tenant": "globex"},
    ),
    Case("revoke acme's", "DELETE", "/v1/admin/keys/{key_id}", (200, 200, 404, 403, 403, 401), target="acme"),
    Case("revoke globex's", "DELETE", "/v1/admin/keys/{key_id}", (200, 404, 200, 403, 403, 401), target="globex"),
    Case(
        "revoke an operator's", "DELETE", "/v1/admin/keys/{key_id}", (200, 404, 404, 403, 403, 401),
        target="operator",
    ),
    Case("alice's memories", "GET", "/v1/users/alice/memories", (403, 200, 200, 200, 200, 401)),
    Case("its tenant's stats", "GET", "/v1/stats", (403, 200, 200, 200, 403, 401)),
    Case("who am I", "GET", "/v1/whoami", (200, 200, 200, 200, 200, 401)),
)  # fmt: skip

MATRIX = [(case, i, caller) for case in CASES for i, caller in enumerate(CALLERS)]


@pytest.fixture(scope="module")
def disk(server: Server) -> Iterator[KeyStore]:
    """The running server's key file, opened here too (keys made here are live there)."""
    assert server.data_dir is not None
    store = KeyStore(server.data_dir / "keys.db")
    yield store
    store.close()


def _fresh(disk: KeyStore, target: str) -> tuple[str, str]:
    """A new key (token, id) to revoke: of tenant ``target``, or an operator key."""
    if target == "operator":
        token, info = disk.create(None, operator=True, name="to revoke")
    else:
        token, info = disk.create(target, name="to revoke")
    return token, info.id


@pytest.mark.parametrize(
    ("case", "index", "caller"),
    MATRIX,
    ids=[f"{case.name}-{caller or 'no key'}" for case, _, caller in MATRIX],
)
def test_each_kind_of_key_on_each_key_route(
    server: Server, disk: KeyStore, case: Case, index: int, caller: str | None
) -> None:
    api = server.client(server.keys[caller] if caller else None)
    path, target = case.path, None
    if case.target is not None:
        target = _fresh(disk, case.target)
        path = path.format(key_id=target[1])
    r = api.request(case.method, path, json=case.json, params=case.params)
    expected = case.expect[index]
    assert r.status_code == expected, (case.name, caller, r.text)
    body = r.json()
    if expected >= 400:
        assert set(body) == {"error"} and body["error"]["type"] in (
            "unauthorized", "forbidden", "not_found", "validation_error",
        ), body  # fmt: skip
        if expected == 403 and case.method == "POST" and caller in ("acme_admin", "globex_admin"):
            assert body["error"]["field"] == ("operator" if case.json.get("operator") else "tenant")
    if target is not None:  # a refused revocation leaves the key working
        alive = server.client(target[0]).get("/v1/whoami").status_code
        assert alive == (401 if expected == 200 else 200), (case.name, caller)
    if case.method == "POST" and expected == 201:
        _check_created(server, case, caller, body)
    if case.path == "/v1/admin/keys" and case.method == "GET" and expected == 200:
        _check_listed(case, caller, body)


def _check_created(server: Server, case: Case, caller: str | None, body: dict[str, Any]) -> None:
    """The new key is the kind asked for, of the tenant asked for (the caller's own when
    none was named), and works."""
    info = body["info"]
    wanted = (
        None if case.json.get("operator") else case.json.get("tenant", TENANT.get(caller or ""))
    )
    assert info["tenant"] == wanted and info["operator"] == bool(case.json.get("operator"))
    who = server.client(body["key"]).get("/v1/whoami").json()
    assert who["tenant"] == wanted and who["admin"] == (info["admin"] or info["operator"])


def _check_listed(case: Case, caller: str | None, body: dict[str, Any]) -> None:
    """A tenant admin lists its own tenant's keys only; the operator, every key."""
    tenants = {k["tenant"] for k in body["keys"]}
    if caller == "operator":
        expected = {"globex"} if case.params else {None, "acme", "globex", "legacy"}
        assert expected <= tenants and (not case.params or tenants == {"globex"}), tenants
    else:
        assert tenants == {TENANT[caller or ""]}, tenants
    assert not any(k.startswith("msk_") for k in json.dumps(body).split('"')), body


def test_whoami_tells_the_operator_apart(server: Server) -> None:
    who = server.as_("operator").get("/v1/whoami").json()
    assert who == {
        "tenant": None, "users": None, "admin": True, "operator": True,
        "key_id": server.keys["operator"].split("_")[1], "auth": True,
    }  # fmt: skip
    admin = server.as_("acme_admin").get("/v1/whoami").json()
    assert (admin["tenant"], admin["admin"], admin["operator"]) == ("acme", True, False)


def test_the_operator_key_reaches_no_memories(server: Server) -> None:
    operator = server.as_("operator")
    r = operator.post("/v1/users/alice/memories", json={"content": "planted by the operator"})
    assert r.status_code == 403 and r.json()["error"]["type"] == "forbidden", r.text
    assert "operator" in r.json()["error"]["message"]
    assert server.data_dir is not None
    assert not (server.data_dir / "tenants" / "default").exists()


def test_an_operator_key_with_a_tenant_is_refused(server: Server) -> None:
    r = server.as_("operator").post("/v1/admin/keys", json={"operator": True, "tenant": "acme"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "tenant", r.text


def test_admin_keys_cannot_be_bound_to_users(server: Server) -> None:
    r = server.as_("acme_admin").post("/v1/admin/keys", json={"admin": True, "users": ["alice"]})
    assert r.status_code == 422 and r.json()["error"]["field"] == "users", r.text


def _old_file(path: Path) -> dict[str, str]:
    """A key file as mnemolayer wrote it before operator keys (schema 1, user_version 0,
    written with plain ``sqlite3``): an admin key of acme, a plain key of globex, and an
    admin key of acme bound to a user (which that version allowed). Returns the keys."""
    path.parent.mkdir(parents=True)
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE api_keys (id TEXT PRIMARY KEY, hash TEXT NOT NULL, tenant TEXT NOT NULL, "
        "users TEXT NOT NULL, admin INTEGER NOT NULL, name TEXT, created_at TEXT NOT NULL, "
        "last_used_at TEXT, revoked_at TEXT)"
    )
    keys = {}
    for n, (name, tenant, users, admin) in enumerate(
        [("admin", "acme", [], 1), ("globex", "globex", [], 0), ("bound", "acme", ["al"], 1)]
    ):
        key_id = f"{n:016x}"
        keys[name] = token = f"msk_{key_id}_{'s' * 43}"
        digest = hashlib.sha256(token.encode()).hexdigest()
        db.execute(
            "INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, '2024-01-01T00:00:00+00:00', NULL, NULL)",
            (key_id, digest, tenant, json.dumps(users), admin, name),
        )
    db.commit()
    db.close()
    return keys


def test_an_old_key_file_is_upgraded_and_its_admins_stay_in_their_tenant(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    keys = _old_file(data / "keys.db")
    srv = start(tmp_path, "--data-dir", str(data))
    try:
        admin = srv.client(keys["admin"])
        assert admin.get("/v1/whoami").json()["operator"] is False
        assert admin.post("/v1/admin/keys", json={"tenant": "acme"}).status_code == 201
        assert admin.post("/v1/admin/keys", json={"tenant": "globex"}).status_code == 403
        assert admin.get("/v1/admin/tenants").status_code == 403
        globex_id = keys["globex"].split("_")[1]
        assert admin.delete(f"/v1/admin/keys/{globex_id}").status_code == 404
        assert srv.client(keys["globex"]).get("/v1/users/g/memories").status_code == 200
        # An admin key bound to a user could mint keys for every user: refused outright.
        assert srv.client(keys["bound"]).get("/v1/admin/keys").status_code == 403
        assert srv.client(keys["bound"]).get("/v1/users/al/memories").status_code == 200
    finally:
        srv.stop()
    assert "Traceback" not in srv.log_text(), srv.log_text()
    with sqlite3.connect(data / "keys.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2

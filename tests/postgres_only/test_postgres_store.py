"""What only the PostgreSQL store has: its URL options, pgvector's HNSW search, keys
ready for Citus, refusals, and several processes' worth of pooled connections. The
store contract itself runs on PostgreSQL through the ``db_path`` fixture (conftest)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import pytest

from mnemolayer import Memory, StoreError, ValidationError
from mnemolayer.store.postgres.store import PostgresStore, redact_url


def _with_query(url: str, extra: str) -> str:
    parts = urlsplit(url)
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit(parts._replace(query=query))


def test_hnsw_search_matches_exact_search(pg_url: str) -> None:
    url = _with_query(pg_url, "hnsw=on")
    rng = np.random.default_rng(7)
    with Memory(url, embedder="hashing", extractor=None) as mem:
        store = mem.store
        assert isinstance(store, PostgresStore) and store.hnsw
        mem.add([f"note number {i} about topic {i % 13}" for i in range(400)], user_id="u")
        mem.add([f"other user's note {i}" for i in range(50)], user_id="v")
        rowids, matrix = store.load_vectors("u", mem.embedder.dim)
        assert (
            store.read("SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'")[0][
                0
            ]
            == 1
        )
        hits = 0
        for _ in range(20):
            q = matrix[rng.integers(len(matrix))] + 0.05 * rng.standard_normal(matrix.shape[1])
            q = (q / np.linalg.norm(q)).astype(np.float32)
            exact = set(rowids[np.argsort(-(matrix @ q))[:10]].tolist())
            found = store.vector_search("u", q, 10)
            assert len(found) == 10
            assert set(r for r, _ in found) <= set(rowids.tolist())  # never another user's
            assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
            hits += len(exact & {r for r, _ in found})
        assert hits / 200 >= 0.95


def test_without_the_option_no_hnsw_index_is_kept(pg_url: str) -> None:
    with Memory(pg_url, embedder="hashing", extractor=None) as mem:
        mem.add("a note", user_id="u")
        assert not mem.store.hnsw  # type: ignore[attr-defined]
        sql = "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'"
        assert mem.store.read(sql)[0][0] == 0


@pytest.mark.parametrize(("extra", "message"), [("pool_max=0", "pool_max"),
                         ("pool_max=many", "pool_max"), ("hnsw=maybe", "hnsw")])  # fmt: skip
def test_bad_url_options_name_the_field(pg_url: str, extra: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message) as err:
        Memory(_with_query(pg_url, extra), embedder="hashing")
    assert err.value.field == "db"


def test_encryption_is_refused_with_a_clear_error(pg_url: str) -> None:
    with pytest.raises(ValidationError, match="SQLite store only") as err:
        Memory(pg_url, embedder="hashing", encryption=True)
    assert err.value.field == "encryption"


def test_a_password_never_appears_in_paths_or_errors() -> None:
    url = "postgresql://ms:s3cret@127.0.0.1:1/memory"
    assert "s3cret" not in redact_url(url)
    with pytest.raises(StoreError) as err:
        Memory(url + "?connect_timeout=2", embedder="hashing")
    assert "s3cret" not in str(err.value)
    assert "127.0.0.1" in str(err.value)


def test_every_key_leads_with_tenant_then_user_id_for_citus(pg_url: str) -> None:
    with Memory(pg_url, embedder="hashing") as mem:
        rows = mem.store.read(
            "SELECT t.relname, i.indisprimary, array_to_string(array_agg(a.attname ORDER BY "
            "k.n), ',') FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
            "JOIN pg_namespace ns ON ns.oid = t.relnamespace AND ns.nspname = current_schema() "
            "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k (attnum, n) "
            "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
            "WHERE i.indisunique GROUP BY t.relname, i.indexrelid, i.indisprimary"
        )
    # shared by every tenant; per tenant but store-wide (reference tables under Citus),
    # or keyed by user alone
    shared = {"schema_version", "tenants", "api_keys"}
    local = {"meta", "user_generation", "fts_totals"}
    assert rows
    for table, _primary, columns in rows:
        if table in shared:
            continue
        assert str(columns).split(",")[0] == "tenant", (table, columns)
        if table not in local:
            assert str(columns).split(",")[1] == "user_id", (table, columns)


def test_threads_share_the_pool_and_writes_stay_serial(pg_url: str) -> None:
    url = _with_query(pg_url, "pool_max=4")
    errors: list[BaseException] = []
    with Memory(url, embedder="hashing", extractor=None) as mem:

        def work(n: int) -> None:
            try:
                for i in range(15):
                    mem.add(f"thread {n} note {i}", user_id=f"u{n % 3}")
                    mem.search(f"note {i}", user_id=f"u{n % 3}")
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert mem.stats()["memories"] == 8 * 15


def test_a_read_only_store_refuses_writes(pg_url: str) -> None:
    with Memory(pg_url, embedder="hashing", extractor=None) as mem:
        [rec] = mem.add("kept", user_id="u")
    with Memory(pg_url, embedder="hashing", extractor=None, read_only=True) as ro:
        assert ro.get(rec.id).content == "kept"
        with pytest.raises(StoreError, match="read-only"):
            ro.add("more", user_id="u")
        assert [h.id for h in ro.search("kept", user_id="u")] == [rec.id]


def test_analyze_after_a_bulk_load(pg_url: str) -> None:
    with Memory(pg_url, embedder="hashing", extractor=None) as mem:
        mem.add([f"bulk note {i}" for i in range(200)], user_id="u")
        assert mem.store.analyze() >= 0  # type: ignore[attr-defined]
        analyzed = mem.store.read(
            "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'memories'"
        )
        assert analyzed == [(True,)]
        assert len(mem.search("bulk note 7", user_id="u")) > 0
    with (
        Memory(pg_url, embedder="hashing", extractor=None, read_only=True) as ro,
        pytest.raises(StoreError, match="read-only"),
    ):
        ro.store.analyze()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ms@127.0.0.1:1/x?password=hunter2secret&connect_timeout=2",
        "postgresql://ms:hunter2secret@127.0.0.1:1/x?connect_timeout=2",
        "PostgreSQL://ms@127.0.0.1:1/x?PASSWORD=hunter2secret&connect_timeout=2",
    ],
)
def test_no_form_of_password_reaches_a_message(url: str) -> None:
    assert "hunter2secret" not in redact_url(url)
    with pytest.raises(StoreError) as err:
        Memory(url, embedder="hashing")
    assert "hunter2secret" not in str(err.value)


@pytest.mark.parametrize(
    "target", ["postgresql://ms:pw@[::1/x", "host=127.0.0.1 port=1 password=pw dbname=x"]
)
def test_malformed_targets_are_validation_errors_naming_db(target: str, tmp_path: Any) -> None:
    # (a libpq keyword string would otherwise become an SQLite file of that name)
    with pytest.raises(ValidationError) as err:
        Memory(target, embedder="hashing")
    assert err.value.field == "db" and "pw" not in str(err.value)


@pytest.fixture
def empty_db(_pg_admin: str | None) -> Iterator[str]:
    """A new database with nothing in it (not copied from the migrated template)."""
    if _pg_admin is None:
        pytest.skip("no PostgreSQL")
    import psycopg

    name = f"mnemolayer_empty_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(_pg_admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield urlunsplit(urlsplit(_pg_admin)._replace(path=f"/{name}"))
    with psycopg.connect(_pg_admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_read_only_on_an_empty_database_says_so(empty_db: str) -> None:
    with pytest.raises(StoreError, match="no mnemolayer schema"):
        Memory(empty_db, embedder="hashing", read_only=True)


def test_stats_by_kind_in_a_fixed_order(pg_url: str) -> None:
    with Memory(pg_url, embedder="hashing") as mem:
        mem.add("I live in Porto", user_id="u")  # an episodic record and a semantic one
        assert list(mem.stats()["by_kind"]) == sorted(mem.stats()["by_kind"])


def test_serve_refuses_to_start_on_a_store_it_cannot_open() -> None:
    from typer.testing import CliRunner

    from mnemolayer.cli import app

    url = "postgresql://ms:hunter2secret@127.0.0.1:1/x?connect_timeout=2"
    result = CliRunner().invoke(app, ["--db", url, "--embedder", "hashing", "serve"])
    assert result.exit_code != 0
    assert "cannot connect" in result.output and "hunter2secret" not in result.output


def test_vectors_load_by_binary_copy_in_key_order(pg_url: str) -> None:
    """``load_vectors`` reads a user's vectors with a binary COPY: the rows of a plain
    ``ORDER BY memory_rowid, chunk`` read, exactly, long memories' several chunks
    included; another user's never join; a wrong dimension is a clear error."""
    from mnemolayer.embed.hashing import HashingEmbedder

    small_window = HashingEmbedder()
    small_window.max_tokens = 32  # so that a long memory has several chunk vectors
    with Memory(pg_url, embedder=small_window, extractor=None) as mem:
        store = mem.store
        assert isinstance(store, PostgresStore)
        long = " ".join(f"word{i}" for i in range(300))
        mem.add([f"note {i} on subject {i % 7}" for i in range(40)], user_id="u")
        mem.add([long, "a short one"], user_id="u")
        mem.add([f"someone else's note {i}" for i in range(30)], user_id="v")
        rows = store.read(
            "SELECT memory_rowid, chunk FROM vectors WHERE user_id = ? ORDER BY memory_rowid, chunk",
            ("u",),
        )
        assert len(rows) > 42  # the long memory has several chunks
        dim = mem.embedder.dim
        expected = np.array([r for r, _ in rows], dtype=np.int64)
        full_ids, full = store.load_vectors("u", dim)
        assert full_ids.dtype == np.int64 and full.dtype == np.float32
        assert full.shape == (len(rows), dim) and full.flags.writeable
        assert np.array_equal(full_ids, expected)
        for rowid, chunk in rows[::9]:
            blob = store.read(
                "SELECT vector::text FROM vectors WHERE user_id = ? AND memory_rowid = ? "
                "AND chunk = ?",
                ("u", rowid, chunk),
            )[0][0]
            at = rows.index((rowid, chunk))
            assert np.allclose(full[at], np.array(blob.strip("[]").split(","), dtype=np.float32))
        assert store.load_vectors("nobody", dim)[1].shape == (0, dim)
        with pytest.raises(StoreError, match="dimension"):
            store.load_vectors("u", dim + 1)


def test_a_due_access_flush_does_not_hold_up_the_search(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a search that finds the access counts due for writing hands the
    write to the store's flush thread (a pooled connection of its own) and returns; a
    read of the record waits for it, and closing the store ends the thread."""
    import time

    from mnemolayer.config import RetrievalConfig

    server_busy = threading.Event()
    real = PostgresStore._write_briefly

    def slow_server(self: PostgresStore, wait_s: float, fn: Any) -> bool:
        server_busy.wait(10)
        return real(self, wait_s, fn)

    monkeypatch.setattr(PostgresStore, "_write_briefly", slow_server)
    mem = Memory(
        pg_url, embedder="hashing", extractor=None,
        retrieval=RetrievalConfig(access_flush_size=1),
    )  # fmt: skip
    try:
        [rec] = mem.add("The red bike is in the garage", user_id="u")
        started = time.monotonic()
        for _ in range(3):
            assert mem.search("red bike", user_id="u")[0].id == rec.id
        assert time.monotonic() - started < 5  # no search waited for the (held) write
        assert len(mem.store.access_log) == 1  # one record, three accesses, not written yet
        assert any(t.name == "mnemolayer-access-flush" for t in threading.enumerate())
        server_busy.set()
        assert mem.store.flush_access(wait_s=10)  # the flush thread's write, awaited
        assert mem.get(rec.id, user_id="u").access_count == 3
        assert not mem.store.access_log
    finally:
        server_busy.set()
        mem.close()
    flusher = mem.store.__dict__.get("_flusher")
    assert flusher is None  # stopped and dropped by close


def test_vectors_load_inside_a_write_transaction(pg_url: str) -> None:
    """A write transaction runs in pipeline mode, where psycopg refuses COPY: the load
    reads the rows there instead, the same arrays, its own uncommitted writes included."""
    with Memory(pg_url, embedder="hashing", extractor=None) as mem:
        store = mem.store
        assert isinstance(store, PostgresStore)
        mem.add([f"note {i}" for i in range(12)], user_id="u")
        dim = mem.embedder.dim
        outside = store.load_vectors("u", dim)
        inside = store.transact(lambda c: store.load_vectors("u", dim))
        assert np.array_equal(outside[0], inside[0]) and np.array_equal(outside[1], inside[1])
        with pytest.raises(StoreError, match="dimension"):
            store.transact(lambda c: store.load_vectors("u", dim + 1))

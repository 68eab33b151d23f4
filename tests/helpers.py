"""Small helpers shared by the test modules."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mnemolayer import Memory, MemoryRecord
from mnemolayer.extract.base import Extraction
from mnemolayer.extract.rules.extractor import RuleExtractor
from mnemolayer.testing import HashingEmbedder

#: The repository root (``tests/`` is one level below it).
REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """Where the benchmark data sets live: ``$MNEMOLAYER_DATA_DIR`` when set, else
    ``../shared/data`` beside the repository (``locomo/``, ``memorybank/`` under it)."""
    configured = os.environ.get("MNEMOLAYER_DATA_DIR", "").strip()
    return Path(configured).expanduser() if configured else REPO.parent / "shared" / "data"


def shared_data(relative: str) -> Path:
    """``relative`` (e.g. ``"locomo/locomo_dev.json"``) under :func:`shared_data_dir`.

    Skips the test when it is absent, unless ``MNEMOLAYER_REQUIRE_DATA=1`` (set by
    ``.ci/run``), which makes it fail instead."""
    path = shared_data_dir() / relative
    if not path.exists():
        why = f"benchmark data {path} absent (set MNEMOLAYER_DATA_DIR or put it in ../shared/data)"
        if os.environ.get("MNEMOLAYER_REQUIRE_DATA") == "1":
            pytest.fail(f"{why}; MNEMOLAYER_REQUIRE_DATA=1 requires it")
        pytest.skip(why)
    return path


def all_records(mem: Memory, user_id: str) -> list[MemoryRecord]:
    """Every record of ``user_id``, following ``next_cursor`` page by page."""
    out: list[MemoryRecord] = []
    cursor = None
    while True:
        page = mem.list(user_id=user_id, limit=100, cursor=cursor)
        out += page.items
        cursor = page.next_cursor
        if cursor is None:
            return out


def is_postgres(db: object) -> bool:
    """Whether ``db`` (a test's ``db_path``) is a PostgreSQL URL rather than a file."""
    return str(db).startswith(("postgresql://", "postgres://"))


def table_names(db: object) -> set[str]:
    """The store's table names, read straight from the file or database."""
    if is_postgres(db):
        sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    else:
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return {str(r[0]) for r in raw_rows(db, sql)}


def raw_rows(db: object, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Rows of ``sql`` (SQLite dialect, ``?`` placeholders) read straight from the store,
    bypassing mnemolayer: a plain ``sqlite3`` connection for a file, a plain psycopg
    connection for a ``postgresql://`` URL (the statement translated as the PostgreSQL
    store translates its own)."""
    text = str(db)
    if is_postgres(text):
        import psycopg

        from mnemolayer.store.postgres.translate import translate

        with psycopg.connect(text) as conn:
            return [tuple(r) for r in conn.execute(translate(sql), list(params)).fetchall()]
    import sqlite3

    lite = sqlite3.connect(text)
    try:
        return lite.execute(sql, params).fetchall()
    finally:
        lite.close()


def integrity_check(db: object) -> list[tuple[object, ...]]:
    """The store's own consistency check, ``[("ok",)]`` when it finds nothing wrong.

    SQLite: ``PRAGMA integrity_check`` on the file. PostgreSQL: the ``amcheck``
    extension's checks of every B-tree index of the database (against its table, too:
    ``heapallindexed``) and of every table's heap (``verify_heapam``), each problem
    as a row; ``[("ok",)]`` without checking when the server lacks ``amcheck``."""
    if not is_postgres(db):
        return raw_rows(db, "PRAGMA integrity_check")
    import psycopg

    with psycopg.connect(str(db), autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        except psycopg.Error:
            return [("ok",)]
        problems: list[tuple[object, ...]] = []
        for (index,) in conn.execute(
            "SELECT c.oid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE a.amname = 'btree' AND n.nspname = current_schema() AND i.indisvalid"
        ).fetchall():
            try:
                conn.execute("SELECT bt_index_check(%s::regclass, true)", (index,))
            except psycopg.Error as exc:
                problems.append((f"index {index}: {exc}",))
        for (table,) in conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()"
        ).fetchall():
            for row in conn.execute("SELECT * FROM verify_heapam(%s::regclass)", (table,)):
                problems.append((f"table {table}: {row}",))
        return problems or [("ok",)]


def index_problems(db: sqlite3.Connection | Path | str) -> dict[str, int]:
    """Rows that point to something missing, or records missing their index rows, as
    ``{problem: count}``; empty when the indexes and the graph agree with the records.
    ``db``: an open ``sqlite3`` connection, or a store's file or PostgreSQL URL."""

    def count(sql: str) -> Any:
        if isinstance(db, sqlite3.Connection):
            return db.execute(sql).fetchone()[0]
        return raw_rows(db, sql)[0][0]

    checks = {
        "memory without vectors": "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM vectors v WHERE v.memory_rowid = m.rowid)",
        "memory without FTS row": "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM memories_fts f WHERE f.rowid = m.rowid)",
        "memory without ADD event": "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS "
        "(SELECT 1 FROM history h WHERE h.memory_id = m.id AND h.event = 'ADD')",
        "vector of no memory": "SELECT COUNT(*) FROM vectors v WHERE NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE m.rowid = v.memory_rowid)",
        "vector chunks not 0..n-1": "SELECT COUNT(*) FROM (SELECT memory_rowid FROM vectors "
        "GROUP BY memory_rowid HAVING MAX(chunk) + 1 != COUNT(*))",
        "FTS row of no memory": "SELECT COUNT(*) FROM memories_fts f WHERE NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE m.rowid = f.rowid)",
        "history of no memory": "SELECT COUNT(*) FROM history h WHERE NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE m.id = h.memory_id)",
        "fact_sources of no fact": "SELECT COUNT(*) FROM fact_sources s WHERE NOT EXISTS "
        "(SELECT 1 FROM facts f WHERE f.id = s.fact_id)",
        "fact_sources of no memory": "SELECT COUNT(*) FROM fact_sources s WHERE NOT EXISTS "
        "(SELECT 1 FROM memories m WHERE m.id = s.source_id)",
        "fact with no subject": "SELECT COUNT(*) FROM facts f WHERE NOT EXISTS "
        "(SELECT 1 FROM entities e WHERE e.id = f.subject_id)",
        "fact with a missing object": "SELECT COUNT(*) FROM facts f WHERE f.object_id IS NOT "
        "NULL AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = f.object_id)",
        "fact with a missing record": "SELECT COUNT(*) FROM facts f WHERE f.memory_id IS NOT "
        "NULL AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = f.memory_id)",
        "fact with no fact_sources": "SELECT COUNT(*) FROM facts f WHERE NOT EXISTS "
        "(SELECT 1 FROM fact_sources s WHERE s.fact_id = f.id)",
        "fact source_ids unlike fact_sources": "SELECT COUNT(*) FROM facts f WHERE "
        "(SELECT COUNT(*) FROM json_each(f.source_ids)) != "
        "(SELECT COUNT(*) FROM fact_sources s WHERE s.fact_id = f.id) OR EXISTS "
        "(SELECT 1 FROM json_each(f.source_ids) j WHERE NOT EXISTS (SELECT 1 FROM "
        "fact_sources s WHERE s.fact_id = f.id AND s.source_id = j.value))",
        "semantic record of no fact": "SELECT COUNT(*) FROM memories m WHERE m.kind = "
        "'semantic' AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.memory_id = m.id)",
        "alias of no entity": "SELECT COUNT(*) FROM entity_aliases a WHERE NOT EXISTS "
        "(SELECT 1 FROM entities e WHERE e.id = a.entity_id)",
    }
    return {name: n for name, sql in checks.items() if (n := count(sql))}


#: Seconds a call waits at a :class:`Gate` before it fails the test.
GATE_WAIT_S = 20.0
_GATES: list[Gate] = []


class Gate:
    """A point a model's call waits at: :meth:`arm` it, the next call sets ``entered`` and
    waits for :meth:`open` (every gate is opened after its test, failed or not)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self._open = threading.Event()
        self._armed = False
        self._lock = threading.Lock()
        _GATES.append(self)

    def arm(self) -> None:
        self._armed = True

    def open(self) -> None:
        self._open.set()

    def pass_through(self) -> None:
        with self._lock:
            armed, self._armed = self._armed, False
        if armed:
            self.entered.set()
            assert self._open.wait(GATE_WAIT_S), "the test never opened the gate"


def open_gates() -> None:
    """Open every gate made so far (after a test, failed or not: no thread left waiting)."""
    while _GATES:
        _GATES.pop().open()


class EndpointEmbedder(HashingEmbedder):
    """The hashing model behind an endpoint a test controls: unreachable (``ConnectionError``)
    while ``down``; with a ``gate``, each call first passes ``gate.pass_through()`` (a test
    holds a slow call there)."""

    __test__ = False

    def __init__(self, *, down: bool = False, gate: Gate | None = None) -> None:
        super().__init__()
        self.down, self.gate = down, gate
        self.calls: list[int] = []  # texts per call that answered

    def embed(self, texts: Sequence[str], kind: Any = "document") -> np.ndarray:
        if self.down:
            raise ConnectionError("embedding endpoint unreachable")
        if self.gate is not None:
            self.gate.pass_through()
        self.calls.append(len(texts))
        return super().embed(texts, kind)


class EndpointExtractor:
    """The rule extractor behind an endpoint a test controls, like :class:`EndpointEmbedder`."""

    __test__ = False
    name = "endpoint-rules"

    def __init__(self, *, down: bool = False, gate: Gate | None = None) -> None:
        self.down, self.gate = down, gate
        self.rules = RuleExtractor()

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        if self.down:
            raise ConnectionError("extraction endpoint unreachable")
        if self.gate is not None:
            self.gate.pass_through()
        return self.rules.extract(text, speaker=speaker, timestamp=timestamp)

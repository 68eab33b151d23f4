"""Search's reads by rowid stay rowid look-ups on SQLite.

Every read of the request path also filters by user (one shard on a store sharded by
user). Written ``user_id = ?``, that filter made SQLite's planner, which has no table
statistics, scan the user's index instead of looking the candidates' rowids up: a big
user's search then read its whole index several times (73 ms of CPU per search for a
user of 100,000 memories in ``bench scale --n 1000000``, against 5 ms). The store writes
it ``+user_id = ?`` on SQLite (``store.where.user_by_rowid``); this test asks SQLite for the
plan of every statement a search sends that reads by rowid.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mnemolayer import Memory
from mnemolayer.lifecycle.clock import FakeClock

#: A read by a list of rowids (of memories, or of vectors by their memory's rowid).
_BY_ROWID = re.compile(r"\b(?:m\.)?(?:memory_)?rowid IN \(", re.I)


def _plans(memory: Memory, sql: str, params: Any) -> list[str]:
    store: Any = memory.store
    return [str(row[-1]) for row in store.read(f"EXPLAIN QUERY PLAN {sql}", params)]


def test_a_search_reads_its_candidates_by_rowid_not_by_scanning_the_users_index(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    with Memory(tmp_path / "plans.db", embedder="hashing", clock=clock) as memory:
        for day in range(4):
            memory.add(
                [f"Caroline went hiking near lake {day}-{i} and saw birds" for i in range(50)],
                user_id="caroline",
                session_id=f"s{day}",
            )
        memory.add(["Melanie paints sunsets"], user_id="melanie")
        store: Any = memory.store
        sent: list[tuple[str, Any]] = []
        read = store.read

        def recording(sql: str, params: Any = ()) -> Any:
            sent.append((sql, list(params)))
            return read(sql, params)

        store.read = recording
        try:
            hits = memory.search("where did Caroline go hiking?", user_id="caroline", limit=10)
        finally:
            store.read = read
        assert hits, "the search found nothing: the test would check no plan"

        by_rowid = [
            (sql, params)
            for sql, params in sent
            if _BY_ROWID.search(sql) and params.count("caroline") and len(params) > 20
        ]
        assert by_rowid, "no read by a list of rowids was sent"
        for sql, params in by_rowid:
            plans = _plans(memory, sql, params)
            assert not any("memories_user" in p or "vectors_user" in p for p in plans), (
                f"scans the user's index: {plans} for {sql[:120]}"
            )

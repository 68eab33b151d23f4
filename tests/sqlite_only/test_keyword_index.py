"""The SQLite keyword index holds per-user terms (textproc.user_term_tag), BM25 statistics
are the user's, migration 7 converts a store indexed before, and the two-step keyword
look-up returns what the joined query returns."""

from __future__ import annotations

import base64
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mnemolayer import Memory
from mnemolayer.crypto import EncryptionConfig
from mnemolayer.retrieval.bm25 import bm25_scores
from mnemolayer.retrieval.search import active_where
from mnemolayer.store.sqlite.migrations import SCHEMA_VERSION
from mnemolayer.text.terms import USER_TAG_LEN, fts_match_expression, tag_terms, user_term_tag

USERS = ["alice", "ünïcødé", "用户甲", "a b", "x" * 256, "emoji \U0001f600"]


def _raw(path: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def test_tag_is_fixed_length_hex_and_the_sql_of_migration_7_computes_the_same() -> None:
    con = sqlite3.connect(":memory:")
    sql = """WITH RECURSIVE h (i, v) AS (
                SELECT 1, 0 UNION ALL
                SELECT i + 1, (v * 31 + unicode(substr(?1, i, 1))) % 281474976710597
                FROM h WHERE i <= length(?1))
             SELECT printf('%012x', v) FROM h WHERE i = length(?1) + 1"""
    for user in [*USERS, "", "y" * 1000, "u00001", "u00002", "big"]:
        tag = user_term_tag(user)
        assert len(tag) == USER_TAG_LEN and int(tag, 16) >= 0
        assert con.execute(sql, (user,)).fetchone()[0] == tag, user
    assert len({user_term_tag(f"u{i:05d}") for i in range(5000)}) == 5000
    assert tag_terms("t", "a b") == "ta tb" and tag_terms("t", "") == ""


def test_terms_are_indexed_per_user_and_searches_stay_apart(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder="hashing", extractor="none") as mem:
        for user in USERS:
            mem.add(["I moved to Lisbon last spring", "我每天早上喝拿铁"], user_id=user)
        rows = _raw(path, "SELECT m.user_id, f.terms FROM memories m JOIN memories_fts f "
                          "ON f.rowid = m.rowid")  # fmt: skip
        for user, terms in rows:
            tag = user_term_tag(str(user))
            assert all(t.startswith(tag) for t in str(terms).split()), (user, terms)
        for user in USERS:
            tag = user_term_tag(user)
            # One posting list per user and term: the vocabulary counts this user's rows.
            assert _raw(path, "SELECT doc FROM memories_fts_vocab WHERE term = ?",
                        (tag + "lisbon",)) == [(1,)]  # fmt: skip
            hits = mem.search("Lisbon", user_id=user, mode="keyword")
            assert [h.memory.user_id for h in hits] == [user]
            assert "拿铁" in mem.search("拿铁", user_id=user, mode="keyword")[0].content
        assert mem.search("Lisbon", user_id="nobody", mode="keyword") == []


def test_bm25_statistics_are_the_users_own(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder="hashing", extractor="none") as mem:
        store = mem._searcher.store
        mem.add(["Alice moved to Lisbon", "Bob likes tea", "Carol plays chess"], user_id="u")
        # Another user writing "Lisbon" a hundred times leaves u's IDF as it was: the
        # document count and N are u's; only the store's mean length (the pivot of
        # length normalisation) moves.
        mem.add([f"Lisbon note {i}" for i in range(100)], user_id="other")
        (term,) = store.blind_query_terms("u", ["lisbon"])
        assert store.term_doc_counts([term]) == {term: 1}
        n, mean = store.text_stats("u")
        all_n, all_mean = store.text_stats()
        assert (n, all_n) == (3, 103) and mean == all_mean > 0
        # The mean comes from FTS5's own totals; it equals the vocabulary's sum.
        total = _raw(mem.path, "SELECT SUM(cnt) FROM memories_fts_vocab")[0][0]
        assert mean == pytest.approx(int(total) / 103)  # type: ignore[call-overload]
        hit = mem.search("Lisbon", user_id="u", mode="keyword")[0]
        [(indexed,)] = store.read(
            "SELECT terms FROM memories_fts WHERE rowid = (SELECT rowid FROM memories "
            "WHERE id = ?)",
            (hit.id,),
        )
        doc = str(indexed).split()
        assert hit.scores["keyword"] == pytest.approx(
            bm25_scores([term], [doc], {term: 1}, 3, mean)[0]
        )
        # The user's own memories do change it: the word is now common for u.
        before = hit.scores["keyword"]
        mem.add(["Dan visited Lisbon", "Eve visited Lisbon too"], user_id="u")
        assert mem.search("Lisbon", user_id="u", mode="keyword")[0].scores["keyword"] < before


def _downgrade_to_6(path: Path, untag: bool) -> list[tuple[object, ...]]:
    """Make ``path`` look like a store of schema 6: terms as they were indexed before
    (untagged), versions 7 and later not applied (what migrations 8 to 11 added
    dropped). Returns the tagged terms it held."""
    con = sqlite3.connect(path)
    tagged = con.execute("SELECT rowid, terms FROM memories_fts ORDER BY rowid").fetchall()
    if untag:
        for rowid, terms in tagged:
            plain = " ".join(t[USER_TAG_LEN:] for t in str(terms).split())
            con.execute("UPDATE memories_fts SET terms = ? WHERE rowid = ?", (plain, rowid))
    con.execute("DROP TABLE tombstones")
    con.execute("DROP INDEX memories_pending")
    for column in ("pending_embedding", "pending_extraction", "revision", "source", "flags"):
        con.execute(f"ALTER TABLE memories DROP COLUMN {column}")
    con.execute("DELETE FROM schema_version WHERE version >= 7")
    con.commit()
    con.close()
    return tagged


def test_migration_7_tags_the_terms_of_an_existing_store(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder="hashing", extractor="none") as mem:
        for user in USERS:
            mem.add(["I moved to Lisbon last spring", "我每天早上喝拿铁", "!!!"], user_id=user)
    tagged = _downgrade_to_6(path, untag=True)
    assert _raw(path, "SELECT terms FROM memories_fts ORDER BY rowid") != [t[1:] for t in tagged]
    with Memory(path, embedder="hashing", extractor="none") as mem:
        assert mem.stats()["schema_version"] == SCHEMA_VERSION
        for user in USERS:
            assert [
                h.memory.user_id for h in mem.search("Lisbon", user_id=user, mode="keyword")
            ] == [user]
    assert _raw(path, "SELECT rowid, terms FROM memories_fts ORDER BY rowid") == tagged
    con = sqlite3.connect(path)
    con.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    con.close()


def test_migration_7_leaves_blind_terms_of_an_encrypted_store(tmp_path: Path) -> None:
    path = tmp_path / "enc.db"
    cfg = EncryptionConfig(master_key=base64.b64encode(os.urandom(32)).decode())
    with Memory(path, embedder="hashing", extractor="none", encryption=cfg) as mem:
        mem.add(["I moved to Lisbon last spring", "tea at noon"], user_id="alice")
    blind = _downgrade_to_6(path, untag=False)
    with Memory(path, embedder="hashing", extractor="none", encryption=cfg) as mem:
        assert mem.stats()["schema_version"] == SCHEMA_VERSION
        hits = mem.search("Lisbon", user_id="alice", mode="keyword")
        assert [h.content for h in hits] == ["I moved to Lisbon last spring"]
    assert _raw(path, "SELECT rowid, terms FROM memories_fts ORDER BY rowid") == blind


def test_two_step_keyword_lookup_matches_the_joined_query(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder="hashing", extractor="none") as mem:
        # Lengths all differ, so no two rows tie on BM25 (a tie at the cut could go
        # either way in either query).
        texts = [f"kayak{' tea' if i % 3 == 0 else ''}{' pad' * i}" for i in range(60)]
        added = mem.add(texts, user_id="u", session_id="s")
        more = [f"kayak elsewhere{' pad' * (60 + i)}" for i in range(20)]
        mem.add(more, user_id="u", session_id="t")
        for rec in added[:25]:  # inactive records the filter must drop from the head
            mem.archive(rec.id, user_id="u")
        store = mem._searcher.store
        now = datetime.now(UTC)
        act, act_params = active_where(now, "m.")
        match = fts_match_expression(store.blind_query_terms("u", ["kayak", "tea"]))
        assert match is not None
        for where, params, limit in (
            (act, act_params, 10),  # enough pass among the head
            (f"m.session_id = ? AND {act}", ["t", *act_params], 10),  # most filtered out
            (f"m.session_id = ? AND {act}", ["s", *act_params], 50),  # too few in all
            (act, act_params, 0),
        ):
            got = store.keyword_matches("u", match, where, params, limit)
            joined = store.read(
                "SELECT m.rowid, memories_fts.terms FROM memories_fts JOIN memories m ON "
                f"m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND m.user_id = ? "
                f"AND {where} ORDER BY bm25(memories_fts), m.rowid",
                [match, "u", *params],
            )
            want = [(int(r), str(t)) for r, t in joined][:limit]
            assert len(got) == len(want) and set(got) == set(want), (where, limit)

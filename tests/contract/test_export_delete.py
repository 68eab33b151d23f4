"""Deletion receipts, export → delete → import, and MEMORY.md (issue 7, item 3).

Bars: the receipt of ``delete_all`` counts what every table and index lost and its
re-check finds nothing of the user anywhere, also after reopening the file (and a raw
``sqlite3`` look at every table agrees); export → delete_all → import into the same file
restores the user exactly (ids, contents, metadata, times, facts with validity and
provenance, history, windows), also after a restart; a MEMORY.md edit (one line changed,
one deleted, one added) does exactly those three things.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import integrity_check, is_postgres, raw_rows, table_names
from mnemolayer import Memory, ValidationError
from mnemolayer.cli import app
from mnemolayer.layers.working.window import SQLiteSessionStore
from mnemolayer.privacy.erasure import DeletionReceipt, check_remaining

USER = "zed-7f3a"
OTHER = "bob"
MARK = "zorblaxian"  # a word only USER's memories contain


def populate(mem: Memory, clock: Any) -> dict[str, Any]:
    """USER: messages with facts (one restated later), a preference, an update, a delete,
    a procedural note, a window with a compacted summary and a pin, a session-only memory;
    OTHER: a memory, a fact and a window."""
    made: dict[str, Any] = {}
    made["chat"] = mem.add(
        [
            {"role": "user", "content": f"I live in Lisbon and I love {MARK} tea",
             "name": "Zed", "timestamp": "2024-03-01T09:30:00Z", "metadata": {"n": 1}},
            {"role": "assistant", "content": "Lisbon is lovely", "id": "z-2"},
            {"role": "user", "content": "My dog is called Rex", "timestamp": "2024-03-02"},
        ],
        user_id=USER, session_id="s1", metadata={"src": "chat", "nested": {"a": [1, None]}},
    )  # fmt: skip
    clock.advance(hours=1)
    # The same fact stated again, for a later time.
    made["again"] = mem.add(
        "I live in Lisbon", user_id=USER, timestamp="2024-04-01T00:00:00Z", session_id="s2"
    )
    made["pref"] = mem.add(f"Zed prefers {MARK} coffee", user_id=USER, kind="preference")[0]
    made["proc"] = mem.add("Ask for the budget first", user_id=USER, kind="procedural")[0]
    clock.advance(days=1)
    mem.update(made["pref"].id, content=f"Zed prefers {MARK} jasmine tea", importance=0.8)
    gone = mem.add("a memory that will be deleted", user_id=USER)[0]
    mem.delete(gone.id)
    wm = mem.working(session_id="w1", user_id=USER, budget_tokens=120)
    wm.add("system", "You are Zed's coach.", pin=True)
    for i in range(6):
        clock.advance(minutes=1)
        wm.add("user", f"Ride {i}: 40 km on the {MARK} coast road at 25 km/h.")
        wm.add("assistant", f"Logged ride {i}.")
    mem.add("My locker code is 4711", user_id=USER, session_id="w1", session_only=True)
    mem.search("Lisbon tea", user_id=USER)  # access counts and the vector cache
    made["bob"] = mem.add("Bob lives in Porto", user_id=OTHER)[0]
    mem.working(session_id="b1", user_id=OTHER).add("user", "hello from Bob")
    return made


def raw(path: Path | str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows read straight from the file (plain sqlite3) or the PostgreSQL database."""
    return raw_rows(path, sql, params)


def columns(path: Path, table: str) -> list[str]:
    """The column names of ``table``, read straight from the store."""
    if is_postgres(path):
        sql = (
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "AND table_schema = current_schema() ORDER BY ordinal_position"
        )
        return [str(r[0]) for r in raw(path, sql, (table,))]
    return [str(c[1]) for c in raw(path, f'PRAGMA table_info("{table}")')]


def user_counts(path: Path, user: str) -> dict[str, int]:
    """Rows of ``user`` per table with a user_id column, read with plain sqlite3 (or
    psycopg)."""
    tables = [t for t in sorted(table_names(path)) if "user_id" in columns(path, t)]
    return {t: raw(path, f'SELECT count(*) FROM "{t}" WHERE user_id = ?', (user,))[0][0]
            for t in tables}  # fmt: skip


def traces(path: Path, *needles: str) -> list[tuple[str, str]]:
    """(table, column) of every text cell in the file that contains one of ``needles``
    (every table, FTS shadow tables and vocabulary included; on PostgreSQL every text,
    JSON and ``tsvector`` cell of every table)."""
    if is_postgres(path):
        text = (
            "pg_typeof(\"{c}\")::text IN ('text', 'character varying', 'jsonb', 'json', 'tsvector')"
        )
        find = 'strpos(lower("{c}"::text), ?) > 0'
    else:
        text = "typeof(\"{c}\") = 'text'"
        find = 'instr(lower("{c}"), ?) > 0'
    found = []
    for table in sorted(table_names(path)):
        for col in columns(path, table):
            for needle in needles:
                sql = (f'SELECT count(*) FROM "{table}" WHERE {text.format(c=col)} '
                       f'AND {find.format(c=col)}')  # fmt: skip
                if raw(path, sql, (needle.lower(),))[0][0]:
                    found.append((table, col))
    return found


def snapshot(mem: Memory, user: str) -> dict[str, Any]:
    """Everything of a user, field by field: the export rows (records, entities, facts
    with ``stated_at``, windows, history) and what the API reads back."""
    rows = list(mem.export(user_id=user))
    ids = [r["id"] for r in rows if r["type"] == "memory"]
    return {
        "rows": rows,
        "records": [mem.get(i).model_dump() for i in ids],
        "history": {i: mem.history(i) for i in ids},
        "facts": mem.facts(user_id=user, include_history=True),
        "windows": sorted(
            (mem.sessions.load(user, i.session_id, i.agent_id) for i in mem.list_sessions(user)),
            key=lambda w: (w.session_id, w.agent_id or "") if w else ("", ""),
        ),
        "sources": raw(
            getattr(mem.store, "url", mem.store.path),
            "SELECT fact_id, source_id, stated_at FROM fact_sources WHERE user_id = ? "
            "ORDER BY 1, 2",
            (user,),
        ),
    }


def expected_removed(mem: Memory, user: str) -> dict[str, int]:
    """What the receipt should count, read independently before the deletion."""
    path = getattr(mem.store, "url", None) or Path(mem.store.path)
    counts = {t: n for t, n in user_counts(path, user).items()}
    counts["keyword_index"] = raw(
        path,
        "SELECT count(*) FROM memories_fts WHERE rowid IN "
        "(SELECT rowid FROM memories WHERE user_id = ?)",
        (user,),
    )[0][0]
    return counts


# -- the receipt ---------------------------------------------------------------------------


def test_receipt_counts_every_table_and_index_and_verifies(
    wsmem: Memory, clock: Any, db_path: Path
) -> None:
    populate(wsmem, clock)
    bob_before = snapshot(wsmem, OTHER)
    want = expected_removed(wsmem, USER)
    assert want["memories"] >= 8 and want["facts"] >= 2 and want["history"] >= 8
    windows = len(wsmem.list_sessions(USER))
    assert windows == 1

    receipt = wsmem.delete_all(user_id=USER)

    assert isinstance(receipt, DeletionReceipt) and receipt.whole_user
    assert receipt.memories == want["memories"] == receipt.removed["memories"]
    for key in ("memories", "vectors", "keyword_index", "history", "entities",
                "entity_aliases", "facts", "fact_sources", "user_generation"):  # fmt: skip
        assert receipt.removed[key] == want[key], key
    if isinstance(wsmem.sessions, SQLiteSessionStore):
        assert receipt.removed["working_sessions"] == windows
        assert receipt.removed["working_messages"] == want["working_messages"] > 0
    else:
        assert receipt.removed["session_windows"] == windows
        assert receipt.remaining["redis_window_keys"] == 0
        assert receipt.remaining["redis_user_index"] == 0
    assert receipt.removed["keyword_terms"] >= 1  # MARK, at least
    assert receipt.removed["vector_cache"] == 1
    # Every table with a user_id column was re-checked, and every check found nothing.
    assert set(wsmem.store.user_tables()) <= set(receipt.remaining)
    assert receipt.verified and not any(receipt.remaining.values()), receipt.remaining
    if is_postgres(db_path):
        left = "SELECT count(*) FROM memories_fts WHERE strpos(terms, ?) > 0"
    else:
        left = "SELECT count(*) FROM memories_fts_vocab WHERE term = ?"
    assert raw(db_path, left, (MARK,)) == [(0,)]
    assert snapshot(wsmem, OTHER) == bob_before  # the other user is untouched
    assert bob_before["rows"][1]["id"] in [h.id for h in wsmem.search("Porto", user_id=OTHER)]
    assert wsmem.search(f"{MARK} tea", user_id=USER) == []
    json.loads(receipt.model_dump_json())  # JSON-ready


def test_nothing_remains_after_a_restart_raw_file_included(
    wsmem: Memory, clock: Any, db_path: Path
) -> None:
    populate(wsmem, clock)
    ids = [r["id"] for r in wsmem.export(user_id=USER) if r["type"] == "memory"]
    rowids = {r[0] for r in raw(db_path, "SELECT rowid FROM memories WHERE user_id = ?", (USER,))}
    sessions = wsmem.sessions if not isinstance(wsmem.sessions, SQLiteSessionStore) else None
    receipt = wsmem.delete_all(user_id=USER)
    assert receipt.verified and receipt.remaining["write_ahead_log"] == 0
    # Not even in the file's free pages, old full-text segments or the log (secure_delete,
    # FTS optimize, a truncating checkpoint): while the store is still open (a server
    # keeps its log) and after it closed, the bytes hold none of the user's words.
    for when in ("open", "closed"):
        for part in () if is_postgres(db_path) else (db_path, Path(f"{db_path}-wal")):
            if part.exists():
                assert MARK.encode() not in part.read_bytes(), (when, part)
        wsmem.close()

    with Memory(db_path, embedder="hashing", sessions=sessions) as again:
        left = check_remaining(again._erasure, USER, rowids=rowids, memory_ids=ids, terms=[MARK])
        assert not any(left.values()), left
        assert again.list_sessions(USER) == []
        assert again.search(f"{MARK} Lisbon", user_id=USER) == []
    # sqlite3 itself: no row of the user in any table, and neither the user id nor a word
    # only the user said in any text cell of any table.
    counts = user_counts(db_path, USER)
    assert counts and not any(counts.values()), counts
    # ("locker", not the code 4711: ids are hex, and one may hold those digits)
    assert traces(db_path, USER, MARK, "Lisbon", "locker") == []
    assert integrity_check(db_path) == [("ok",)]
    assert user_counts(db_path, OTHER)["memories"] >= 1


def test_a_narrower_scope_keeps_todays_behaviour_with_a_receipt(mem: Memory) -> None:
    mem.add(["a one", "a two"], user_id="a", session_id="s1")
    [a3] = mem.add("a three", user_id="a", session_id="s2")
    receipt = mem.delete_all(user_id="a", session_id="s1")
    assert not receipt.whole_user and receipt.session_id == "s1"
    assert receipt.memories == receipt.removed["memories"] == 2
    assert receipt.removed["vectors"] == 2 and receipt.removed["keyword_index"] == 2
    assert receipt.verified and not any(receipt.remaining.values())
    assert [r.id for r in mem.list(user_id="a")] == [a3.id]
    assert [e.event for e in mem.history(a3.id)] == ["ADD"]


def test_another_process_sees_the_deletion_and_the_reimport(db_path: Path, clock: Any) -> None:
    # Two handles on one file behave like two processes, each with its own vector cache.
    writer = Memory(db_path, embedder="hashing", clock=clock)
    reader = Memory(db_path, embedder="hashing", clock=clock)
    try:
        populate(writer, clock)
        hits = [h.id for h in reader.search("Lisbon", user_id=USER, mode="vector")]
        rows = list(writer.export(user_id=USER))
        writer.delete_all(user_id=USER)
        assert reader.search("Lisbon", user_id=USER, mode="vector") == []
        writer.import_rows(rows)
        assert [h.id for h in reader.search("Lisbon", user_id=USER, mode="vector")] == hits
    finally:
        writer.close()
        reader.close()


# -- export → delete → import ----------------------------------------------------------------


def test_export_delete_import_restores_the_user_exactly(
    wsmem: Memory, clock: Any, db_path: Path, tmp_path: Path
) -> None:
    populate(wsmem, clock)
    # A source that stated a fact for another time than its valid_from (what a
    # late-arriving restatement leaves): the export carries it as "stated_at".
    wsmem.store.transact(
        lambda c: c.execute(
            "UPDATE fact_sources SET stated_at = '2024-02-01T00:00:00.000000+00:00' "
            "WHERE fact_id = (SELECT id FROM facts WHERE user_id = ? AND predicate = "
            "'has_pet')",
            (USER,),
        )
    )
    searches = {q: [h.id for h in wsmem.search(q, user_id=USER)] for q in ("Lisbon", "Rex")}
    before = snapshot(wsmem, USER)  # after the searches: they count accesses
    assert any("stated_at" in r for r in before["rows"] if r["type"] == "fact")
    assert len(before["windows"]) == 1 and before["windows"][0].summary
    dump = tmp_path / "zed.jsonl"
    dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in before["rows"]))

    assert wsmem.delete_all(user_id=USER).verified
    assert list(wsmem.export(user_id=USER))[1:] == []
    rows = [json.loads(line) for line in dump.read_text().splitlines()]
    assert wsmem.import_rows(rows) == sum(r["type"] == "memory" for r in rows)

    assert snapshot(wsmem, USER) == before  # ids, contents, metadata, times, facts, windows
    sessions = wsmem.sessions if not isinstance(wsmem.sessions, SQLiteSessionStore) else None
    wsmem.close()
    with Memory(db_path, embedder="hashing", clock=clock, sessions=sessions) as again:
        assert snapshot(again, USER) == before
        resumed = again.working(session_id="w1", user_id=USER, budget_tokens=120)
        assert resumed.messages() and resumed.evicted_count == before["windows"][0].evicted_count
        assert {q: [h.id for h in again.search(q, user_id=USER)] for q in searches} == searches


# -- MEMORY.md --------------------------------------------------------------------------------


def test_memory_md_shows_every_kind_with_ids(smem: Memory, clock: Any) -> None:
    made = populate(smem, clock)
    text = smem.export_markdown(user_id=USER)
    for section in ("## Profile and preferences", "## Facts", "## Episodic memories",
                    "## Procedural strategies", "### 2024-03-01"):  # fmt: skip
        assert section in text
    assert f"Zed prefers {MARK} jasmine tea <!-- id:{made['pref'].id} -->" in text
    assert "→ now` Zed lives in Lisbon" in text
    assert "locker" not in text  # session-only memories are not shown (not "4711": ids are hex)
    assert "Bob" not in text


def _edit(text: str, change: str, new: str, drop: str, add_under: str, added: str) -> str:
    lines = text.splitlines()
    out = []
    for line in lines:
        if drop in line:
            continue
        if change in line:
            line = line.replace(change, new)
        out.append(line)
        if line == add_under:
            out.append(f"- {added}")
    return "\n".join(out) + "\n"


def test_memory_md_round_trip_applies_exactly_the_edits(smem: Memory, clock: Any) -> None:
    made = populate(smem, clock)
    text = smem.export_markdown(user_id=USER)
    before = {r.id: r for r in smem.list(user_id=USER, limit=1000)}
    proc, pref = made["proc"], made["pref"]
    clock.advance(hours=1)
    edited = _edit(
        text,
        change="Ask for the budget first", new="Ask for the budget and the deadline first",
        drop=f"id:{pref.id}",
        add_under="## Procedural strategies", added="Summarise the plan at the end",
    )  # fmt: skip
    result = smem.import_markdown(edited, user_id=USER)

    assert result.updated == [proc.id] and result.deleted == [pref.id]
    assert len(result.added) == 1 and not result.skipped and not result.replaced
    assert smem.get(proc.id).content == "Ask for the budget and the deadline first"
    assert [e.event for e in smem.history(proc.id)] == ["ADD", "UPDATE"]
    assert smem.history(proc.id)[-1].old_content == "Ask for the budget first"
    assert [e.event for e in smem.history(pref.id)][-1] == "DELETE"
    [new] = [smem.get(i) for i in result.added]
    assert new.content == "Summarise the plan at the end" and new.kind == "procedural"
    after = {r.id: r for r in smem.list(user_id=USER, limit=1000)}
    untouched = set(before) - {proc.id, pref.id}
    assert {i: after[i] for i in untouched} == {i: before[i] for i in untouched}
    # The file it writes now imports as a no-op.
    again = smem.import_markdown(smem.export_markdown(user_id=USER), user_id=USER)
    assert (again.added, again.updated, again.deleted, again.skipped) == ([], [], [], [])


def test_memory_md_a_mistyped_id_never_deletes_the_memory_on_that_line(
    smem: Memory, clock: Any
) -> None:
    made = populate(smem, clock)
    proc = made["proc"]
    text = smem.export_markdown(user_id=USER)
    clock.advance(hours=1)
    mangled = text.replace(f"id:{proc.id}", "id:zzz")
    assert mangled != text
    result = smem.import_markdown(mangled, user_id=USER)
    assert proc.id not in result.deleted and not result.added
    assert smem.get(proc.id, user_id=USER).content == "Ask for the budget first"


def test_memory_md_edited_fact_is_replaced_and_new_facts_are_extracted(
    smem: Memory, clock: Any
) -> None:
    populate(smem, clock)
    text = smem.export_markdown(user_id=USER)
    [line] = [ln for ln in text.splitlines() if "→ now`" in ln and "Rex" in ln]
    marker = line[line.index("<!--") :]
    clock.advance(hours=1)
    edited = text.replace(line, f"- My dog is called Max {marker}")
    result = smem.import_markdown(edited, user_id=USER)
    assert len(result.replaced) == 1 and not result.skipped
    objects = {f.object for f in smem.facts(user_id=USER)}
    assert "Max" in objects and "Rex" not in objects


def test_memory_md_refuses_another_users_file_and_bad_lines(smem: Memory, clock: Any) -> None:
    populate(smem, clock)
    text = smem.export_markdown(user_id=USER)
    with pytest.raises(ValidationError) as err:
        smem.import_markdown(text, user_id=OTHER)
    assert err.value.field == "user_id"
    with pytest.raises(ValidationError) as err:
        smem.import_markdown(text + "\n## Secrets\n- x\n", user_id=USER)
    assert err.value.field is not None and err.value.field.startswith("markdown:")
    with pytest.raises(ValidationError):
        smem.import_markdown(b"# bytes", user_id=USER)  # type: ignore[arg-type]
    # Someone else's id in the file is skipped, never applied.
    bob = smem.list(user_id=OTHER).items[0]
    forged = text + f"\n## Summaries\n- hijack <!-- id:{bob.id} -->\n"
    forged = forged.replace("## Summaries\n_(none)_\n", "")
    result = smem.import_markdown(forged, user_id=USER)
    assert [s["id"] for s in result.skipped] == [bob.id]
    assert smem.get(bob.id).content == "Bob lives in Porto"


def test_cli_exports_markdown_and_applies_it(new_db: Callable[[str], Any], tmp_path: Path) -> None:
    db = new_db("cli")
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(app, ["--db", str(db), "--embedder", "hashing", "--json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout) if result.stdout.strip() else None

    run("add", "Ask for the budget first", "--user", "u", "--kind", "procedural")
    md = tmp_path / "MEMORY.md"
    run("export", "--user", "u", "--format", "markdown", "--out", str(md))
    md.write_text(md.read_text().replace("budget first", "budget and the deadline first"))
    out = run("import", str(md), "--user", "u")
    assert len(out["updated"]) == 1
    receipt = run("forget", "--user", "u", "--yes")["receipt"]
    assert receipt["verified"] is True and receipt["removed"]["history"] == 2


def test_an_encrypted_users_data_key_is_destroyed_and_counted(
    new_db: Callable[[str], Any], request: pytest.FixtureRequest
) -> None:
    crypto = pytest.importorskip("mnemolayer.crypto")
    config = crypto.EncryptionConfig(master_key=base64.b64encode(b"k" * 32))
    if is_postgres(new_db("enc")):
        request.applymarker(
            pytest.mark.xfail(
                strict=True,
                raises=ValidationError,
                reason="encryption at rest is SQLite-only: PostgreSQL refuses it",
            )
        )
    with Memory(new_db("enc"), embedder="hashing", encryption=config) as mem:
        mem.add(f"I love {MARK} tea", user_id=USER)
        mem.add("Bob lives in Porto", user_id=OTHER)
        assert mem.keyring is not None and mem.keyring.has_key(USER)
        receipt = mem.delete_all(user_id=USER)
        assert receipt.removed["data_keys"] == 1 and receipt.remaining["data_keys"] == 0
        assert receipt.verified and not mem.keyring.has_key(USER)
        assert mem.keyring.has_key(OTHER)
        assert mem.search("Porto", user_id=OTHER)[0].content == "Bob lives in Porto"

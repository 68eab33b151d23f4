"""The command line, end to end on a temporary SQLite file with the hashing test embedder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner, Result

from mnemolayer.cli import app
from mnemolayer.embed import HashingEmbedder
from mnemolayer.registry import EMBEDDERS

DOCS = Path(__file__).resolve().parents[3] / "docs" / "cli.md"
SCRIPT = Path(sys.executable).with_name("mnemolayer")

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def cli(db: Path, *args: str, json_out: bool = False, input: str | None = None) -> Result:
    options = ["--db", str(db), "--embedder", "hashing", *(["--json"] if json_out else [])]
    return runner.invoke(app, [*options, *args], input=input)


def ok(db: Path, *args: str, input: str | None = None) -> Any:
    """Run with ``--json``, check success, return the parsed stdout."""
    result = cli(db, *args, json_out=True, input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def add(db: Path, text: str, *args: str, user: str = "alice") -> dict[str, Any]:
    records = ok(db, "add", text, "--user", user, *args)
    assert len(records) == 1
    record: dict[str, Any] = records[0]
    return record


def test_add_prints_the_id_and_json_gives_the_record(db: Path) -> None:
    result = cli(db, "add", "Alice moved to Lisbon", "--user", "alice")
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"added [0-9a-f]{32}\n", result.stdout)

    record = add(
        db,
        "Alice adopted a cat named Miso",
        "--session",
        "s1",
        "--agent",
        "bot",
        "--time",
        "2024-03-02T10:00:00+02:00",
        "--meta-json",
        '{"tags": ["pet"], "n": 3, "source": "json"}',
        "--meta",
        "source=chat",
        "--importance",
        "0.9",
    )
    assert record["content"] == "Alice adopted a cat named Miso"
    assert (record["session_id"], record["agent_id"]) == ("s1", "bot")
    assert record["metadata"] == {"tags": ["pet"], "n": 3, "source": "chat"}
    assert record["importance"] == 0.9
    assert record["occurred_at"].startswith("2024-03-02T08:00:00")


def test_search_shows_a_table_and_json_gives_score_breakdowns(db: Path) -> None:
    add(db, "Alice moved to Lisbon in March")
    add(db, "Bob likes [bold]markup[/] and spicy food", user="bob")
    add(db, "The [/] weather was cold in Oslo")

    table = cli(db, "search", "Lisbon", "--user", "alice")
    assert table.exit_code == 0, table.output
    assert "Lisbon" in table.stdout and "score" in table.stdout
    assert "spicy" not in table.stdout  # another user's memory

    # Content is user data: brackets are printed, never read as rich markup.
    shown = cli(db, "search", "weather Oslo", "--user", "alice", "--mode", "keyword")
    assert shown.exit_code == 0, shown.output
    assert "[/]" in shown.stdout

    # The message and its fact's sentence tie on relevance; ask for the message itself.
    hits = ok(db, "search", "Lisbon", "--user", "alice", "--limit", "1", "--mode", "hybrid",
              "--kind", "episodic")  # fmt: skip
    assert len(hits) == 1
    assert hits[0]["memory"]["content"] == "Alice moved to Lisbon in March"
    assert 0.0 <= hits[0]["score"] <= 1.0
    assert "final" in hits[0]["scores"]


def test_search_filter_json_and_threshold(db: Path) -> None:
    add(db, "Lisbon trip planned", "--meta", "topic=travel")
    add(db, "Lisbon rent is high", "--meta", "topic=money")
    hits = ok(db, "search", "Lisbon", "--user", "alice", "--filter-json", '{"topic": "travel"}')
    assert [h["memory"]["content"] for h in hits] == ["Lisbon trip planned"]
    scored = ok(db, "search", "Lisbon", "--user", "alice", "--threshold", "0.2")
    assert all(h["score"] >= 0.2 for h in scored)


def test_list_pages_with_a_cursor(db: Path) -> None:
    ids = [add(db, f"memory number {i}")["id"] for i in range(3)]

    first = ok(db, "list", "--user", "alice", "--limit", "2")
    assert first["next_cursor"]
    second = ok(db, "list", "--user", "alice", "--limit", "2", "--cursor", first["next_cursor"])
    assert second["next_cursor"] is None
    assert sorted(r["id"] for r in first["items"] + second["items"]) == sorted(ids)

    table = cli(db, "list", "--user", "alice", "--limit", "2")
    assert table.exit_code == 0, table.output
    assert "memory number" in table.stdout
    assert f"--cursor {first['next_cursor']}" in table.stderr


def test_get_delete_and_history(db: Path) -> None:
    record = add(db, "Alice's birthday is 4 May")
    memory_id = record["id"]

    assert ok(db, "get", memory_id) == record
    shown = cli(db, "get", memory_id)
    assert shown.exit_code == 0 and "birthday" in shown.stdout

    assert ok(db, "delete", memory_id) == {"deleted": memory_id}
    gone = cli(db, "get", memory_id)
    assert gone.exit_code == 2

    events = ok(db, "history", memory_id)
    assert [e["event"] for e in events] == ["ADD", "DELETE"]
    table = cli(db, "history", memory_id)
    assert table.exit_code == 0 and "DELETE" in table.stdout


def test_update_changes_content_metadata_and_importance(db: Path) -> None:
    memory_id = add(db, "Alice lives in Porto", "--meta", "source=chat")["id"]
    updated = ok(db, "update", memory_id, "--content", "Alice lives in Lisbon", "--importance", "1")
    assert (updated["content"], updated["importance"]) == ("Alice lives in Lisbon", 1.0)
    assert updated["metadata"] == {"source": "chat"}  # untouched unless given

    cleared = ok(db, "update", memory_id, "--meta-json", "{}")
    assert cleared["metadata"] == {}
    assert "updated" in cli(db, "update", memory_id, "--meta", "k=v").stdout

    events = ok(db, "history", memory_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE", "UPDATE", "UPDATE"]
    assert events[1]["old_content"] == "Alice lives in Porto"
    assert events[1]["new_content"] == "Alice lives in Lisbon"


def test_empty_results_say_so_on_stderr(db: Path) -> None:
    add(db, "someone else's memory")  # a store that exists (a missing one is refused)
    for args in (["list", "--user", "nobody"], ["search", "anything", "--user", "nobody"]):
        result = cli(db, *args)
        assert result.exit_code == 0, result.output
        assert (result.stdout, result.stderr) == ("", "no memories\n")


def test_erase_removes_one_memory_and_its_history_contents(db: Path) -> None:
    kept = add(db, "I like green tea")
    secret = add(db, "My passport number is QX7741902")
    shown = cli(db, "erase", secret["id"], "--user", "alice")
    assert shown.exit_code == 0, shown.output
    assert "nothing left" in shown.stdout and "memories 1" in shown.stdout
    events = ok(db, "history", secret["id"])
    assert [e["event"] for e in events] == ["DELETE"] and events[0]["old_content"] is None
    assert ok(db, "get", kept["id"]) == kept
    missing = cli(db, "erase", secret["id"])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    other = add(db, "another note")
    receipt = ok(db, "erase", other["id"])
    assert receipt["verified"] is True and receipt["memory_id"] == other["id"]


def test_forget_asks_first_and_reports_the_count(db: Path) -> None:
    add(db, "first memory")
    add(db, "second memory")
    add(db, "not alice's", user="bob")

    refused = cli(db, "forget", "--user", "alice", input="n\n")
    assert refused.exit_code == 1
    assert len(ok(db, "list", "--user", "alice")["items"]) == 2

    confirmed = cli(db, "forget", "--user", "alice", input="y\n")
    assert confirmed.exit_code == 0, confirmed.output
    assert "removed 2 memories" in confirmed.stdout
    assert "nothing left" in confirmed.stdout  # the receipt's verification
    assert ok(db, "list", "--user", "alice")["items"] == []
    out = ok(db, "forget", "--user", "bob", "--yes")
    assert out["removed"] == 1 and out["receipt"]["verified"] is True


def test_stats(db: Path) -> None:
    add(db, "one memory")
    assert isinstance(ok(db, "stats"), dict)
    assert isinstance(ok(db, "stats", "--user", "alice"), dict)
    assert cli(db, "stats").exit_code == 0


def _populate(db: Path) -> None:
    add(db, "Alice moved to Lisbon", "--time", "2023-01-05T09:30:00Z", "--meta", "k=v")
    add(db, "日本語のメモ: 東京で寿司", "--session", "s2", "--meta-json", '{"x": [1, 2.5]}')
    doomed = add(db, "a memory that gets deleted", user="bob")
    ok(db, "delete", doomed["id"])


def test_export_import_round_trips_exactly(db: Path, tmp_path: Path) -> None:
    _populate(db)
    first = tmp_path / "first.jsonl"
    summary = ok(db, "export", "--out", str(first))
    assert summary["path"] == str(first)
    assert summary["exported"] == len(first.read_text(encoding="utf-8").splitlines())
    stdout_export = cli(db, "export")
    assert stdout_export.exit_code == 0
    assert stdout_export.stdout == first.read_text(encoding="utf-8")
    assert not first.with_name(first.name + ".partial").exists()

    copy = tmp_path / "copy.db"
    imported = cli(copy, "import", str(first))
    assert imported.exit_code == 0, imported.output
    second = tmp_path / "second.jsonl"
    assert cli(copy, "export", "--out", str(second)).exit_code == 0

    assert second.read_text(encoding="utf-8") == first.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    # The store has facts too ("I live in ..." and the like), so the graph travels along.
    assert {row["type"] for row in rows} <= {"header", "memory", "entity", "fact", "history"}
    assert {"header", "memory", "history"} <= {row["type"] for row in rows}


def test_export_one_user_and_import_from_stdin(db: Path, tmp_path: Path) -> None:
    _populate(db)
    exported = cli(db, "export", "--user", "alice")
    assert exported.exit_code == 0
    assert "bob" not in exported.stdout

    copy = tmp_path / "copy.db"
    result = cli(copy, "import", "-", json_out=True, input=exported.stdout)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["imported"] > 0
    assert cli(copy, "export", "--user", "alice").stdout == exported.stdout


def test_reindex(db: Path) -> None:
    add(db, "one")
    add(db, "two")
    assert ok(db, "reindex") == {"reindexed": 2, "embedder": "hashing"}
    result = cli(db, "reindex")
    assert result.exit_code == 0 and "re-embedded 2 memories" in result.stdout


def test_reindex_after_changing_the_embedder(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EMBEDDERS, "hashing-64", lambda: HashingEmbedder(dim=64))
    add(db, "the spare key is under the blue pot")
    add(db, "the boiler code is 4721")

    def other(*args: str) -> Result:
        return runner.invoke(app, ["--db", str(db), "--embedder", "hashing-64", *args])

    _assert_one_error_line(other("search", "key", "--user", "alice"), 1, "reindex")
    result = other("--json", "reindex")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"reindexed": 2, "embedder": "hashing-64"}

    found = other("--json", "search", "spare key", "--user", "alice")
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)[0]["memory"]["embedding_model"] == "hashing-v1/64"
    _assert_one_error_line(cli(db, "search", "key", "--user", "alice"), 1, "reindex")


def test_settings_come_from_the_environment(db: Path) -> None:
    env = {"MNEMOLAYER_DB": str(db), "MNEMOLAYER_EMBEDDER": "hashing"}
    added = runner.invoke(app, ["add", "from the environment", "--user", "u"], env=env)
    assert added.exit_code == 0, added.output
    assert db.exists()
    assert ok(db, "list", "--user", "u")["items"][0]["content"] == "from the environment"


def _assert_one_error_line(result: Result, code: int, *needles: str) -> None:
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0]
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["add", "   ", "--user", "u"], "content"),
        (["add", "hi", "--user", "u", "--meta-json", "{not json"], "--meta-json"),
        (["add", "hi", "--user", "u", "--meta-json", "[1, 2]"], "--meta-json"),
        (["add", "hi", "--user", "u", "--meta", "no-equals-sign"], "--meta"),
        (["add", "hi", "--user", "u", "--time", "yesterday-ish"], "--time"),
        (["add", "hi", "--user", "u", "--importance", "7"], "importance"),
        (["search", "q", "--user", "u", "--limit", "-1"], "limit"),
        (["search", "q", "--user", "u", "--filter-json", '"text"'], "--filter-json"),
        (["list", "--user", "u", "--limit", "-5"], "limit"),
        (["get", "0" * 32], ""),
        (["delete", "0" * 32], ""),
        (["history", "0" * 32], ""),
    ],
)
def test_usage_errors_exit_2_with_one_line(db: Path, args: list[str], needle: str) -> None:
    add(db, "an existing memory")  # reads refuse a missing store before their arguments
    _assert_one_error_line(cli(db, *args), 2, needle)


def test_bad_import_file_is_a_usage_error_and_writes_nothing(db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "memory"}\nnot json\n', encoding="utf-8")
    _assert_one_error_line(cli(db, "import", str(bad)), 2, "bad.jsonl:2")


def test_a_corrupt_store_is_a_runtime_error(db: Path) -> None:
    db.write_bytes(b"this is not a database" * 100)
    _assert_one_error_line(cli(db, "list", "--user", "u"), 1, "database corrupt")
    assert db.read_bytes() == b"this is not a database" * 100


def test_argument_errors_exit_2_without_traceback(db: Path) -> None:
    for args in (["add", "text"], ["search", "q", "--user", "u", "--mode", "psychic"]):
        result = cli(db, *args)
        assert result.exit_code == 2
        assert "Traceback" not in result.output


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("mnemolayer ")


def test_console_script(tmp_path: Path) -> None:
    help_run = subprocess.run([SCRIPT, "--help"], capture_output=True, text=True, timeout=60)
    assert help_run.returncode == 0, help_run.stderr
    assert "search" in help_run.stdout

    base = [SCRIPT, "--db", str(tmp_path / "m.db"), "--embedder", "hashing", "--json"]
    added = subprocess.run(
        [*base, "add", "The spare key is under the blue pot", "--user", "sam"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert added.returncode == 0, added.stderr
    found = subprocess.run(
        [*base, "search", "spare key", "--user", "sam"], capture_output=True, text=True, timeout=60
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["memory"]["id"] == json.loads(added.stdout)[0]["id"]

    failed = subprocess.run([*base, "get", "nope"], capture_output=True, text=True, timeout=60)
    assert failed.returncode == 2 and failed.stderr.startswith("error: ")
    assert "Traceback" not in failed.stderr


def _open_window(db: Path) -> None:
    """A compacted window with a pin in session s1 of alice, and a session-only memory."""
    from mnemolayer import Memory

    with Memory(db, embedder="hashing", extractor=None) as mem:
        wm = mem.working(session_id="s1", user_id="alice", budget_tokens=120)
        wm.add("system", "You are Alice's [bold]travel[/] assistant.", pin=True)
        for i in range(6):
            wm.add("user", f"Day {i}: I fly to Lisbon with Marta at 9:{i}0, seat 14{i}.")
            wm.add("assistant", f"Booked day {i}.")
        mem.add("Gate code 4711", user_id="alice", session_id="s1", session_only=True)


def test_session_list_show_and_end(db: Path) -> None:
    _open_window(db)
    [info] = ok(db, "session", "list", "--user", "alice")
    assert (info["session_id"], info["agent_id"], info["budget_tokens"]) == ("s1", None, 120)
    assert info["evicted_count"] > 0 and info["updated_at"]
    table = cli(db, "session", "list", "--user", "alice")
    assert table.exit_code == 0 and "s1" in table.stdout

    shown = ok(db, "session", "show", "--user", "alice", "--session", "s1")
    assert shown["tokens"] <= shown["budget_tokens"] == 120 and shown["summary"]
    assert shown["window"][0]["pinned"] and shown["messages"][1]["role"] == "system"
    # --json may follow the command too.
    after = runner.invoke(
        app,
        ["--db", str(db), "--embedder", "hashing", "session", "show", "--user", "alice",
         "--session", "s1", "--json"],
    )  # fmt: skip
    assert after.exit_code == 0 and json.loads(after.stdout) == shown
    people = cli(db, "session", "show", "--user", "alice", "--session", "s1")
    assert people.exit_code == 0, people.output
    assert "[bold]travel[/]" in people.stdout  # user text is never read as markup
    assert "pinned" in people.stdout and "summary" in people.stdout
    assert f"{shown['tokens']} of 120 tokens" in people.stderr

    ended = cli(db, "session", "end", "--user", "alice", "--session", "s1")
    assert ended.exit_code == 0, ended.output
    assert "cleared 1 session-only memories" in ended.stdout and "Marta" in ended.stdout
    again = ok(db, "session", "end", "--user", "alice", "--session", "s1")
    assert again == {
        "session_id": "s1", "user_id": "alice", "agent_id": None, "summary": None,
        "archived": 0, "cleared": 0, "window_closed": False, "turns": 0,
    }  # fmt: skip
    nothing = cli(db, "session", "end", "--user", "alice", "--session", "s1")
    assert nothing.exit_code == 0 and "nothing to end" in nothing.stderr
    assert ok(db, "session", "list", "--user", "alice") == []
    assert "no sessions" in cli(db, "session", "list", "--user", "alice").stderr
    summaries = ok(db, "search", "Lisbon Marta", "--user", "alice", "--filter-json",
                   '{"session_summary": true}')  # fmt: skip
    assert [h["memory"]["role"] for h in summaries] == ["system"]


def test_session_end_json_gives_the_summary(db: Path) -> None:
    _open_window(db)
    result = ok(
        db, "session", "end", "--user", "alice", "--session", "s1", "--summary-tokens", "40"
    )
    assert result["window_closed"] and result["cleared"] == 1 and result["archived"] > 0
    assert result["summary"]["metadata"]["session_summary"] is True
    assert result["turns"] == result["summary"]["metadata"]["turns"] == 13


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["session", "show", "--user", "alice", "--session", "nope"], 2, "no saved window"),
        (["session", "end", "--user", " ", "--session", "s1"], 2, "user_id"),
        (["session", "list", "--user", " "], 2, "user_id"),
    ],
)
def test_session_errors_are_one_line(db: Path, args: list[str], code: int, needle: str) -> None:
    add(db, "an existing memory")  # reads refuse a missing store before their arguments
    _assert_one_error_line(cli(db, *args), code, needle)


def test_session_argument_errors_exit_2(db: Path) -> None:
    for args in (
        ["session", "end", "--user", "alice"],
        ["session", "end", "--user", "alice", "--session", "s1", "--summary-tokens", "5"],
    ):
        result = cli(db, *args)
        assert result.exit_code == 2 and "Traceback" not in result.output


def test_add_pins_expires_and_keeps_a_memory_for_a_session_only(db: Path) -> None:
    kept = add(
        db, "My passport number is X1234", "--pinned", "--expires-at", "2999-01-01T00:00:00Z"
    )
    assert kept["pinned"] is True and kept["expires_at"].startswith("2999-01-01T00:00:00")
    temp = add(db, "The door code is 4711", "--session", "s1", "--session-only")
    assert temp["session_only"] is True
    _assert_one_error_line(
        cli(db, "add", "x", "--user", "alice", "--session-only"), 2, "--session-only"
    )
    _assert_one_error_line(
        cli(db, "add", "x", "--user", "alice", "--time", "2024-05-01T00:00:00Z",
            "--expires-at", "2024-04-01T00:00:00Z"),
        2, "--expires-at",
    )  # fmt: skip
    ended = ok(db, "session", "end", "--user", "alice", "--session", "s1", "--encoding",
               "o200k_base")  # fmt: skip
    assert ended["cleared"] == 1
    assert [r["id"] for r in ok(db, "list", "--user", "alice")["items"]] == [kept["id"]]
    _assert_one_error_line(
        cli(db, "session", "end", "--user", "alice", "--session", "s1", "--encoding", "nope"),
        2, "encoding",
    )  # fmt: skip


def test_search_explains_and_list_filters(db: Path) -> None:
    add(db, "Lisbon trip planned", "--meta", "topic=travel")
    add(db, "Lisbon rent is high", "--meta", "topic=money")
    hits = ok(db, "search", "Lisbon trip", "--user", "alice", "--explain")
    assert hits[0]["explanation"]["rank"] == 1 and hits[0]["explanation"]["summary"]
    assert ok(db, "search", "Lisbon trip", "--user", "alice")[0]["explanation"] is None
    table = cli(db, "search", "Lisbon trip", "--user", "alice", "--explain")
    assert table.exit_code == 0 and "1. rank 1: relevance" in table.stdout
    page = ok(db, "list", "--user", "alice", "--filter-json", '{"topic": "money"}')
    assert [r["content"] for r in page["items"]] == ["Lisbon rent is high"]
    _assert_one_error_line(
        cli(db, "list", "--user", "alice", "--filter-json", "[1]"), 2, "--filter-json"
    )


def test_context_takes_sections_recent_turns_and_an_encoding(db: Path) -> None:
    add(db, "I live in Porto")
    recent = '[{"role": "user", "content": "I fly to Oslo tomorrow"}]'
    result = ok(db, "context", "where am I flying?", "--user", "alice", "--section", "recent",
                "--recent-json", recent, "--encoding", "o200k_base")  # fmt: skip
    assert "Oslo" in result["text"] and "Porto" not in result["text"]
    assert [s["name"] for s in result["sections"]] == ["recent"]
    for args, needle in [
        (["--recent-json", "{}"], "--recent-json"),
        (["--recent-json", '[{"role": "user"}]'], "recent[0].content"),
        (["--section", "gossip"], "sections[0]"),
        (["--encoding", "nope"], "encoding"),
    ]:
        _assert_one_error_line(cli(db, "context", "q", "--user", "alice", *args), 2, needle)


def test_reindex_and_extract_take_a_batch_size(db: Path) -> None:
    for i in range(3):
        add(db, f"I like tea number {i}")
    stored = ok(db, "stats")["memories"]  # the messages and their facts' sentences
    assert stored > 3 and ok(db, "reindex", "--batch-size", "2")["reindexed"] == stored
    assert ok(db, "extract", "--batch-size", "2") == {"facts_added": 0}
    assert cli(db, "reindex", "--batch-size", "0").exit_code == 2


def _command_names(command: Any, prefix: str = "") -> list[str]:
    """Every runnable command ("add", "bench locomo", ...); groups are walked, not listed."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        return [prefix.strip()]
    return [n for name, sub in subcommands.items() for n in _command_names(sub, f"{prefix}{name} ")]


# The benchmarks leave the command line for `python -m bench` (documented in
# docs/benchmarks.md); until they do, their commands are not asked of docs/cli.md.
DOCUMENTED = [c for c in _command_names(typer.main.get_command(app)) if not c.startswith("bench ")]


@pytest.mark.parametrize("command", DOCUMENTED)
def test_every_command_is_documented(command: str) -> None:
    headings = re.findall(r"^## mnemolayer (.+)$", DOCS.read_text(encoding="utf-8"), re.M)
    assert command in headings, f"`mnemolayer {command}` is missing from docs/cli.md"

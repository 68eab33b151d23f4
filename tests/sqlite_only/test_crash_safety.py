"""A writer process killed with SIGKILL at random points while it ingests (issue 7, item 4).

The writer (this file run as a script) opens a real :class:`~mnemolayer.Memory` on a real
file, with the hashing embedder and the default rule extractor, so every add writes
records, keyword index, vectors, history and the knowledge graph in one transaction. It
adds batches of messages and appends ``A <message number> <record id>`` to its log only
after ``add()`` returned: those are the acknowledged writes. Around each write
transaction it appends ``B`` and ``E``, so a log ending in ``B`` shows a kill inside one.

The test kills it again and again (random delays, some while it is still opening the
file), restarts ingestion each time a little before the last acknowledged message (so
acknowledged and maybe-committed messages are added again), then checks the file: every
acknowledged record is there, ``PRAGMA integrity_check`` and the FTS5 integrity check
pass, every index row points to a record and every record has its index rows, the graph
points only to what exists, and nothing is stored twice. ``MNEMOLAYER_CRASH_SEED`` picks
the schedule (delays, batch sizes, restart points; default 7); where a kill lands also
depends on the machine's speed.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from helpers import index_problems
from mnemolayer import Memory
from mnemolayer.errors import StoreError
from mnemolayer.extract.rules.extractor import RuleExtractor
from mnemolayer.store.sqlite.engine import SQLiteConnection

#: tests/, where the shared helpers live.
TESTS = str(Path(__file__).resolve().parents[1])

KILLS, MID_TRANSACTION, MAX_KILLS = 24, 4, 60
USER = "u"
_START = datetime(2024, 1, 1, tzinfo=UTC)
_CITIES = ["Porto", "Berlin", "Lisbon", "Oslo", "Kyoto", "Quito", "Dakar"]
_NAMES = ["Anna", "Bruno", "Chloe", "Dmitri", "Emeka", "Farah", "Goran", "Hana"]
_ORGS = ["Google", "Siemens", "Airbus", "Nokia", "Toyota"]
_FOODS = ["green tea", "dumplings", "sushi", "olives", "mango", "paella"]
_PETS = ["Rex", "Tom", "Luna", "Bella"]


def message(n: int) -> dict[str, Any]:
    """Message number ``n``: unique text, mostly user statements the rule extractor turns
    into facts (moves supersede each other, likes and friends repeat and are reinforced),
    some assistant replies; a fixed timestamp, so adding it again restates nothing."""
    kind = n % 6
    if kind == 0:
        text, role = f"Entry {n}. I live in {_CITIES[n // 6 % len(_CITIES)]}.", "user"
    elif kind == 1:
        name, org = _NAMES[n % len(_NAMES)], _ORGS[n % len(_ORGS)]
        text, role = f"Entry {n}. My friend {name} works at {org}.", "user"
    elif kind == 2:
        text, role = f"Entry {n}. I love {_FOODS[n % len(_FOODS)]}.", "user"
    elif kind == 3:
        text, role = f"Entry {n}. My dog is called {_PETS[n % len(_PETS)]}.", "user"
    elif kind == 4:
        text, role = f"Entry {n}. Noted, thank you.", "assistant"
    else:
        text, role = f"Entry {n}. Nothing much happened today.", "user"
    return {"role": role, "content": text, "timestamp": _START + timedelta(minutes=n)}


# -- the writer process ----------------------------------------------------------------------


def _writer(db: str, log_path: str, start: int, seed: int) -> None:
    """Ingest from message ``start`` on, in batches of 1-6, until killed."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def note(line: str) -> None:
        os.write(fd, line.encode())  # one write(2) per line: a kill never tears one

    mem = Memory(db, embedder="hashing")
    real_transact = mem.store.transact

    def transact(fn: Callable[[sqlite3.Connection], Any]) -> Any:
        note("B\n")
        out = real_transact(fn)
        note("E\n")
        return out

    mem.store.transact = transact  # type: ignore[method-assign]
    # Warm up (the rule extractor imports its language modules on first use), so that
    # a delay counted from READY is spent ingesting.
    RuleExtractor().extract("I live in Porto.")
    mem.embedder.embed(["warm up"])
    note("READY\n")
    rng = random.Random(seed)
    n = start
    while True:
        numbers = list(range(n, n + rng.randint(1, 6)))
        records = mem.add([message(k) for k in numbers], user_id=USER)
        note("".join(f"A {k} {r.id}\n" for k, r in zip(numbers, records, strict=True)))
        n = numbers[-1] + 1


# -- the test --------------------------------------------------------------------------------


@dataclass
class Campaign:
    """What the killed writers reported, over all runs."""

    acked: dict[int, str] = field(default_factory=dict)  # message number → record id
    kills: int = 0
    in_transaction: int = 0  # kills that landed between B and E
    before_ready: int = 0  # kills while the writer was starting: imports, open, migration


def _read_log(path: Path) -> list[str]:
    if not path.exists():
        return []
    text = path.read_text()
    return text.split("\n")[:-1]  # only complete lines


def _wait_for(proc: subprocess.Popen[bytes], log: Path, ready: Callable[[list[str]], bool]) -> None:
    deadline = time.monotonic() + 30
    while not ready(_read_log(log)):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate(timeout=5)
            pytest.fail(f"the writer stopped or hung: {err.decode()[-2000:]}")
        time.sleep(0.001)


def _run_once(db: Path, log: Path, start: int, rng: random.Random, campaign: Campaign) -> None:
    """Start a writer, kill it at a random point, and record what it acknowledged."""
    proc = subprocess.Popen(
        [sys.executable, __file__, str(db), str(log), str(start), str(rng.randrange(1 << 30))],
        # tests/ on the path too: the script imports the shared helpers, as pytest does.
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([TESTS, os.environ.get("PYTHONPATH", "")]),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        aim = rng.random()
        if aim < 0.15:  # anywhere: imports, opening, migrating, writing
            time.sleep(rng.uniform(0.05, 0.8))
        else:
            _wait_for(proc, log, lambda lines: "READY" in lines)
            time.sleep(rng.uniform(0.0, 0.5 if aim < 0.6 else 0.3))
            if aim >= 0.6:  # aimed at a write transaction: just after one began
                _wait_for(proc, log, lambda lines: lines[-1] == "B")
                time.sleep(rng.uniform(0.0, 0.004))
        if proc.poll() is not None:
            _, err = proc.communicate(timeout=5)
            pytest.fail(f"the writer died before it was killed: {err.decode()[-2000:]}")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    lines = _read_log(log)
    campaign.kills += 1
    campaign.before_ready += "READY" not in lines
    campaign.in_transaction += bool(lines) and lines[-1] == "B"
    for line in lines:
        if line.startswith("A "):
            _, number, rid = line.split()
            assert campaign.acked.setdefault(int(number), rid) == rid, "one message, two ids"


def _duplicates(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """The same message stored twice, or the same fact current twice."""
    return [
        *db.execute(
            "SELECT content, COUNT(*) FROM memories WHERE kind != 'semantic' "
            "GROUP BY user_id, content, role HAVING COUNT(*) > 1"
        ),
        *db.execute(
            "SELECT subject_id, predicate, object_norm, COUNT(*) FROM facts "
            "WHERE valid_to IS NULL GROUP BY user_id, subject_id, predicate, object_norm "
            "HAVING COUNT(*) > 1"
        ),
    ]


@pytest.mark.timeout(180)
@pytest.mark.slow  # kills writer processes again and again: about 10 s
def test_no_acknowledged_add_is_lost_when_the_writer_is_killed(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    rng = random.Random(int(os.environ.get("MNEMOLAYER_CRASH_SEED", "7")))
    campaign = Campaign()
    began = time.monotonic()
    start = 0
    # At least KILLS kills, and more (up to MAX_KILLS) until MID_TRANSACTION of them
    # landed inside a write transaction and enough adds were acknowledged (on a busy
    # machine a writer acknowledges fewer adds before each kill).
    while campaign.kills < KILLS or (
        (campaign.in_transaction < MID_TRANSACTION or len(campaign.acked) <= 4 * KILLS)
        and campaign.kills < MAX_KILLS
    ):
        _run_once(db, tmp_path / f"writer-{campaign.kills}.log", start, rng, campaign)
        last = max(campaign.acked, default=-1)
        start = max(0, last + 1 - rng.randint(0, 3))  # resume, re-adding a few
    elapsed = time.monotonic() - began

    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        raw.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        assert index_problems(raw) == {}
        assert _duplicates(raw) == []
        stored = dict(raw.execute("SELECT id, content FROM memories WHERE kind != 'semantic'"))
        facts = raw.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
        total = raw.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    raw.close()

    lost = {n: rid for n, rid in campaign.acked.items() if stored.get(rid) != message(n)["content"]}
    print(
        f"\ncrash safety: {campaign.kills} kills ({campaign.in_transaction} inside a write "
        f"transaction, {campaign.before_ready} while starting) in {elapsed:.1f} s; "
        f"{len(campaign.acked)} acknowledged adds, {len(lost)} lost; {len(stored)} messages "
        f"and {facts} facts stored"
    )
    assert lost == {}
    assert campaign.kills >= 20
    assert campaign.in_transaction >= MID_TRANSACTION
    assert len(campaign.acked) > 4 * KILLS, "too few writes acknowledged to mean anything"
    # Stored but never acknowledged is allowed (killed between commit and reply), and
    # only for the messages whose add was cut short.
    assert len(stored) <= max(campaign.acked) + 1 + 6

    # Adding every acknowledged message again finds each one: same id, nothing new.
    with Memory(db, embedder="hashing") as mem:
        numbers = sorted(campaign.acked)
        for i in range(0, len(numbers), 50):
            part = numbers[i : i + 50]
            again = mem.add([message(n) for n in part], user_id=USER)
            assert [r.id for r in again] == [campaign.acked[n] for n in part]
        assert mem.stats(user_id=USER)["memories"] == total


# -- a failed transaction leaves the store usable ----------------------------------------------


# SQLite's COMMIT failing (a deferred foreign key through PRAGMA) and its file write lock.
@pytest.mark.sqlite_only
def test_a_commit_that_fails_is_rolled_back_and_frees_the_write_lock(db_path: Path) -> None:
    # A COMMIT can fail (disk full, I/O error); a deferred foreign key makes one fail on
    # demand. The transaction must not stay open: the handle would refuse every later
    # write and hold the file's write lock against every other connection.
    def dangling_vector(c: sqlite3.Connection) -> None:
        c.execute("PRAGMA defer_foreign_keys = ON")
        c.execute("INSERT INTO vectors VALUES (-1, 0, 'u', x'00')")

    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        [kept] = mem.add("I adore green tea", user_id="u")
        with pytest.raises(StoreError, match="FOREIGN KEY constraint failed"):
            mem.store.transact(dangling_vector)
        other = SQLiteConnection(str(db_path), busy_timeout_s=1.0)
        try:
            other.set_meta("probe", "written by another connection")
        finally:
            other.close()
        [after] = mem.add("my cat is called Tom", user_id="u")
        assert [r.id for r in mem.list(user_id="u").items] == sorted([kept.id, after.id])
        assert mem.store.read("SELECT COUNT(*) FROM vectors WHERE memory_rowid = -1") == [(0,)]


# SQLite ending the transaction itself (its INSERT OR ROLLBACK conflict clause).
@pytest.mark.sqlite_only
def test_an_error_sqlite_rolled_back_itself_is_reported_as_it_was(db_path: Path) -> None:
    # Some errors end the transaction inside SQLite (here OR ROLLBACK; also disk full);
    # rolling back again must not replace the error with "no transaction is active".
    with Memory(db_path, embedder="hashing", extractor=None) as mem:
        with pytest.raises(StoreError, match="UNIQUE constraint failed"):
            mem.store.transact(
                lambda c: c.execute("INSERT OR ROLLBACK INTO meta VALUES ('embedding_dim', '1')")
            )
        [record] = mem.add("still writable", user_id="u")
        assert mem.get(record.id).content == "still writable"


if __name__ == "__main__":
    _writer(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))

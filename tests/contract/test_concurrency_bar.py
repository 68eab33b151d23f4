"""The concurrency bar of issue 7 (item 5), all at once on one SQLite file: 8 writer
threads (four sharing one :class:`~mnemolayer.Memory`, four with a handle each) and 2
writer processes, with fact extraction on, while a reader thread searches, lists and
reads facts throughout.

test_concurrency.py covers writers without extraction; here every add also writes the
knowledge graph, and the checks go down to the graph: no error reaches any caller, every
acknowledged add is stored once, the same message added by every writer at the same
moment lands once, and the same fact stated by every writer in its own words ends as one
fact whose sources are all those messages.
"""

from __future__ import annotations

import multiprocessing
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from helpers import all_records, index_problems, integrity_check
from mnemolayer import Memory

THREADS, PROCESSES, PER_WRITER = 8, 2, 20
SHARED = "My sister Anna works at Google."
# Eight threads and two processes writing one store at once: seconds per test.
pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]


def restatement(writer: str) -> str:
    """One writer's own words for a fact every writer states."""
    return f"{writer} here: I love green tea."


def distinct(writer: str, i: int) -> str:
    """A message of one writer alone, stating a fact of its own."""
    return f"{writer} entry {i}. I love recipe {writer}n{i}."


@dataclass
class Log:
    """What callers were told: acknowledged ``(content, id)`` pairs and errors."""

    acked: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def texts_of(writer: str) -> list[str]:
    """What one writer adds, in order: the shared message first (every writer at once),
    then its own messages, its restatement of the common fact halfway, and the shared
    message again now and then."""
    texts = [SHARED]
    for i in range(PER_WRITER):
        texts.append(distinct(writer, i))
        if i == PER_WRITER // 2:
            texts.append(restatement(writer))
        if i % 7 == 6:
            texts.append(SHARED)
    return texts


def write_all(mem: Memory, writer: str, log: Log) -> None:
    """Add :func:`texts_of` ``writer`` one by one, logging what each caller was told."""
    for text in texts_of(writer):
        try:
            [record] = mem.add(text, user_id="u")
        except Exception as exc:  # collected: the assertion shows every one
            log.errors.append(f"{writer}: {exc!r}")
        else:
            log.acked.append((text, record.id))


def _process_writer(path: str, writer: str, ready: Any, go: Any, results: Any) -> None:
    """Runs in a spawned process (its own interpreter and connection)."""
    log = Log()
    try:
        mem = Memory(path, embedder="hashing")
    except Exception as exc:
        log.errors.append(f"{writer} opening: {exc!r}")
        ready.put(writer)
    else:
        with mem:
            ready.put(writer)
            go.wait(60)
            write_all(mem, writer, log)
    results.put((writer, log.acked, log.errors))


def _thread_writer(
    shared: Memory | None, path: Path, writer: str, gate: threading.Barrier, log: Log
) -> None:
    try:
        mem = shared or Memory(path, embedder="hashing")
    except Exception as exc:
        log.errors.append(f"{writer} opening: {exc!r}")
        gate.wait()
        return
    try:
        gate.wait()
        write_all(mem, writer, log)
    finally:
        if shared is None:
            mem.close()


def _reader(path: Path, stop: threading.Event, log: Log, reads: list[int]) -> None:
    """Searches, lists a page and reads the facts in a loop; the number of records it
    sees may only grow (nothing is deleted)."""
    seen = 0
    with Memory(path, embedder="hashing") as mem:
        while not stop.is_set():
            try:
                mem.search("green tea recipe", user_id="u", limit=5)
                mem.list(user_id="u", limit=20)
                mem.facts(user_id="u", predicate="likes")
                now = mem.stats(user_id="u")["memories"]
            except Exception as exc:
                log.errors.append(f"reader: {exc!r}")
                return
            if now < seen:
                log.errors.append(f"reader: {seen} records, then {now}")
            seen = now
            reads.append(now)


def test_eight_threads_and_two_processes_write_while_a_thread_reads(db_path: Path) -> None:
    writers = [f"T{k}" for k in range(THREADS)] + [f"P{k}" for k in range(PROCESSES)]
    logs = {w: Log() for w in writers}
    ctx = multiprocessing.get_context("spawn")
    ready, results, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=_process_writer, args=(str(db_path), w, ready, go, results))
        for w in writers[THREADS:]
    ]
    for p in procs:
        p.start()
    gate = threading.Barrier(THREADS + 1)
    with Memory(db_path, embedder="hashing") as shared:
        threads = [
            threading.Thread(
                target=_thread_writer,
                args=(shared if k < THREADS // 2 else None, db_path, w, gate, logs[w]),
            )
            for k, w in enumerate(writers[:THREADS])
        ]
        for t in threads:
            t.start()
        for _ in procs:
            ready.get(timeout=60)
        stop, reader_log = threading.Event(), Log()
        reads: list[int] = []
        reader = threading.Thread(target=_reader, args=(db_path, stop, reader_log, reads))
        reader.start()
        began = time.monotonic()
        go.set()
        gate.wait()
        for t in threads:
            t.join(timeout=120)
        for _ in procs:
            try:
                writer, acked, errors = results.get(timeout=120)
            except queue.Empty:
                pytest.fail("a writer process did not report back")
            logs[writer] = Log(acked, errors)
        elapsed = time.monotonic() - began
        for p in procs:
            p.join(timeout=30)
        stop.set()
        reader.join(timeout=60)

        acked = [pair for log in logs.values() for pair in log.acked]
        errors = [e for log in [*logs.values(), reader_log] for e in log.errors]
        records = {r.id: r for r in all_records(shared, "u")}
        episodic = {rid: r.content for rid, r in records.items() if r.kind.value == "episodic"}
        expected = {SHARED} | {restatement(w) for w in writers}
        expected |= {distinct(w, i) for w in writers for i in range(PER_WRITER)}
        lost = [(text, rid) for text, rid in acked if episodic.get(rid) != text]
        contents = list(episodic.values())
        duplicated = len(contents) - len(set(contents))
        print(
            f"\nconcurrency bar: {len(acked)} writes from {THREADS} threads and {PROCESSES} "
            f"processes in {elapsed:.1f} s, {len(reads)} reader passes; errors={len(errors)} "
            f"lost={len(lost)} duplicated={duplicated}"
        )
        assert errors == []
        assert lost == []
        assert duplicated == 0
        assert set(contents) == expected
        assert len(acked) == sum(len(texts_of(w)) for w in writers)
        assert reads, "the reader never completed a pass"

        # The shared message: one record, one ADD, every writer got its id.
        [shared_id] = {rid for text, rid in acked if text == SHARED}
        assert [e.event for e in shared.history(shared_id)] == ["ADD"]

        # Facts: each stated once; the common one carries every writer's message.
        facts = shared.facts(user_id="u", include_history=True)
        keys = [(f.subject.casefold(), f.predicate, f.object.casefold()) for f in facts]
        assert len(keys) == len(set(keys)), sorted(keys)
        assert all(f.valid_to is None for f in facts)
        [tea] = [f for f in facts if f.object == "green tea"]
        assert set(tea.source_ids) == {rid for text, rid in acked if text.endswith("green tea.")}
        assert {("user", "sister", "anna"), ("anna", "works_at", "google")} <= set(keys)
        assert len(facts) == 3 + len(writers) * PER_WRITER

    assert integrity_check(db_path) == [("ok",)]
    assert index_problems(db_path) == {}

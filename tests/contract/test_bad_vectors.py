"""An embedder that answers wrongly is caught at write, on every write path (issue 16,
item 4).

A misconfigured embedder (vectors of another dimension, fewer vectors than texts, NaN or
infinite values) used to be accepted by ``add``; the error came at the next search, or
never (a NaN vector ranks as nothing). Now each write path (add one text, add a batch,
update, reindex, import) raises :class:`~mnemolayer.EmbedderError` naming the embedder
and what was wrong, and stores nothing: no record, no fact, no history, no vector.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mnemolayer import EmbedderError, Memory
from mnemolayer.embed.base import EmbedKind
from mnemolayer.testing import HashingEmbedder

USER = "u1"


class BadVectors:
    """A hashing embedder that, once :attr:`mode` is set, answers wrongly: ``"dim"``
    (vectors 10 wide instead of 256), ``"fewer"`` (the last vector missing), ``"nan"``
    or ``"inf"`` (one value of the first vector). With ``after``, it answers well for
    that many more calls before going bad."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.name = self.inner.name  # the store cannot tell it from the hashing model
        self.dim = self.inner.dim
        self.max_tokens = self.inner.max_tokens
        self.mode: str | None = None
        self.after = 0

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        out = self.inner.embed(texts, kind).copy()
        if self.mode is None:
            return out
        if self.after > 0:
            self.after -= 1
            return out
        if self.mode == "dim":
            return out[:, :10]
        if self.mode == "fewer":
            return out[:-1]
        out[0, 3] = np.nan if self.mode == "nan" else np.inf
        return out

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))


#: What each bad mode's error says.
MESSAGES = {
    "dim": "returned vectors of dimension 10, expected 256",
    "fewer": r"returned \d+ vectors for \d+ texts",
    "nan": "NaN or infinite",
    "inf": "NaN or infinite",
}


def state(mem: Memory) -> tuple[list[dict[str, Any]], list[Any], bytes]:
    """Everything of USER: the export rows (memories, entities, facts, history), the
    facts as the API reads them, and the stored vectors' bytes."""
    rowids, matrix = mem.store.load_vectors(USER, mem.embedder.dim)
    return (
        list(mem.export(user_id=USER)),
        mem.facts(user_id=USER, include_history=True),
        rowids.tobytes() + matrix.tobytes(),
    )


def seeded(db: Any, clock: Any) -> tuple[Memory, BadVectors]:
    """A memory (rules extractor on) holding one message with a fact, and its embedder,
    still answering well."""
    bad = BadVectors()
    mem = Memory(db, embedder=bad, clock=clock)
    mem.add("My sister is called Ana", user_id=USER, session_id="s0")
    return mem, bad


def _add_one(mem: Memory, _other: Callable[[str], Any]) -> None:
    mem.add("I live in Porto", user_id=USER)


def _add_batch(mem: Memory, _other: Callable[[str], Any]) -> None:
    mem.add(
        [{"role": "user", "content": f"I visited city number {i} in May"} for i in range(5)]
        + [{"role": "user", "content": "I work at Acme", "id": "m-9"}],
        user_id=USER,
        session_id="s1",
    )


def _update(mem: Memory, _other: Callable[[str], Any]) -> None:
    [record] = [r for r in mem.list(user_id=USER).items if r.kind.value == "episodic"]
    mem.update(record.id, content="My sister is called Bea")


def _reindex(mem: Memory, _other: Callable[[str], Any]) -> None:
    mem.reindex()


PATHS = {"add": _add_one, "add_batch": _add_batch, "update": _update, "reindex": _reindex}


@pytest.mark.parametrize("mode", sorted(MESSAGES))
@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_bad_embedder_fails_the_write_and_stores_nothing(
    db_path: Path, clock: Any, new_db: Callable[[str], Any], path: str, mode: str
) -> None:
    mem, bad = seeded(db_path, clock)
    try:
        before = state(mem)
        bad.mode = mode
        with pytest.raises(EmbedderError, match=MESSAGES[mode]) as err:
            PATHS[path](mem, new_db)
        assert repr(bad.name) in str(err.value)  # the embedder is named
        assert state(mem) == before  # no record, fact, history event or vector
        bad.mode = None
        # The store is intact: vector search reads its vectors and finds the seed.
        hits = mem.search("sister Ana", user_id=USER, mode="vector")
        assert any("sister" in h.content for h in hits)
    finally:
        mem.close()


@pytest.mark.parametrize("mode", sorted(MESSAGES))
def test_a_bad_embedder_fails_an_import_and_writes_nothing(
    db_path: Path, clock: Any, new_db: Callable[[str], Any], mode: str
) -> None:
    with Memory(db_path, embedder="hashing", clock=clock) as src:
        src.add(["My sister is called Ana", "I live in Porto"], user_id=USER)
        rows = list(src.export(user_id=USER))
    bad = BadVectors()
    with Memory(new_db("target"), embedder=bad, clock=clock) as dst:
        bad.mode = mode
        with pytest.raises(EmbedderError, match=MESSAGES[mode]):
            dst.import_rows(rows)
        assert dst.store.is_empty()  # no memory, entity, fact, history event or window


def test_an_import_whose_embedder_fails_part_way_writes_nothing_and_can_be_retried(
    db_path: Path, clock: Any, new_db: Callable[[str], Any]
) -> None:
    # Import embeds in batches of 64: before, the first batch was written before the
    # second failed, and the retry then skipped those memories and the facts drawn
    # from them.
    with Memory(db_path, embedder="hashing", clock=clock) as src:
        src.add([f"I visited the museum number {i}" for i in range(70)], user_id=USER)
        src.add("My sister is called Ana", user_id=USER)
        rows = list(src.export(user_id=USER))
        want = src.facts(user_id=USER, include_history=True)
    assert len(want) >= 1
    bad = BadVectors()
    with Memory(new_db("target"), embedder=bad, clock=clock) as dst:
        bad.mode, bad.after = "dim", 1  # the second batch goes wrong
        with pytest.raises(EmbedderError):
            dst.import_rows(rows)
        assert dst.store.is_empty()
        bad.mode = None
        assert dst.import_rows(rows) == sum(r["type"] == "memory" for r in rows) > 64
        assert dst.facts(user_id=USER, include_history=True) == want
        assert list(dst.export(user_id=USER))[1:] == rows[1:]


def test_a_bad_query_vector_is_a_clear_error_at_search(db_path: Path, clock: Any) -> None:
    mem, bad = seeded(db_path, clock)
    try:
        bad.mode = "dim"
        with pytest.raises(EmbedderError, match="dimension 10, expected 256"):
            mem.search("sister", user_id=USER, mode="vector")
    finally:
        mem.close()

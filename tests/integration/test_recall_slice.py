"""Recall regression guard: the real default embedder on a slice of the dev benchmarks.

Runs cold (no embedding cache), so the time is what CI pays: about 70 s on two idle
cores for both tests (conv-26: 419 turns, 197 questions, 33 s; MemoryBank zh: 347 pairs,
63 questions, 36 s). The floors sit a few points under the recall measured when they
were set (see ``bench/README.md``); a retrieval change that drops below one fails here.
Raise a floor when recall improves for good.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.locomo import run_locomo
from bench.memorybank import run_memorybank
from helpers import shared_data

pytestmark = pytest.mark.slow

#: recall@5, categories 1-4, LoCoMo dev conv-26 (150 questions; measured 0.737 with the
#: conversation features of mnemolayer.retrieval.structure and fact extraction on, the
#: defaults; 0.621 before those features).
LOCOMO_CONV26_FLOOR = 0.70
#: recall@5, MemoryBank dev, Chinese, all 9 users (63 questions; measured 0.963 with fact
#: extraction, 0.942 without): the floor guards the facts' contribution too.
MEMORYBANK_ZH_FLOOR = 0.93


def test_locomo_conv26_recall_floor(tmp_path: Path) -> None:
    result = run_locomo(
        shared_data("locomo/locomo_dev.json"),
        conversations=["conv-26"],
        workdir=tmp_path,
        cache=False,
        show_progress=False,
    )
    overall = result["metrics"]["overall"]
    assert overall["questions"] == 150
    assert overall["recall@5"] >= LOCOMO_CONV26_FLOOR, overall


def test_memorybank_zh_recall_floor(tmp_path: Path) -> None:
    base = shared_data("memorybank")
    result = run_memorybank(
        base / "memory_bank_cn_dev.json",
        base / "gold_dev.jsonl",
        lang="zh",
        workdir=tmp_path,
        cache=False,
        show_progress=False,
    )
    overall = result["metrics"]["overall"]
    assert overall["questions"] == 63
    assert overall["recall@5"] >= MEMORYBANK_ZH_FLOOR, overall

"""What a forgetting policy would take from LoCoMo: how many turns decay would forget at
the end of each conversation, and how many questions would lose all their evidence.

No store and no embedder: each turn gets the importance ``Memory.add`` would give it
(:func:`memstrata.lifecycle.api.write_importance`) and its retention at the time of the
conversation's last turn (:func:`memstrata.lifecycle.retention.retention`, no accesses);
a turn is forgotten when its retention is below ``archive_threshold`` and its importance
below the floor (``MaintenanceOptions.forget_below_importance``). This is how the
default floor was chosen (see :mod:`memstrata.lifecycle.maintain`).

Run: ``python -m memstrata.bench.forgetting --data ../shared/data/locomo/locomo_dev.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..lifecycle.api import write_importance
from ..lifecycle.config import LifecycleConfig
from ..lifecycle.retention import RetentionInput, retention
from ..models import MemoryKind
from .locomo import (
    SCORED_CATEGORIES,
    _sessions,
    conversation_end,
    load_conversations,
    parse_evidence,
    turn_content,
)

__all__ = ["forgetting_impact", "main"]

FLOORS = (0.0, 0.2, 0.35, 0.45, 0.55, 1.01)


def forgetting_impact(
    data_path: str | os.PathLike[str],
    *,
    floors: Sequence[float] = FLOORS,
    config: LifecycleConfig | None = None,
) -> dict[str, Any]:
    """For each importance floor: turns forgotten, and scored questions (categories 1-4)
    whose evidence turns would all be forgotten.

    Returns:
        ``{"turns", "questions", "by_floor": {floor: {"turns_forgotten",
        "questions_without_evidence"}}}`` (floors as strings; 1.01 means no floor).
    """
    cfg = config or LifecycleConfig()
    turns_total = questions_total = 0
    forgotten = dict.fromkeys(floors, 0)
    lost = dict.fromkeys(floors, 0)
    for sample in load_conversations(data_path):
        sessions = _sessions(sample["conversation"])
        end = conversation_end(sessions)
        state: dict[str, tuple[float, float]] = {}
        for _number, start, turns in sessions:
            for turn in turns:
                text = turn_content(turn)
                if not text:
                    continue
                imp = write_importance(text, MemoryKind.EPISODIC).value
                kept = retention(RetentionInput(MemoryKind.EPISODIC, imp, start), end, cfg)
                state[turn["dia_id"]] = (imp, kept)
        turns_total += len(state)
        for floor in floors:
            forgotten[floor] += sum(
                1 for imp, kept in state.values() if kept < cfg.archive_threshold and imp < floor
            )
        for qa in sample["qa"]:
            ids, _bad = parse_evidence(qa.get("evidence") or [], set(state))
            if not ids or qa["category"] not in SCORED_CATEGORIES:
                continue
            questions_total += 1
            for floor in floors:
                if all(state[i][1] < cfg.archive_threshold and state[i][0] < floor for i in ids):
                    lost[floor] += 1
    return {
        "turns": turns_total,
        "questions": questions_total,
        "by_floor": {
            str(f): {"turns_forgotten": forgotten[f], "questions_without_evidence": lost[f]}
            for f in floors
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: ``python -m memstrata.bench.forgetting``."""
    parser = argparse.ArgumentParser(
        prog="python -m memstrata.bench.forgetting", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="a LoCoMo JSON file")
    args = parser.parse_args(argv)
    result = forgetting_impact(args.data)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

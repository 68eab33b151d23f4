"""What a forgetting policy would take from LoCoMo: how many turns decay would forget at
the end of each conversation, and how many questions would lose all their evidence.

No store and no embedder: each turn gets the importance ``Memory.add`` would give it
(:func:`mnemolayer.lifecycle.states.write_importance`) and its retention at the time of the
conversation's last turn (:func:`mnemolayer.lifecycle.decay.retention`, no accesses);
a turn is forgotten when :func:`mnemolayer.lifecycle.decay.forgetting_action` says so
(retention below ``archive_threshold`` and importance below the floor,
``LifecycleConfig.forget_below_importance``), evaluated here at several floors. This is
how the default floor was chosen (see
:attr:`mnemolayer.lifecycle.LifecycleConfig.forget_below_importance`).

Run: ``python -m bench.forgetting --data ../shared/data/locomo/locomo_dev.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.lifecycle.decay import RetentionInput, forgetting_action
from mnemolayer.lifecycle.states import write_importance
from mnemolayer.models import MemoryKind

from .locomo import (
    SCORED_CATEGORIES,
    _sessions,
    conversation_end,
    load_conversations,
    parse_evidence,
    turn_content,
)

__all__ = ["forgetting_impact", "main"]

FLOORS = (0.0, 0.2, 0.35, 0.45, 0.55, 1.0)


def forgetting_impact(
    data_path: str | os.PathLike[str],
    *,
    floors: Sequence[float] = FLOORS,
    config: LifecycleConfig | None = None,
) -> dict[str, Any]:
    """For each importance floor (``forget_below_importance``; the other settings from
    ``config``): turns forgotten, and scored questions (categories 1-4) whose evidence
    turns would all be forgotten.

    Returns:
        ``{"turns", "questions", "by_floor": {floor: {"turns_forgotten",
        "questions_without_evidence"}}}`` (floors as strings; 1.0 forgets every faded
        turn below importance 1: decay alone).
    """
    base = config or LifecycleConfig()
    policies = {
        f: LifecycleConfig.model_validate({**base.model_dump(), "forget_below_importance": f})
        for f in floors
    }
    turns_total = questions_total = 0
    forgotten = dict.fromkeys(floors, 0)
    lost = dict.fromkeys(floors, 0)
    for sample in load_conversations(data_path):
        sessions = _sessions(sample["conversation"])
        end = conversation_end(sessions)
        state: dict[str, RetentionInput] = {}
        for _number, start, turns in sessions:
            for turn in turns:
                text = turn_content(turn)
                if text:
                    imp = write_importance(text, MemoryKind.EPISODIC).value
                    state[turn["dia_id"]] = RetentionInput(MemoryKind.EPISODIC, imp, start)
        turns_total += len(state)
        gone = {
            f: {d for d, item in state.items() if forgetting_action(item, end, cfg) != "keep"}
            for f, cfg in policies.items()
        }
        for floor in floors:
            forgotten[floor] += len(gone[floor])
        for qa in sample["qa"]:
            ids, _bad = parse_evidence(qa.get("evidence") or [], set(state))
            if not ids or qa["category"] not in SCORED_CATEGORIES:
                continue
            questions_total += 1
            for floor in floors:
                if all(i in gone[floor] for i in ids):
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
    """Command-line entry: ``python -m bench.forgetting``."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.forgetting", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--data", required=True, help="a LoCoMo JSON file")
    args = parser.parse_args(argv)
    result = forgetting_impact(args.data)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

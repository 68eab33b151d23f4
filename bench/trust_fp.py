"""False positives of the instruction detector (:func:`mnemolayer.trust.detect`) on
ordinary conversation: every turn of the bundled sample conversations and of the LoCoMo
dev conversations, none of which tries to instruct a model.

Run::

    python -m bench.trust_fp            # data from $MNEMOLAYER_DATA_DIR, else ../shared/data

Prints, per corpus, the turns read, the turns flagged (each a false positive) and each
flagged turn with its flags.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from pathlib import Path

from mnemolayer.trust import detect

__all__ = ["conversation_turns", "main"]

_ROOT = Path(__file__).resolve().parents[1]
_SAMPLE = _ROOT / "src" / "mnemolayer" / "data" / "sample_conversation.json"


def _data_dir() -> Path:
    env = os.environ.get("MNEMOLAYER_DATA_DIR")
    return Path(env) if env else _ROOT.parent / "shared" / "data"


def conversation_turns(path: Path) -> list[str]:
    """The text of every turn of every conversation in a LoCoMo-format file."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    texts: list[str] = []
    for sample in samples:
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                texts.extend(str(t.get("text") or "") for t in turns if t.get("text"))
    return texts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="the data directory")
    args = parser.parse_args(argv)
    corpora = {"sample conversations": _SAMPLE}
    locomo = (args.data or _data_dir()) / "locomo" / "locomo_dev.json"
    if locomo.exists():
        corpora["LoCoMo dev"] = locomo
    else:
        print(f"LoCoMo dev not found at {locomo}; reading the bundled sample only")
    for name, path in corpora.items():
        turns = conversation_turns(path)
        flagged = [(t, detect(t)) for t in turns if detect(t)]
        print(f"{name}: {len(turns)} turns, {len(flagged)} flagged")
        for text, flags in flagged:
            print(f"  {flags}: {text[:160]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

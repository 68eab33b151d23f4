"""Measure the PII detectors: precision and recall per type on a labelled set, and the
time :func:`~mnemolayer.privacy.redact` takes per message on real chat text.

Run::

    python -m bench.pii --gold tests/data/pii \\
        --locomo ../shared/data/locomo/locomo_dev.json

The gold set is JSON Lines, one message per line: ``{"id", "lang", "text", "findings":
[{"type", "text"}]}`` (``tests/data/pii/README.md``). A detection counts as correct when
its type and its exact substring match an expected finding (each expected finding
matches once).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemolayer.privacy.redact import RedactionConfig, redact

__all__ = ["GoldScore", "main", "score_gold", "time_messages"]

_ALL = RedactionConfig.uniform("redact")


@dataclass
class GoldScore:
    """Counts per type and the lines that did not come out as labelled."""

    tp: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def table(self) -> dict[str, dict[str, float]]:
        """``{type: {"tp", "fp", "fn", "precision", "recall"}}`` (1.0 where undefined)."""
        out: dict[str, dict[str, float]] = {}
        for kind in sorted({*self.tp, *self.fp, *self.fn}):
            tp, fp, fn = self.tp[kind], self.fp[kind], self.fn[kind]
            out[kind] = {
                "tp": tp, "fp": fp, "fn": fn,
                "precision": tp / (tp + fp) if tp + fp else 1.0,
                "recall": tp / (tp + fn) if tp + fn else 1.0,
            }  # fmt: skip
        return out


def score_gold(rows: Iterable[dict[str, Any]]) -> GoldScore:
    """Compare the detections on each row with its labelled ``findings``."""
    score = GoldScore()
    for row in rows:
        text = row["text"]
        want = Counter((f["type"], f["text"]) for f in row["findings"])
        got = Counter((f.type.value, text[f.start : f.end]) for f in redact(text, _ALL).findings)
        for key in want | got:
            score.tp[key[0]] += min(want[key], got[key])
            score.fp[key[0]] += max(0, got[key] - want[key])
            score.fn[key[0]] += max(0, want[key] - got[key])
        if want != got:
            score.errors.append(
                {"id": row["id"], "missed": sorted(want - got), "extra": sorted(got - want)}
            )
    return score


def load_gold(folder: str | Path) -> list[dict[str, Any]]:
    """Every line of every ``*.jsonl`` file in ``folder``, in file order."""
    rows: list[dict[str, Any]] = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        with path.open(encoding="utf-8") as handle:
            rows.extend(json.loads(line) for line in handle if line.strip())
    return rows


def locomo_messages(path: str | Path) -> list[str]:
    """The text of every turn of every conversation in a LoCoMo file."""
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    texts: list[str] = []
    for sample in samples:
        for turns in sample["conversation"].values():
            if isinstance(turns, list):
                texts.extend(str(t.get("text") or "") for t in turns if t.get("text"))
    return texts


def time_messages(texts: Sequence[str], repeat: int = 3) -> dict[str, Any]:
    """Best-of-``repeat`` wall time of :func:`redact` (every type on "redact") over
    ``texts``, and what it found there.

    Returns:
        ``{"messages", "ms_per_message", "findings": {type: n}, "examples": [...]}``.
    """
    best = float("inf")
    found: Counter[str] = Counter()
    examples: list[str] = []
    for _ in range(repeat):
        found.clear()
        examples.clear()
        start = time.perf_counter()
        for text in texts:
            for f in redact(text, _ALL).findings:
                found[f.type.value] += 1
                if len(examples) < 20:
                    examples.append(f"{f.type.value}: {text[f.start : f.end]!r}")
        best = min(best, time.perf_counter() - start)
    return {
        "messages": len(texts),
        "ms_per_message": 1000 * best / max(1, len(texts)),
        "findings": dict(found),
        "examples": examples,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the gold-set table and, with ``--locomo``, the timing, as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gold", default="tests/data/pii", help="folder of *.jsonl files")
    parser.add_argument("--locomo", help="a LoCoMo JSON file to time redact() on")
    args = parser.parse_args(argv)
    rows = load_gold(args.gold)
    score = score_gold(rows)
    report: dict[str, Any] = {"lines": len(rows), "types": score.table(), "errors": score.errors}
    if args.locomo:
        report["locomo"] = time_messages(locomo_messages(args.locomo))
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

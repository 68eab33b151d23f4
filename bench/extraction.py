"""Score a fact extractor against a labelled gold set.

The gold set is JSON Lines, one chat message per line (``tests/data/extraction/en.jsonl``
and ``zh.jsonl`` in the source checkout)::

    {"id": "en-001", "text": "My sister Maria lives in Rome.", "speaker": null,
     "timestamp": "2024-03-15T10:00:00+00:00", "kind": "relationship",
     "facts": [{"subject": "user", "predicate": "sister", "object": "Maria",
                "negated": false, "date": null}, ...]}

``kind`` is what the line is about (one of :data:`KINDS`; ``none`` lines carry no facts and
measure precision). Gold dates are resolved against the line's own ``timestamp``.

**Matching rule.** A predicted fact matches a gold fact when all of these hold:

- the subjects are equal after Unicode NFKC normalisation, case folding and stripping;
- the predicates are equal;
- ``negated`` is equal;
- the objects agree after normalisation (NFKC, case folding, punctuation and symbols
  removed, leading English articles and possessives — ``a an the my his her their our
  your its`` — dropped, and Chinese edge particles dropped: a leading classifier phrase
  such as ``一只``/``两条``, a leading possessive such as ``我的``, and ``了 的 啦 呢 吧
  啊 呀 哦 嘛`` at either edge): either they are equal, or one contains the other and the
  shorter covers at least half of the longer. Objects are compared as words (a contiguous
  run of words, so ``cat`` is not inside ``category``), or as characters with spaces
  ignored when either contains CJK characters;
- if the gold fact has a date, the predicted date is the same day (a gold fact without a
  date accepts any predicted date).

Within one message each predicted fact matches at most one gold fact and each gold fact at
most one predicted fact; the pairing is a maximum bipartite matching, so the order of the
predictions never changes the score. A repeated prediction is therefore a false positive.
Precision = matched / predicted, recall = matched / gold, F1 their harmonic mean; a ratio
with a zero denominator is 1.0 (nothing predicted means nothing predicted wrongly), so a
``none`` line lowers precision only when something is predicted on it.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol

from mnemolayer.errors import ValidationError
from mnemolayer.extract.base import ExtractedFact, Extractor
from mnemolayer.extract.predicates import PREDICATES

__all__ = [
    "KINDS",
    "Counts",
    "ExtractionScores",
    "FactError",
    "GoldExample",
    "GoldFact",
    "default_data_dir",
    "evaluate",
    "load_gold",
    "match_fact",
    "normalize_object",
]

#: What a gold line is about; ``none`` lines state no fact.
KINDS: tuple[str, ...] = (
    "identity",
    "relationship",
    "pet",
    "preference",
    "plan",
    "decision",
    "event",
    "third_party",
    "negation",
    "none",
)


@dataclass(frozen=True, slots=True)
class GoldFact:
    """One labelled fact: what a careful reader says the message states.

    Attributes:
        subject: ``"user"`` for the speaking user without a name, the speaker's name, or a
            third party's name.
        predicate: a key of :data:`~mnemolayer.extract.predicates.PREDICATES`.
        object: the minimal object phrase, in the message's language.
        negated: the message retracts the fact ("no longer", "不再").
        date: the day the event happens or happened, or ``None`` when the message gives
            no date (then any predicted date is accepted).
    """

    subject: str
    predicate: str
    object: str
    negated: bool = False
    date: date | None = None


@dataclass(frozen=True, slots=True)
class GoldExample:
    """One labelled chat message and its gold facts.

    Attributes:
        id: unique line id (``"en-001"``).
        text: the message.
        speaker: the speaker's name, or ``None`` for the user the memory belongs to.
        timestamp: when the message was said (aware, UTC); relative dates resolve
            against it.
        kind: one of :data:`KINDS`.
        facts: the gold facts (empty for ``kind == "none"``).
    """

    id: str
    text: str
    speaker: str | None
    timestamp: datetime
    kind: str
    facts: tuple[GoldFact, ...]


class _FactLike(Protocol):
    """What :func:`match_fact` reads: :class:`GoldFact` and
    :class:`~mnemolayer.extract.base.ExtractedFact` both qualify."""

    @property
    def subject(self) -> str: ...
    @property
    def predicate(self) -> str: ...
    @property
    def object(self) -> str: ...
    @property
    def negated(self) -> bool: ...
    @property
    def date(self) -> date | None: ...


# -- loading ----------------------------------------------------------------------------


def default_data_dir() -> Path | None:
    """The gold set's directory in a source checkout (``<repo>/tests/data/extraction``),
    or ``None`` when mnemolayer runs from an installed package without its tests."""
    candidate = Path(__file__).resolve().parents[1] / "tests" / "data" / "extraction"
    return candidate if candidate.is_dir() else None


def load_gold(path: str | Path) -> list[GoldExample]:
    """Read a gold set: one JSON object per line (blank lines are skipped).

    A timestamp without an offset is taken as UTC.

    Args:
        path: the ``.jsonl`` file.

    Returns:
        The examples in file order.

    Raises:
        ValidationError: the file cannot be read, or a line is not valid JSON, misses a
            field, has a field of the wrong type, an unknown ``kind`` or predicate, a bad
            timestamp or date, a repeated id, or facts on a ``none`` line (or none on
            another kind). ``field`` names ``<path>:<line>``.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(str(path), f"cannot read the gold file ({exc})") from exc
    examples: list[GoldExample] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(where, f"not valid JSON ({exc.msg})") from exc
        example = _example(row, where)
        if example.id in seen:
            raise ValidationError(where, f"repeated id {example.id!r}")
        seen.add(example.id)
        examples.append(example)
    return examples


def _field(row: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in row:
        raise ValidationError(where, f"missing {key!r}")
    value = row[key]
    if not isinstance(value, kind):
        raise ValidationError(where, f"{key!r} has the wrong type ({type(value).__name__})")
    return value


def _text(row: dict[str, Any], key: str, where: str) -> str:
    value: str = _field(row, key, str, where)
    if not value.strip():
        raise ValidationError(where, f"{key!r} is blank")
    return value


def _example(row: Any, where: str) -> GoldExample:
    if not isinstance(row, dict):
        raise ValidationError(where, "each line must be a JSON object")
    speaker = _field(row, "speaker", (str, type(None)), where)
    kind = _text(row, "kind", where)
    if kind not in KINDS:
        raise ValidationError(where, f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    raw_facts = _field(row, "facts", list, where)
    if (kind == "none") != (not raw_facts):
        raise ValidationError(where, "a 'none' line has no facts and every other line has some")
    try:
        stamp = datetime.fromisoformat(_text(row, "timestamp", where))
    except ValueError as exc:
        raise ValidationError(where, f"bad timestamp ({exc})") from exc
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    return GoldExample(
        id=_text(row, "id", where),
        text=_text(row, "text", where),
        speaker=speaker,
        timestamp=stamp,
        kind=kind,
        facts=tuple(_gold_fact(raw, where) for raw in raw_facts),
    )


def _gold_fact(raw: Any, where: str) -> GoldFact:
    if not isinstance(raw, dict):
        raise ValidationError(where, "each fact must be a JSON object")
    predicate = _text(raw, "predicate", where)
    if predicate not in PREDICATES:
        raise ValidationError(where, f"unknown predicate {predicate!r}")
    raw_date = _field(raw, "date", (str, type(None)), where)
    try:
        day = None if raw_date is None else date.fromisoformat(raw_date)
    except ValueError as exc:
        raise ValidationError(where, f"bad date {raw_date!r} (expected YYYY-MM-DD)") from exc
    return GoldFact(
        subject=_text(raw, "subject", where),
        predicate=predicate,
        object=_text(raw, "object", where),
        negated=_field(raw, "negated", bool, where),
        date=day,
    )


# -- matching ---------------------------------------------------------------------------

_LEADING_EN = frozenset({"a", "an", "the", "my", "his", "her", "their", "our", "your", "its"})
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
_ZH_PARTICLES = "了的啦呢吧啊呀哦嘛"
_ZH_CLASSIFIERS = "只个條条位名家所本辆件种些头匹场次趟张把台部首"
_ZH_LEADING = re.compile(
    rf"^(?:[一两几][{_ZH_CLASSIFIERS}]|这个|那个|这些|那些"
    rf"|[我你他她它]们?的|[{_ZH_PARTICLES}])+"
)
_ZH_TRAILING = re.compile(rf"[{_ZH_PARTICLES}]+$")


def _strip_punctuation(text: str) -> str:
    return "".join(
        " " if unicodedata.category(ch)[0] == "P" or unicodedata.category(ch) == "So" else ch
        for ch in text
    )


def normalize_object(text: str) -> str:
    """An object phrase as the matcher compares it: NFKC, case-folded, punctuation and
    symbols removed, leading articles/possessives and Chinese edge particles dropped,
    whitespace collapsed (``"the Louvre."`` → ``"louvre"``, ``"一只猫了"`` → ``"猫"``)."""
    words = _strip_punctuation(unicodedata.normalize("NFKC", text).casefold()).split()
    while len(words) > 1 and words[0] in _LEADING_EN:
        words = words[1:]
    joined = " ".join(words)
    if not _CJK.search(joined):
        return joined
    compact = joined.replace(" ", "")
    stripped = _ZH_TRAILING.sub("", _ZH_LEADING.sub("", compact))
    return stripped or compact


def _units(normalized: str) -> list[str]:
    """Words, or characters (spaces ignored) when the text holds CJK characters."""
    if _CJK.search(normalized):
        return list(normalized.replace(" ", ""))
    return normalized.split()


def _contains(longer: list[str], shorter: list[str]) -> bool:
    n = len(shorter)
    return any(longer[i : i + n] == shorter for i in range(len(longer) - n + 1))


def _objects_agree(predicted: str, gold: str) -> bool:
    a, b = normalize_object(predicted), normalize_object(gold)
    if not a or not b:
        return False
    if a == b:
        return True
    ua, ub = _units(a), _units(b)
    shorter, longer = (ua, ub) if len(ua) <= len(ub) else (ub, ua)
    return 2 * len(shorter) >= len(longer) and _contains(longer, shorter)


def _as_day(value: date | None) -> date | None:
    return value.date() if isinstance(value, datetime) else value


def _same_name(a: str, b: str) -> bool:
    return unicodedata.normalize("NFKC", a).casefold().strip() == (
        unicodedata.normalize("NFKC", b).casefold().strip()
    )


def match_fact(pred: _FactLike, gold: _FactLike) -> bool:
    """Whether a predicted fact counts as the gold fact (the rule in the module docstring).

    Args:
        pred: a predicted fact (:class:`~mnemolayer.extract.base.ExtractedFact`, or any
            object with ``subject``, ``predicate``, ``object``, ``negated``, ``date``).
        gold: the gold fact (:class:`GoldFact`).

    Returns:
        ``True`` when subject, predicate, negation, object and (if the gold has one) date
        all agree. A ``datetime`` date is compared by its day.
    """
    if pred.predicate.strip() != gold.predicate.strip() or bool(pred.negated) != bool(gold.negated):
        return False
    if not _same_name(pred.subject, gold.subject):
        return False
    gold_day = _as_day(gold.date)
    if gold_day is not None and _as_day(pred.date) != gold_day:
        return False
    return _objects_agree(pred.object, gold.object)


def _pairs(predicted: Sequence[_FactLike], gold: Sequence[_FactLike]) -> list[tuple[int, int]]:
    """A maximum matching between predicted and gold facts, as (pred index, gold index)."""
    edges = [[g for g, gf in enumerate(gold) if match_fact(pf, gf)] for pf in predicted]
    owner: dict[int, int] = {}  # gold index → predicted index

    def augment(p: int, visited: set[int]) -> bool:
        for g in edges[p]:
            if g in visited:
                continue
            visited.add(g)
            if g not in owner or augment(owner[g], visited):
                owner[g] = p
                return True
        return False

    for p in range(len(predicted)):
        augment(p, set())
    return sorted((p, g) for g, p in owner.items())


# -- scoring ----------------------------------------------------------------------------


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 1.0


@dataclass(frozen=True, slots=True)
class Counts:
    """Gold, predicted and matched fact counts, and the scores they give."""

    gold: int = 0
    predicted: int = 0
    matched: int = 0

    @property
    def precision(self) -> float:
        """matched / predicted, in [0, 1]; 1.0 when nothing was predicted."""
        return _ratio(self.matched, self.predicted)

    @property
    def recall(self) -> float:
        """matched / gold, in [0, 1]; 1.0 when there is no gold fact."""
        return _ratio(self.matched, self.gold)

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall, in [0, 1]."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.gold + other.gold, self.predicted + other.predicted, self.matched + other.matched
        )

    def to_dict(self) -> dict[str, Any]:
        """The counts and the three scores, JSON-ready."""
        return {
            "gold": self.gold,
            "predicted": self.predicted,
            "matched": self.matched,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


@dataclass(frozen=True, slots=True)
class FactError:
    """A fact that did not match: a false positive (predicted, no gold) or a false negative
    (gold, not predicted), with the message it belongs to."""

    example_id: str
    kind: str
    text: str
    fact: GoldFact | ExtractedFact

    def to_dict(self) -> dict[str, Any]:
        """The error as plain JSON types (the date as ``YYYY-MM-DD`` or ``None``)."""
        day = _as_day(self.fact.date)
        return {
            "id": self.example_id,
            "kind": self.kind,
            "text": self.text,
            "subject": self.fact.subject,
            "predicate": self.fact.predicate,
            "object": self.fact.object,
            "negated": self.fact.negated,
            "date": None if day is None else day.isoformat(),
        }


@dataclass(slots=True)
class ExtractionScores:
    """The result of :func:`evaluate`.

    Attributes:
        examples: messages scored.
        messages_by_kind: messages scored per kind, in :data:`KINDS` order.
        total: counts over every message (micro-averaged scores).
        by_kind: counts per gold line kind, in :data:`KINDS` order (kinds absent from the
            examples are left out); predictions count under their message's kind.
        by_predicate: counts per predicate, sorted by name; gold facts count under the gold
            predicate, predictions under the predicted one.
        false_positives: predicted facts that matched no gold fact, in message order.
        false_negatives: gold facts that no prediction matched, in message order.
        seconds: wall time spent inside ``extract`` (warm-up call excluded).
    """

    examples: int
    total: Counts
    messages_by_kind: dict[str, int] = field(default_factory=dict)
    by_kind: dict[str, Counts] = field(default_factory=dict)
    by_predicate: dict[str, Counts] = field(default_factory=dict)
    false_positives: list[FactError] = field(default_factory=list)
    false_negatives: list[FactError] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def precision(self) -> float:
        """Overall precision, in [0, 1]."""
        return self.total.precision

    @property
    def recall(self) -> float:
        """Overall recall, in [0, 1]."""
        return self.total.recall

    @property
    def f1(self) -> float:
        """Overall F1, in [0, 1]."""
        return self.total.f1

    @property
    def ms_per_message(self) -> float:
        """Mean extraction time per message, in milliseconds (0.0 for no messages)."""
        return 1000.0 * self.seconds / self.examples if self.examples else 0.0

    def to_dict(self, *, errors: bool = True) -> dict[str, Any]:
        """Everything as plain JSON types; ``errors=False`` leaves out the error lists."""
        data: dict[str, Any] = {
            "examples": self.examples,
            **self.total.to_dict(),
            "ms_per_message": self.ms_per_message,
            "messages_by_kind": dict(self.messages_by_kind),
            "by_kind": {k: c.to_dict() for k, c in self.by_kind.items()},
            "by_predicate": {k: c.to_dict() for k, c in self.by_predicate.items()},
        }
        if errors:
            data["false_positives"] = [e.to_dict() for e in self.false_positives]
            data["false_negatives"] = [e.to_dict() for e in self.false_negatives]
        return data


def evaluate(
    extractor: Extractor, examples: Iterable[GoldExample], *, warm_up: bool = True
) -> ExtractionScores:
    """Run ``extractor`` on every example and score its facts against the gold facts.

    Each message is passed as ``extractor.extract(text, speaker=..., timestamp=...)`` with
    the example's speaker and timestamp. Facts are matched by :func:`match_fact`, each
    prediction and each gold fact used at most once per message.

    Args:
        extractor: any :class:`~mnemolayer.extract.base.Extractor`.
        examples: the gold examples (from :func:`load_gold`).
        warm_up: extract the first message once, untimed and unscored, before timing, so
            lazy model and dictionary loading does not count as per-message time.

    Returns:
        The scores, breakdowns, error lists and timing.

    Raises:
        Exception: whatever ``extractor.extract`` raises (extractors must not raise); a
            note names the example id.
    """
    items = list(examples)
    if warm_up and items:
        _extract(extractor, items[0])
    by_kind: dict[str, Counts] = {}
    by_predicate: dict[str, Counts] = {}
    false_positives: list[FactError] = []
    false_negatives: list[FactError] = []
    seconds = 0.0
    for example in items:
        started = time.perf_counter()
        predicted = _extract(extractor, example)
        seconds += time.perf_counter() - started
        pairs = _pairs(predicted, example.facts)
        matched_pred = {p for p, _ in pairs}
        matched_gold = {g for _, g in pairs}
        by_kind[example.kind] = by_kind.get(example.kind, Counts()) + Counts(
            len(example.facts), len(predicted), len(pairs)
        )
        for p, guess in enumerate(predicted):
            _bump(
                by_predicate, guess.predicate, Counts(predicted=1, matched=int(p in matched_pred))
            )
            if p not in matched_pred:
                false_positives.append(FactError(example.id, example.kind, example.text, guess))
        for g, gold in enumerate(example.facts):
            _bump(by_predicate, gold.predicate, Counts(gold=1))
            if g not in matched_gold:
                false_negatives.append(FactError(example.id, example.kind, example.text, gold))
    total = sum(by_kind.values(), Counts())
    messages = Counter(example.kind for example in items)
    return ExtractionScores(
        examples=len(items),
        total=total,
        messages_by_kind={k: messages[k] for k in KINDS if k in messages},
        by_kind={k: by_kind[k] for k in KINDS if k in by_kind},
        by_predicate=dict(sorted(by_predicate.items())),
        false_positives=false_positives,
        false_negatives=false_negatives,
        seconds=seconds,
    )


def _bump(table: dict[str, Counts], key: str, add: Counts) -> None:
    table[key] = table.get(key, Counts()) + add


def _extract(extractor: Extractor, example: GoldExample) -> list[ExtractedFact]:
    try:
        extraction = extractor.extract(
            example.text, speaker=example.speaker, timestamp=example.timestamp
        )
    except Exception as exc:
        exc.add_note(f"while extracting gold example {example.id}: {example.text!r}")
        raise
    return list(extraction.facts)

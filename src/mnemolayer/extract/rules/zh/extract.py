"""The entry point :func:`extract_zh`.

Normalise the message, split it into sentences and clauses, skip what states nothing,
run the rules on each clause, read relatives and pets named in passing, finished actions
and pending decisions, and tidy the facts.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from datetime import datetime

from mnemolayer.extract.base import SELF, ExtractedFact, Extraction, ResolvedDate
from mnemolayer.extract.dates import find_date_spans, find_dates
from mnemolayer.extract.rules.zh.context import (
    Clause,
    Head,
    Message,
    Sentence,
    Subject,
    parse_head,
    relation_fact,
)
from mnemolayer.extract.rules.zh.events import decision_content, past_action
from mnemolayer.extract.rules.zh.lexicon import (
    ANIMAL_RE,
    HAN,
    HEDGE,
    HYPOTHETICAL,
    KIN,
    KIN_RE,
    QUESTION,
    TIME,
    YOU,
    animal_kind,
)
from mnemolayer.extract.rules.zh.rules import RULES
from mnemolayer.extract.rules.zh.text import (
    NOUN_TAGS,
    leading_name,
    leading_pet_name,
    pos_tags,
    split_list,
    trim,
    word_bounds,
)

__all__ = ["extract_zh"]

log = logging.getLogger(__name__)

_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]")
_SENTENCE = re.compile(r"[^。!?;\n]+[。!?;\n]*")
_COMMA = re.compile(r"[,，~…]+")
_HAN_SPACE = re.compile(rf"(?<=[{HAN}])\s+(?=[{HAN}])")
#: Clauses longer than this are not chat statements of fact (and regexes stay cheap).
_MAX_CLAUSE = 80


def _sentences(text: str) -> Iterable[Sentence]:
    for m in _SENTENCE.finditer(text):
        if m.group(0).strip():
            yield Sentence(m.group(0), m.start())


def _clauses(sentence: Sentence) -> list[Clause]:
    body = sentence.text.rstrip("。!?;\n ")
    asks = sentence.text.rstrip().endswith("?")
    parts: list[str] = []
    for piece in _COMMA.split(body):
        chunks = _HAN_SPACE.split(piece)  # "我叫李明 今年28岁": a space as a comma
        if len(chunks) > 1 and sum(map(len, chunks)) / len(chunks) <= 3:
            chunks = [_HAN_SPACE.sub("", piece)]  # "莉娜 住在 里斯本": spaces between words
        parts.extend(c.strip() for c in chunks if c.strip())
    return [Clause(p, sentence, asks and i == len(parts) - 1) for i, p in enumerate(parts)]


def _states_nothing(clause: Clause) -> bool:
    text = clause.text
    if clause.ends_question or len(text) > _MAX_CLAUSE:
        return True
    masked = re.sub(TIME, "T", text)  # "几天前" is a date, not a question
    return bool(QUESTION.search(masked) or HEDGE.search(text))


def extract_zh(
    text: str, *, speaker: str | None = None, timestamp: datetime | None = None
) -> Extraction:
    """Facts, entities and dates stated in one Chinese chat message.

    Args:
        text: the message (any length; Latin names and words inside are fine).
        speaker: who said it; first person (``我``) resolves to this name, or to
            :data:`~mnemolayer.extract.base.SELF` when ``None`` or blank.
        timestamp: when it was said (aware UTC). Relative dates (``昨天``, ``下个月``)
            resolve against it; ``None`` leaves them unresolved (facts get no date, and
            only dates that name their year are listed).

    Returns:
        An :class:`~mnemolayer.extract.base.Extraction`: ``facts`` (predicates from
        :data:`~mnemolayer.extract.predicates.PREDICATES`, objects in the message's
        wording, ``date`` set on events and plans), ``entities`` (third parties, places,
        organisations, pets, projects) and ``dates`` (each date phrase and its ISO date).
        Questions, hypotheticals, hedged statements and statements about the assistant
        give none.

    Never raises: any failure (including non-string input) yields an empty
    :class:`~mnemolayer.extract.base.Extraction`, logged at DEBUG.
    """
    try:
        return _extract(text, speaker, timestamp)
    except Exception:  # a rule bug must never cost the caller its message
        log.debug("Chinese rule extraction failed", exc_info=True)
        return Extraction()


def _extract(text: str, speaker: str | None, timestamp: datetime | None) -> Extraction:
    if not isinstance(text, str) or not text.strip():
        return Extraction()
    text = unicodedata.normalize("NFKC", text).replace("\r", "\n")
    text = _EMOJI.sub("。", text)  # an emoji ends a sentence (same length: spans hold)
    name = speaker.strip() if isinstance(speaker, str) and speaker.strip() else SELF
    msg = Message(speaker=name, timestamp=timestamp)
    msg.topic = Subject(Head("self"), name, "")
    msg.dates = [(s, e, text[s:e]) for s, e in find_date_spans(text, "zh")]
    for sentence in _sentences(text):
        if HYPOTHETICAL.search(sentence.text):
            msg.topic = None
            continue
        for clause in _clauses(sentence):
            _clause_facts(msg, clause)
    facts = _tidy(msg.facts)
    dates: list[ResolvedDate] = find_dates(text, timestamp, "zh") if msg.dates else []
    entities = [
        e for e in msg.entities.values() if any(e.name in (f.subject, f.object) for f in facts)
    ]
    return Extraction(facts=facts, entities=entities, dates=dates)


#: Rule groups that hold for 我们 (the speaker did or plans it too); identity and taste
#: said of a group are not the speaker's own ("我们住在上海" may be the whole family).
#: What a clause with 我们 ("we") may state of the speaker: what they did together,
#: plans, pets, names, and a move (我们搬到了上海: the speaker moved too).
_GROUP_RULES = frozenset({"event", "plan", "pet", "name", "move"})


def _clause_facts(msg: Message, clause: Clause) -> None:
    if YOU.match(clause.text):
        msg.topic = None  # a clause about the assistant or others: nothing carries over
        msg.pending_decision = None
        return
    if _states_nothing(clause):
        msg.pending_decision = None
        return
    if msg.pending_decision is not None and decision_content(msg, clause):
        return
    _relatives_named(msg, clause)
    continued, msg.last_list = msg.last_list, None
    fired: set[str] = set()
    topic: Subject | None = None
    first: Subject | None = None  # the first subject the clause names explicitly
    someone_else = False  # a rule matched after a head that names no trusted subject
    for rule in RULES:
        if rule.group in fired:
            continue
        for m in rule.pattern.finditer(clause.text):
            head = parse_head(clause.text[: m.start()])
            subj = msg.bind(head) if head is not None else None
            if subj is None:
                someone_else = someone_else or head is None
                continue
            if subj.head.group and rule.group not in _GROUP_RULES:
                continue
            if first is None and subj.head.kind != "none" and not subj.implicit:
                first = subj
            before = msg.topic
            if rule.handler(msg, subj, m, clause):
                fired.add(rule.group)
                topic = msg.topic if msg.topic is not before else (topic or subj)
                break
    if not fired:
        done = past_action(msg, clause)
        if done is not None:
            topic = topic or done
    if topic is not None:
        msg.topic = topic if topic.name or topic.head.kind in ("relative", "pet") else msg.topic
    elif first is not None:
        msg.topic = first  # "我妈妈是医生，今年五十岁": the mother, not the speaker
    elif someone_else:
        msg.topic = None  # "我知道他喜欢旅游，喜欢美食": the next clauses are not the speaker's
    elif continued is not None and (items := _list_items(clause.text)):
        subj, predicate, negated = continued
        for item in items:
            msg.add(subj, predicate, item, clause, confidence=0.7, negated=negated)
        msg.last_list = continued


_NOT_LIST_START = re.compile(
    r"^(?:很|也|都|真|太|非常|特别|超|挺|好|不|没|还|就|又|才|最|是|有|在|谢谢|哈哈|嗯|对|"
    r"我|你|他|她|它|这|那|等等|之类)"
)
#: "…，尤其是肖邦" / "…，比如跑步和游泳": examples that continue the previous list.
_LIST_LEAD = re.compile(r"^(?:尤其是|特别是|尤其|比如说?|例如|像是|包括)")


def _list_items(text: str) -> list[str]:
    """The items of a clause that only continues a list (``健身``, ``尤其是肖邦``,
    ``比如跑步和游泳``), or ``[]`` when the clause says something else."""
    body = trim(_LIST_LEAD.sub("", text))
    parts = split_list(body) if body != text else [body]
    return parts if parts and all(_is_list_item(p) for p in parts) else []


def _is_list_item(text: str) -> bool:
    """One item of a list: a short noun or verb phrase (``健身``, ``旅游``)."""
    if len(text) > 6 or not re.fullmatch(f"[{HAN}A-Za-z]+", text) or _NOT_LIST_START.match(text):
        return False
    pairs = pos_tags(text)
    return len(pairs) <= 3 and all(tag in NOUN_TAGS or tag in ("v", "vn") for _w, tag in pairs)


_RELATIVE_NAMED = re.compile(
    rf"(?<![你自])我(?P<we>们(?:公司|部门|单位|团队|组|科室)?)?(?:的)?(?P<kin>{KIN_RE})\s*(?P<rest>[A-Za-z{HAN}]{{1,8}})"
)
#: "同事老李…" at the start of a clause: said without 我, still the speaker's.
_BARE_RELATIVE = re.compile(rf"^(?P<kin>{KIN_RE})\s*(?P<rest>[A-Za-z{HAN}]{{1,8}})")
_PET_NAMED = re.compile(
    rf"(?<![你自他她])我(?:们)?(?:的|家的?|家里的|养的|家养的)?(?:那|这)?(?:只|条)?"
    rf"(?P<animal>{ANIMAL_RE})\s*(?P<rest>[A-Za-z{HAN}]{{1,8}})"
)


def _relatives_named(msg: Message, clause: Clause) -> None:
    """``我妹妹小雨…`` / ``和我男朋友小张…`` / ``我的猫咪团子…`` anywhere in a clause:
    the relation itself, or the pet."""
    bare = _BARE_RELATIVE.match(clause.text)
    topic = msg.topic
    if bare and topic is not None and topic.is_self and not bare.group("rest").startswith("叫"):
        name = leading_name(bare.group("rest"))
        if name:
            relation_fact(msg, msg.speaker, KIN[bare.group("kin")], name, clause)
    for m in _RELATIVE_NAMED.finditer(clause.text):
        rest = m.group("rest")
        if rest.startswith(("叫", "是", "名叫")):
            continue  # the name rules read these
        if m.group("we") and KIN[m.group("kin")] not in ("boss", "colleague"):
            continue  # "我们老板王总" is the speaker's boss; "我们妈妈" is no common way to talk
        name = leading_name(rest)
        if name:
            relation_fact(msg, msg.speaker, KIN[m.group("kin")], name, clause)
    for m in _PET_NAMED.finditer(clause.text):
        rest = m.group("rest")
        kind = animal_kind(m.group("animal"))
        if kind is None or rest.startswith(("叫", "是", "名叫", "的")):
            continue
        if not {m.start("animal"), m.end("animal")} <= word_bounds(clause.text):
            continue  # "我的猫砂": the animal is part of another word
        name = leading_pet_name(rest)
        if name:
            msg.add(msg.speaker, "has_pet", name, clause, 0.85, object_type=kind)
            msg.entity(name, "pet")


def _tidy(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """Drop duplicates, and an unnamed pet (``猫``) once the same pet got its name."""
    named_pets = {
        (f.subject, f.object_type)
        for f in facts
        if f.predicate == "has_pet" and animal_kind(f.object) is None
    }
    out: list[ExtractedFact] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for f in facts:
        if (
            f.predicate == "has_pet"
            and animal_kind(f.object) is not None
            and (f.subject, f.object_type) in named_pets
        ):
            continue
        key = (f.subject, f.predicate, f.object, f.negated)
        if key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out

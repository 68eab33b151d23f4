"""Subjects and message state.

What a clause's head says about its subject (:func:`parse_head`), the subject bound to
one message (:meth:`Message.bind`: pronouns, continued subjects, counted pets and
children), the facts a message accumulates, the tense and date of a clause
(:func:`tense_of`), and what every handler needs (:func:`identity_fact`,
:func:`is_negated`, :func:`relation_fact`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from mnemolayer.extract.base import ExtractedEntity, ExtractedFact
from mnemolayer.extract.dates import Preference, resolve_date
from mnemolayer.extract.rules.zh.lexicon import (
    ANIMAL_RE,
    FUTURE_WORDS,
    HABIT_WORDS,
    HAN,
    HEAD_LEAD,
    HEAD_TAIL,
    KIN,
    KIN_RE,
    NEG_WORDS,
    PAST_WORDS,
    SEASON,
    TIME_RE,
    alt,
    animal_kind,
    word_set,
)
from mnemolayer.extract.rules.zh.text import is_name, pet_name


@dataclass(frozen=True, slots=True)
class Head:
    """What a clause's head says about its subject (independent of the message).

    ``kind``: ``"self"`` (我; ``group`` for 我们/我们家), ``"person"`` (a name),
    ``"relative"`` (我妹妹[小雨]), ``"pet"`` (我的猫[团子]), ``"pronoun"`` (他/她),
    ``"it"`` (它: the pet the message is about), ``"member"`` (一只/大的: one of the pets
    or children just counted), ``"known"`` (a word that is a name only if the message
    already named someone so), ``"none"`` (no subject: continue the previous one).
    ``words``: adverbs and time words stripped from it (tense, negation).
    """

    kind: str
    name: str = ""  # the person's name; for "self", who the speaker is with (我和小雨)
    # "" = the speaker; "~" = whoever just said they have someone ("我有一个弟弟…，还有一个
    # 姐姐…"), else the speaker if the message is about them; else a person's name
    owner: str = ""
    relation: str = ""  # a KIN predicate for relatives
    animal: str = ""
    words: frozenset[str] = frozenset()
    group: bool = False  # 我们: the speaker shares events and plans, not identity

    @property
    def future(self) -> bool:
        return not self.words.isdisjoint(FUTURE_WORDS)

    @property
    def past(self) -> bool:
        return not self.words.isdisjoint(PAST_WORDS)

    @property
    def habitual(self) -> bool:
        return not self.words.isdisjoint(HABIT_WORDS)

    @property
    def retracting(self) -> bool:
        return not self.words.isdisjoint(NEG_WORDS)


_SELF_WORDS = frozenset(["我", "我自己", "我本人", "本人"])
#: "我们", "我们家": the speaker among others, or the speaker's household.
_WE_WORDS = word_set(
    "我们 咱们 我们家 咱们家 我家 咱家 我们家里 我家里 我们全家 全家 我们一家 我们一家人 一家人 "
    "全家人 我们俩 我们两个 咱俩 我俩 我们一家三口 一家三口 我们几个"
)
# "我和妈妈…", "我跟朋友一起…": the speaker, with company.
_HEAD_WITH = re.compile(r"我(?:和|跟|与)(?P<who>[^你您和跟]{1,8}?)(?:一起|一块儿?)?")
_HEAD_RELATIVE = re.compile(
    rf"(?P<owner>我|[A-Za-z{HAN}]{{2,4}}?)?(?:的)?(?:这个|那个)?(?P<kin>{KIN_RE})(?P<name>.{{0,12}})"
)
#: "我们老板王总": a workplace relation is the speaker's even when said with 我们.
_HEAD_OUR = re.compile(
    rf"(?:我们|咱们)(?:的)?(?:公司的?|单位的?|部门的?)?(?P<kin>{alt(k for k, v in KIN.items() if v in ('boss', 'colleague'))})(?P<name>.{{0,12}})"
)
#: "一只叫豆豆" / "大的叫乐乐": one of the pets or children the message just counted.
_HEAD_MEMBER = re.compile(
    r"(?:其中)?(?:一|另一|另外一|另外|第[一二三四])(?:只|条|个|位|头|匹)|(?:大|小|老)(?:一点)?的(?:那个|那只)?|"
    r"老[大二三]|大宝|二宝|小宝"
)
#: "我有一个女儿" / "我养了一只猫"; without 我 ("还有一个姐姐") it continues the speaker.
_HEAD_HAVE = re.compile(
    rf"(?P<me>我)?(?:家|们家)?(?:(?:有|还有|也有|家里有|养了|养着|养)(?:一|两|三|几)?(?:个|位|只|条)?|"
    rf"(?:一|两|三|几)(?:个|位|只|条))(?:(?P<kin>{KIN_RE})|(?P<animal>{ANIMAL_RE}))"
)
_HEAD_PET = re.compile(
    rf"(?:我们?(?:的|家的?|家里的|养的|家养的)?|(?P<owner>[A-Za-z{HAN}]{{2,4}}?)(?:的|家的?|养的))"
    rf"(?:那|这)?(?:只|条)?(?P<animal>{ANIMAL_RE})(?P<name>.{{0,8}})"
)
#: People one knows without a predicate for the relation: "邻居王阿姨".
_ACQUAINTANCE = re.compile(
    r"(?:我的?)?(?:大学|高中|初中|小学|以前的|之前的)?(?:邻居|室友|舍友|同学|老同学|大学同学|高中同学|老乡|网友|学长|学姐|学弟|学妹|"
    r"师兄|师姐|师弟|师妹|客户|房东|队友)(?:家的?)?(?P<name>.{2,6})"
)


@functools.lru_cache(maxsize=8192)
def parse_head(head: str) -> Head | None:
    """The subject a clause's head names, or ``None`` when it names none this extractor
    trusts (``你``, ``公司``, ``我觉得我``…). ``我们`` is the speaker with ``group`` set."""
    text = head.strip()
    words: set[str] = set()
    for _ in range(8):
        m = HEAD_LEAD.match(text)
        if not m or not m.group(0):
            break
        text = text[m.end() :]
    for _ in range(8):
        m = HEAD_TAIL.search(text)
        if not m or not m.group(0):
            break
        words.add(m.group(0).strip())
        text = text[: m.start()]
    inner = TIME_RE.findall(text)  # "我昨天和妈妈": time words inside the head too
    if inner:
        words.update(inner)
        text = TIME_RE.sub("", text)
    frozen = frozenset(words)
    if not text:
        return Head("none", words=frozen)
    if text in _SELF_WORDS:
        return Head("self", words=frozen)
    if text in _WE_WORDS:
        return Head("self", words=frozen, group=True)
    m = _HEAD_WITH.fullmatch(text)
    if m and not m.group("who").startswith(("他们", "她们", "大家")):
        return Head("self", name=m.group("who"), words=frozen)  # name: the company
    if text in ("他", "她"):
        return Head("pronoun", words=frozen)
    if text == "它":
        return Head("it", words=frozen)
    if _HEAD_MEMBER.fullmatch(text):
        return Head("member", words=frozen)
    m = _HEAD_HAVE.fullmatch(text)
    if m:
        owner = "" if m.group("me") else "~"
        if m.group("kin"):
            return Head("relative", owner=owner, relation=KIN[m.group("kin")], words=frozen)
        kind = animal_kind(m.group("animal"))
        return Head("pet", owner=owner, animal=kind, words=frozen) if kind else None
    if text in KIN:  # "女儿叫朵朵" after "我有一个儿子一个女儿"
        return Head("relative", owner="~", relation=KIN[text], words=frozen)
    m = _HEAD_OUR.fullmatch(text)
    if m:
        name = m.group("name").strip()
        if name and not is_name(name, after_relation=True):
            return None
        return Head("relative", name=name, relation=KIN[m.group("kin")], words=frozen)
    m = _ACQUAINTANCE.fullmatch(text)
    if m and is_name(m.group("name"), after_relation=True):
        return Head("person", name=m.group("name"), words=frozen)
    m = _HEAD_PET.fullmatch(text)
    if m:
        kind = animal_kind(m.group("animal"))
        name = pet_name(m.group("name").strip()) if m.group("name").strip() else ""
        owner = m.group("owner") or ""
        if kind is None or (m.group("name").strip() and not name):
            return None
        if owner and not is_name(owner):
            return None
        return Head("pet", name=name, owner=owner, animal=kind, words=frozen)
    m = _HEAD_RELATIVE.fullmatch(text)
    if m:
        owner = m.group("owner") or ""
        if owner and owner != "我" and not is_name(owner):
            return None
        name = m.group("name").strip()
        if name and not is_name(name, after_relation=True):
            return None
        if not owner and not name:
            return None  # "朋友的…": whose?
        return Head(
            "relative",
            name=name,
            owner="" if owner == "我" else owner or "~",  # "同事老李": the speaker's
            relation=KIN[m.group("kin")],
            words=frozen,
        )
    if is_name(text):
        return Head("person", name=text, words=frozen)
    if re.fullmatch(f"[{HAN}]{{2,3}}", text):
        return Head("known", name=text, words=frozen)  # "团子" once named as a pet
    return None


@dataclass(frozen=True, slots=True)
class Subject:
    """A head bound to this message: ``name`` is the fact subject ("" when the head is a
    relative or pet without a name, which only ``叫``/``是`` can complete)."""

    head: Head
    name: str
    owner: str
    implicit: bool = False

    @property
    def is_self(self) -> bool:
        return self.head.kind == "self"


@dataclass
class Clause:
    """One clause of a sentence, as the rules read it; ``ends_question``: the last clause
    of a sentence that ends with ``？``."""

    text: str
    sentence: Sentence
    ends_question: bool


@dataclass
class Sentence:
    """One sentence of the message and where it starts in the (normalised) text."""

    text: str
    start: int


@dataclass
class Message:
    """Everything one call of :func:`extract_zh` accumulates."""

    speaker: str
    timestamp: datetime | None
    facts: list[ExtractedFact] = field(default_factory=list)
    entities: dict[str, ExtractedEntity] = field(default_factory=dict)
    topic: Subject | None = None
    last_person: str = ""
    #: The list fact of the previous clause (subject, predicate, negated): "我喜欢唱歌，
    #: 健身，旅游" continues it in the clauses that follow.
    last_list: tuple[Subject, str, bool] | None = None
    dates: list[tuple[int, int, str]] = field(default_factory=list)  # spans in the text
    #: Pets or children counted without names ("我养了两只猫"): "一只叫…" names one.
    counted: Subject | None = None
    #: "我已经想好了": the next clause says what was decided.
    pending_decision: Subject | None = None
    #: The last plan the message stated (or told as given up: "我本来打算去日本"):
    #: "后来取消了" retracts it.
    last_plan: tuple[str, str] | None = None
    #: Who last said they have someone or a pet ("我有一个弟弟…"): "还有一个姐姐" is theirs.
    haver: str = ""

    def add(
        self,
        subject: Subject | str,
        predicate: str,
        obj: str,
        clause: Clause,
        confidence: float = 0.8,
        *,
        object_type: str | None = None,
        negated: bool = False,
        when: date | None = None,
    ) -> None:
        """Record a fact (dropped when subject or object is empty, or a fact would be
        about itself); a continued subject lowers the confidence by 0.1."""
        if isinstance(subject, Subject):
            if subject.implicit:
                confidence -= 0.1
            subject = subject.name
        if not subject or not obj or (subject == obj and predicate != "name"):
            return
        if predicate == "plans" and not negated:
            self.last_plan = (subject, obj)
        self.facts.append(
            ExtractedFact(
                subject=subject,
                predicate=predicate,
                object=obj,
                object_type=object_type,
                negated=negated,
                date=when,
                confidence=round(max(0.1, min(confidence, 1.0)), 2),
                evidence=clause.text,
            )
        )

    def entity(self, name: str, kind: str) -> None:
        """Name an entity of ``kind`` (the first kind given for a name stays)."""
        if name and name != self.speaker and name not in self.entities:
            self.entities[name] = ExtractedEntity(name=name, type=kind)

    def person(self, name: str) -> None:
        """Name a person, who ``他``/``她`` then refers to."""
        self.entity(name, "person")
        self.last_person = name

    def bind(self, head: Head) -> Subject | None:
        """The message-level subject of a parsed head (pronouns and empty heads resolved)."""
        if head.kind == "self":
            return Subject(head, self.speaker, "")
        owner = head.owner or self.speaker
        if owner == "~":  # "还有一个姐姐": whoever just said what they have, or the speaker
            if self.haver:
                owner = self.haver
            elif self.topic is not None and self.topic.is_self and not self.topic.head.group:
                owner = self.speaker
            else:
                return None
        if head.kind == "person":
            return Subject(head, head.name, "")
        if head.kind == "known":
            known = self.entities.get(head.name)
            if known is None or known.type not in ("person", "pet"):
                return None
            return Subject(replace(head, kind="person"), head.name, "")
        if head.kind == "relative":
            return Subject(head, head.name, owner)
        if head.kind == "pet":
            return Subject(head, head.name, owner)
        if head.kind == "it":  # "它叫年糕": the pet the message is about
            topic = self.topic
            if topic is None or topic.head.kind != "pet":
                return None
            return Subject(replace(topic.head, words=head.words), topic.name, topic.owner, True)
        if head.kind == "member":
            if self.counted is None:
                return None
            return Subject(replace(self.counted.head, words=head.words), "", self.counted.owner)
        if head.kind == "pronoun":
            if not self.last_person:
                return None
            return Subject(replace(head, kind="person"), self.last_person, "", implicit=True)
        if self.topic is None:  # no subject and nothing to continue
            return None
        topic = self.topic
        return Subject(
            replace(topic.head, words=head.words), topic.name, topic.owner, implicit=True
        )

    def date_of(self, clause: Clause, prefer: Preference) -> date | None:
        """The one date the clause (or else its sentence) names, resolved against the
        message time; ``None`` when there is none, or more than one."""
        if self.timestamp is None:
            return None
        phrases = [p for s, e, p in self.dates if clause.text.find(p) >= 0]
        if not phrases:
            start = clause.sentence.start
            end = start + len(clause.sentence.text)
            phrases = [p for s, e, p in self.dates if start <= s and e <= end]
        if SEASON.search(clause.text):  # "今年夏天": the year alone is not the day
            phrases = [p for p in phrases if p not in ("今年", "去年", "明年", "前年", "后年")]
        values = {resolve_date(p, self.timestamp, "zh", prefer=prefer) for p in phrases}
        values.discard(None)
        return values.pop() if len(values) == 1 else None


#: A rule's handler: (message, bound subject, the rule's match, clause) → whether the
#: rule applied (it may add facts, or only move the message's topic).
Handler = Callable[[Message, Subject, "re.Match[str]", Clause], bool]

_PAST_CUE = re.compile(
    r"了|过(?!来|去|年)|昨|前天|上周|上个?星期|上个?礼拜|上个?月|去年|前年|刚才|刚刚|已经|"
    r"(?:天|周|星期|个月|年)(?:以|之)?前"
)
FUTURE_CUE = re.compile(
    r"明天|后天|下周|下个?星期|下个?礼拜|下个?月|明年|后年|将来|以后|待会|等会|马上|即将|"
    r"(?:天|周|星期|个月|年)(?:以|之)?后|打算|准备|计划"
)


def tense_of(msg: Message, subj: Subject, clause: Clause, aspect: str) -> tuple[str, date | None]:
    """``("past" | "future" | "", date)`` of an event clause, from its words (``了``/``过``
    after the verb, a final ``了``, ``明天``, a modal ``要``) and its date against the
    message time. A date that contradicts the aspect is dropped, not trusted: ``周末我去
    爬山了`` said on a Monday is last weekend, whatever "周末" alone resolves to."""
    text = clause.text
    if subj.head.habitual:
        return "", None  # "每周都会去打球": a habit, not one event
    future = subj.head.future or FUTURE_CUE.search(text) is not None
    past = (
        aspect in ("了", "过")
        or subj.head.retracting
        or (not future and (text.endswith(("了", "了啊", "了呀", "啦")) or _PAST_CUE.search(text)))
    )
    hint: Preference = "past" if past and not future else "future" if future and not past else None
    when = msg.date_of(clause, hint)
    if when is not None and msg.timestamp is not None:
        today = msg.timestamp.date()
        if when > today:
            return ("past", None) if hint == "past" else ("future", when)
        if when < today:
            return ("future", None) if hint == "future" else ("past", when)
    if past:
        return "past", when
    if future:
        return "future", when
    return "", when


def _kind_of(pred: str) -> str | None:
    return {"lives_in": "place", "from": "place", "visited": "place", "nationality": "place",
            "works_at": "organization", "studies_at": "organization",
            "works_on": "project"}.get(pred)  # fmt: skip


def identity_fact(
    msg: Message,
    subj: Subject,
    pred: str,
    obj: str,
    clause: Clause,
    *,
    negated: bool = False,
    confidence: float = 0.85,
    when: date | None = None,
) -> bool:
    """Add an identity fact about a named subject; not one said of the past (``以前``,
    ``去年``) unless it is dated (a move last year still tells where one lives)."""
    if not subj.name or not obj or (subj.head.past and not negated and when is None):
        return False
    kind = _kind_of(pred)
    msg.add(
        subj, pred, obj, clause, confidence=confidence, object_type=kind, negated=negated, when=when
    )
    if kind and not negated:
        msg.entity(obj, kind)
    if not subj.is_self:
        msg.person(subj.name)
    return True


#: A 不 that negates: not the one in 不过 ("but"), 不错 ("good"), 不少 ("many")…
_NEGATOR = re.compile(r"不(?!过|错|少|久|但|仅|管|论|同|断|然|如|光|停|止|得不|禁)")


def is_negated(m: re.Match[str], subj: Subject, clause: Clause) -> bool:
    """Whether the match retracts its fact: a negation group in the rule, or a
    retracting adverb (``已经``, ``再也``) with a real negator in the clause."""
    neg = m.groupdict().get("neg") or ""
    return bool(neg) or (subj.head.retracting and _NEGATOR.search(clause.text) is not None)


def relation_fact(msg: Message, owner: str, relation: str, name: str, clause: Clause) -> None:
    msg.add(owner, relation, name, clause, confidence=0.85, object_type="person")
    msg.person(name)

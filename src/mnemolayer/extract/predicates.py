"""The predicate vocabulary of semantic memory.

Each predicate has a **cardinality** that drives conflict resolution (bi-temporal, see
:mod:`mnemolayer.lifecycle.conflicts`):

- ``single``: one current value per subject (``lives_in``, ``works_at``, ``age``…). A newer
  fact with a different object closes the older one at the new fact's time.
- ``multi``: values accumulate (``likes``, ``visited``, ``sister``…); only an explicit
  negation, or the opposite predicate on the same object (``likes`` ↔ ``dislikes``),
  closes one.

``category`` groups predicates for :meth:`Memory.profile` (``identity``, ``relationship``,
``preference``, ``event``, ``plan``, ``other``). ``en`` / ``zh`` render a fact as a
sentence for its retrieval key and for context (``{s}`` subject, ``{o}`` object).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["OPPOSITES", "PREDICATES", "Predicate", "predicate", "render"]

Cardinality = Literal["single", "multi"]


@dataclass(frozen=True, slots=True)
class Predicate:
    name: str
    cardinality: Cardinality
    category: str
    en: str
    zh: str


def _p(name: str, card: Cardinality, cat: str, en: str, zh: str) -> Predicate:
    return Predicate(name, card, cat, en, zh)


_ALL = [
    # identity
    _p("name", "single", "identity", "{s}'s name is {o}", "{s}的名字是{o}"),
    _p("age", "single", "identity", "{s} is {o} years old", "{s}{o}岁"),
    _p("birthday", "single", "identity", "{s}'s birthday is {o}", "{s}的生日是{o}"),
    _p("gender", "single", "identity", "{s} is {o}", "{s}是{o}"),
    _p("lives_in", "single", "identity", "{s} lives in {o}", "{s}住在{o}"),
    _p("from", "single", "identity", "{s} is from {o}", "{s}来自{o}"),
    _p("nationality", "single", "identity", "{s} is {o}", "{s}是{o}人"),
    _p("job", "single", "identity", "{s} works as {o}", "{s}的工作是{o}"),
    _p("works_at", "single", "identity", "{s} works at {o}", "{s}在{o}工作"),
    _p("works_on", "single", "identity", "{s} works on {o}", "{s}负责{o}"),
    _p("role", "multi", "identity", "{s} is responsible for {o}", "{s}负责管理{o}"),
    _p("studies_at", "single", "identity", "{s} studies at {o}", "{s}在{o}上学"),
    _p("studies", "single", "identity", "{s} studies {o}", "{s}学{o}"),
    _p("speaks", "multi", "identity", "{s} speaks {o}", "{s}会说{o}"),
    _p("relationship_status", "single", "identity", "{s} is {o}", "{s}{o}"),
    # relationships (object: the other person's name)
    _p("spouse", "single", "relationship", "{s}'s spouse is {o}", "{s}的配偶是{o}"),
    _p("partner", "single", "relationship", "{s}'s partner is {o}", "{s}的伴侣是{o}"),
    _p("mother", "single", "relationship", "{s}'s mother is {o}", "{s}的妈妈是{o}"),
    _p("father", "single", "relationship", "{s}'s father is {o}", "{s}的爸爸是{o}"),
    _p("sister", "multi", "relationship", "{s}'s sister is {o}", "{s}的姐妹是{o}"),
    _p("brother", "multi", "relationship", "{s}'s brother is {o}", "{s}的兄弟是{o}"),
    _p("child", "multi", "relationship", "{s}'s child is {o}", "{s}的孩子是{o}"),
    _p("friend", "multi", "relationship", "{s}'s friend is {o}", "{s}的朋友是{o}"),
    _p("colleague", "multi", "relationship", "{s}'s colleague is {o}", "{s}的同事是{o}"),
    _p("boss", "single", "relationship", "{s}'s boss is {o}", "{s}的老板是{o}"),
    _p("relative", "multi", "relationship", "{s}'s relative is {o}", "{s}的亲戚是{o}"),
    _p("has_pet", "multi", "relationship", "{s} has a pet {o}", "{s}养了{o}"),
    # preferences
    _p("likes", "multi", "preference", "{s} likes {o}", "{s}喜欢{o}"),
    _p("dislikes", "multi", "preference", "{s} dislikes {o}", "{s}不喜欢{o}"),
    _p("prefers", "multi", "preference", "{s} prefers {o}", "{s}更喜欢{o}"),
    _p("allergic_to", "multi", "preference", "{s} is allergic to {o}", "{s}对{o}过敏"),
    _p("diet", "single", "preference", "{s} is {o}", "{s}是{o}"),
    _p("eats", "multi", "preference", "{s} eats {o}", "{s}吃{o}"),
    _p("hobby", "multi", "preference", "{s}'s hobby is {o}", "{s}的爱好是{o}"),
    # events (usually with a date)
    _p("visited", "multi", "event", "{s} visited {o}", "{s}去过{o}"),
    _p("attended", "multi", "event", "{s} attended {o}", "{s}参加了{o}"),
    _p("did", "multi", "event", "{s} {o}", "{s}{o}"),
    # plans and decisions
    _p("plans", "multi", "plan", "{s} plans to {o}", "{s}打算{o}"),
    _p("decided", "multi", "plan", "{s} decided to {o}", "{s}决定{o}"),
    _p("goal", "multi", "plan", "{s} wants to {o}", "{s}想要{o}"),
    # learned from feedback (Memory.learn_from_feedback)
    _p("feedback", "multi", "preference", "{s} gave feedback: {o}", "{s}的反馈：{o}"),
]

#: Every predicate by name.
PREDICATES: dict[str, Predicate] = {p.name: p for p in _ALL}

#: Stating one of a pair on the same object closes the other (a changed preference).
OPPOSITES: dict[str, str] = {"likes": "dislikes", "dislikes": "likes"}


def predicate(name: str) -> Predicate:
    """The :class:`Predicate` called ``name``.

    Raises:
        KeyError: unknown predicate (extractors must only emit known ones).
    """
    return PREDICATES[name]


def render(subject: str, pred: str, obj: str, *, lang: str = "en") -> str:
    """A fact as one sentence (``lang`` ``"en"`` or ``"zh"``); unknown predicates render
    as ``"subject predicate object"``."""
    p = PREDICATES.get(pred)
    if p is None:
        return f"{subject} {pred.replace('_', ' ')} {obj}"
    return (p.zh if lang == "zh" else p.en).format(s=subject, o=obj)

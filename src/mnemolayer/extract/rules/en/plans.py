"""Rule handlers for plans, decisions and goals: "going to", "planning to", dated
progressives ("flying to Tokyo on Friday"), appointments ("I have a dentist
appointment on Friday"), cancelled plans, decisions ("decided not to…", "made up my
mind, I'm moving") and goals.
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.en.events import _event_np
from mnemolayer.extract.rules.en.lexicon import _EVENT_NOUNS, _KNOWN_PLACES, _set
from mnemolayer.extract.rules.en.message import _Ctx, _Hit, _Message
from mnemolayer.extract.rules.en.phrases import (
    _ACTION_STOP,
    _BE_DOING,
    _DESTINATION_START,
    _NP_STOP,
    _PRONOUN_START,
    _TO_START,
    _VP_STOP,
    _bare,
    _base,
    _cut,
    _org,
    _place,
    _vp,
)
from mnemolayer.extract.rules.en.text import _NAME_TOKEN, _Clause


def _plan_vp(text: str, *, dated: bool = False) -> str | None:
    """The plan after "going to": a verb phrase, or a destination ("going to Japan" →
    "go to Japan"; "going to the dentist" only when ``dated``: a day to come is named)."""
    stripped = text.strip()
    if _DESTINATION_START.match(stripped):
        place = _place(stripped)
        if place:
            return f"go to {place}"
        np = _cut(stripped, _ACTION_STOP)
        words = _bare(np).split()
        known = words and (words[-1].casefold() in _EVENT_NOUNS or (dated and len(words) <= 4))
        if known and not _PRONOUN_START.match(words[0]):
            return f"go to {np}"
        return None
    words = stripped.split()
    if words and words[0].casefold() in _ROUTINE_PLACES:
        return None  # "going to bed", "going to work"
    return _vp(stripped)


#: Places one goes to every day: "going to work" is no plan.
_ROUTINE_PLACES = _set("bed work school church class sleep college town lunch dinner breakfast")


def _h_plan_going(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    vp = _plan_vp(m.group("o"), dated=ctx.msg.has_future_date(ctx.clause))
    return [_Hit("plans", vp, confidence=0.9, timing="future")] if vp else []


#: Verbs that end in "-ing" and are no gerund.
_ING_VERBS = _set("bring sing swing sting string fling cling wring")


def _h_plan(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A plan after "plan to/on": "I plan to open a bakery", "planning on moving"."""
    text = m.group("o").strip()
    words = text.split()
    if words and words[0].casefold().endswith("ing") and words[0].casefold() not in _ING_VERBS:
        vp = _vp(" ".join([_base(words[0]), *words[1:]]))
    else:
        vp = _vp(text)
    return [_Hit("plans", vp, confidence=0.9, timing="future")] if vp else []


def _h_plan_noun(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A plan named by a noun: "planning a trip to Italy", "planning our wedding"."""
    np = _cut(m.group("o"), _VP_STOP)
    bare = _bare(np)
    if not bare or _PRONOUN_START.match(bare) or len(bare.split()) > 8:
        return []
    return [_Hit("plans", bare, confidence=0.8, timing="future")]


def _h_thinking_of(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    words = m.group("o").split()
    if not words or not words[0].casefold().endswith("ing"):
        return []
    vp = _vp(" ".join([_base(words[0]), *words[1:]]))
    return [_Hit("plans", vp, confidence=0.7, timing="future")] if vp else []


def _h_will(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not ctx.msg.has_future_date(ctx.clause):
        return []
    text = m.group("o").strip()
    going = _BE_DOING.match(text)
    if going:  # "will be starting my new job" → "start my new job"
        text = f"{_base(going.group('g'))} {going.group('rest')}".strip()
    vp = _vp(text)
    if vp is None or vp.split()[0].casefold() in _NOT_WILL_PLANS:
        return []
    return [_Hit("plans", vp, confidence=0.8, timing="future")]


#: What follows "will" when it is no plan: "I'll have to…", "I'll probably…", "I'll see".
_NOT_WILL_PLANS = _set("be have need probably definitely let see think")


#: Progressive forms that state a feeling or an effort, not an arrangement.
_NOT_PROGRESSIVE_PLANS = _set(
    "feeling thinking wondering hoping trying looking being doing struggling dying missing "
    "loving enjoying hating worrying waiting expecting dreading considering planning kidding "
    "joking working living staying sleeping"
)


def _h_progressive_plan(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A plan in the present progressive with a time to come: "I'm flying to Tokyo next
    Friday"."""
    gerund = m.group("g").casefold()
    if gerund in _NOT_PROGRESSIVE_PLANS or not ctx.msg.has_future_date(ctx.clause):
        return []
    rest = m.group("o") or ""
    if gerund == "going" and _TO_START.match(rest):
        target = _TO_START.sub("", rest)
        vp = _plan_vp(target, dated=True)
        return [_Hit("plans", vp, confidence=0.85, timing="future")] if vp else []
    rest = _AND_GERUND.sub(lambda g: f"{g.group(1)}{_base(g.group(2))}", rest)
    vp = _vp(f"{_base(gerund)} {rest}".strip())
    if vp is None or len(vp.split()) < 2:
        return []
    return [_Hit("plans", vp, confidence=0.8, timing="future")]


#: A second gerund of a progressive plan ("relaxing and recharging" → "relax and recharge").
_AND_GERUND = re.compile(r"^(\s*(?:and|or)\s+)([a-z]+ing)\b")


def _h_off_to(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A trip announced with "off to": "I'm off to Ireland next month" → plans "go to
    Ireland"; "I'm off to bake some cakes" (leaving now) is no plan unless a day is named."""
    dated = ctx.msg.has_future_date(ctx.clause)
    if not dated and not _DESTINATION_START.match(m.group("o").strip()):
        return []
    vp = _plan_vp(m.group("o"), dated=dated)
    return [_Hit("plans", vp, confidence=0.8, timing="future")] if vp else []


#: What one cancels that was a plan ("cancelling my trip to Lisbon").
_CANCELLABLE = _set(
    "trip vacation holiday visit party wedding appointment flight reservation booking tour "
    "cruise honeymoon getaway dinner celebration event meeting interview surgery move "
    "camping road weekend retreat lesson class"
)
_OF_PREPOSITION = re.compile(r"\s+(?:to|in|at|for|with|on|from|of)\b", re.I)
_PLANS_TO = re.compile(r"^(?:plans?|arrangements?)\s+to\s+(?P<vp>.+)", re.I)


def _h_cancelled(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A cancelled plan, as a retracted ``plans`` fact: "I'm cancelling my trip to
    Lisbon" → plans "trip to Lisbon" (negated); "cancelled my plans to move" → "move"."""
    np = _bare(_cut(m.group("o"), _NP_STOP))
    plans_to = _PLANS_TO.match(np)
    if plans_to:
        vp = _vp(plans_to.group("vp"))
        return [_Hit("plans", vp, confidence=0.8, negated=True)] if vp else []
    core = _cut(np, _OF_PREPOSITION)
    if not core or len(np.split()) > 6 or _PRONOUN_START.match(np):
        return []
    head = core.split()[-1].casefold()
    if head not in _CANCELLABLE and head.rstrip("s") not in _CANCELLABLE:
        return []
    return [_Hit("plans", np, confidence=0.8, negated=True)]


def _h_decided(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A decision: "I decided to move", "decided not to go" (object "not to go"),
    "decided against buying a car" (object "not to buy a car")."""
    text = m.group("o").strip()
    against = m.groupdict().get("against") is not None
    negative = against or m.group("neg") is not None
    if against:
        words = text.split()
        if not words or not words[0].casefold().endswith("ing"):
            return []
        text = " ".join([_base(words[0]), *words[1:]])
    vp = _vp(text)
    if vp is None:
        return []
    return [_Hit("decided", f"not to {vp}" if negative else vp, confidence=0.9, timing="past")]


def _decided_vp(text: str) -> str | None:
    """What a decision stated as a plan commits to: "I'm taking the job" / "I'm going to
    take the job" / "I'll take the job" → "take the job"; "I'm not going to move" → "not
    to move". ``text`` follows the subject."""
    text = text.strip()
    vp: str | None = None
    m = _DECIDED_GOING.match(text)
    if m is not None:
        vp = _plan_vp(m.group("o"), dated=True)
    elif (m := _DECIDED_DOING.match(text)) is not None:
        gerund = m.group("g").casefold()
        if gerund in _NOT_DECIDED_GERUNDS or gerund in _ING_VERBS:
            return None
        vp = _vp(f"{_base(gerund)} {m.group('o')}".strip())
    elif (m := _DECIDED_WILL.match(text)) is not None:
        vp = _vp(m.group("o"))
        if vp is not None and vp.split()[0].casefold() in _NOT_WILL_PLANS:
            return None
    if vp is None or m is None:
        return None
    return f"not to {vp}" if m.group("neg") else vp


#: Progressive forms that state a feeling, not what was decided ("I'm feeling…").
_NOT_DECIDED_GERUNDS = _set(
    "feeling thinking wondering hoping trying looking struggling dying kidding joking "
    "waiting worrying missing loving enjoying hating being"
)
_DECIDED_GOING = re.compile(r"^(?:am|are|is)\s+(?P<neg>not\s+)?going\s+to\s+(?P<o>.+)$", re.I)
_DECIDED_DOING = re.compile(r"^(?:am|are|is)\s+(?P<neg>not\s+)?(?P<g>[a-z]+ing)\b(?P<o>.*)$", re.I)
_DECIDED_WILL = re.compile(r"^(?:will|shall)\s+(?P<neg>not\s+)?(?P<o>.+)$", re.I)


def _h_decided_plan(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A decision stated as a plan: "I decided I'm taking the job", "we decided that we
    will sell the house"."""
    vp = _decided_vp(m.group("o"))
    return [_Hit("decided", vp, confidence=0.85, timing="past")] if vp else []


def _h_goal(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    text = m.group("o").strip()
    words = text.split()
    if (
        words
        and words[0].casefold().endswith("ing")
        and m.group(0).casefold().split()[0].startswith("dream")
    ):
        vp = _vp(" ".join([_base(words[0]), *words[1:]]))
    else:
        vp = _vp(text)
    return [_Hit("goal", vp, confidence=0.85)] if vp else []


#: What one has "on Monday" as an arrangement: events and appointments.
_APPOINTMENT_NOUNS = _EVENT_NOUNS | _set(
    "exam test surgery operation physical date flight procedure scan ultrasound haircut "
    "lesson rehearsal practice training call"
)
_OTHERS_POSSESSIVE = re.compile(r"^(?:your|his|her|their)\s", re.I)
_AT_ORG_TAIL = re.compile(r"^\s*(?P<p>at|with|for|to)\s+(?P<o>.+)", re.I)


def _arrangement(text: str) -> str | None:
    """An appointment or event at the start of ``text``, with the organisation it is at:
    "a dentist appointment" → "dentist appointment", "an interview at Spotify" →
    "interview at Spotify"; ``None`` for anything else."""
    found = _event_np(text)
    if found is None:
        return None
    bare, head = found
    stripped = text.strip()
    if head not in _APPOINTMENT_NOUNS or _OTHERS_POSSESSIVE.match(stripped):
        return None
    at = stripped.find(bare)
    tail = _AT_ORG_TAIL.match(stripped[at + len(bare) :]) if at >= 0 else None
    if tail and tail.group("p").casefold() == "to":  # "my flight to Boston"
        place = _place(tail.group("o"))
        return f"{bare} to {place}" if place else bare
    doctor = _TITLED_PERSON.match(tail.group("o")) if tail else None
    if tail and doctor:  # "my appointment with Dr. Lee"
        return f"{bare} {tail.group('p')} {doctor.group()}"
    org = _org(tail.group("o")) if tail else None
    if tail and org and org not in _KNOWN_PLACES:
        return f"{bare} {tail.group('p')} {org}"
    return bare


_TITLED_PERSON = re.compile(rf"(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+{_NAME_TOKEN}")


def _h_appointment(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """An appointment on a day to come: "next Friday I have a dentist appointment", "I've
    got an interview at Spotify on Monday" → plans, with the day."""
    if not ctx.msg.has_future_date(ctx.clause):
        return []
    np = _arrangement(m.group("o"))
    return [_Hit("plans", np, confidence=0.85, timing="future")] if np else []


def _c_arrangement(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    """An appointment as the subject of its day: "My interview at Spotify is on Monday" →
    plans "interview at Spotify" with the day; "…was on Monday" → attended."""
    np = _arrangement(m.group("np"))
    if np is None:
        return []
    if m.group("v").casefold() == "was":
        return [_Hit("attended", np, confidence=0.8, timing="past")]
    if not msg.has_future_date(clause):
        return []
    return [_Hit("plans", np, confidence=0.85, timing="future")]

"""Rule handlers for events: places visited, events attended, and other things done
("ran a marathon", "got promoted to senior designer", "took my niece to the
aquarium" → visited aquarium).
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.en.lexicon import (
    _ACTION_PAST,
    _BASE_VERBS,
    _EVENT_NOUNS,
    _NEEDS_DATE,
    _NOT_ACTIONS,
    _NOT_PROPER,
    _PARTICIPLES,
    _PARTICLES,
    _PLACE_NOUN_EXCLUDED,
    _PLACE_NOUNS,
    _TAKES_SOMEWHERE,
    _VERB_PREPS,
    _set,
)
from mnemolayer.extract.rules.en.message import _Ctx, _Hit
from mnemolayer.extract.rules.en.phrases import (
    _ACTION_STOP,
    _AMOUNT_WORDS,
    _GOT_OBJECT,
    _GOT_OUTCOME,
    _LOWER_START,
    _OUTCOME_PLACE,
    _POSSESSIVE_START,
    _PRONOUN_START,
    _SEE_OR_WATCH,
    _TITLE_STOP,
    _TO_PLACE,
    _TO_START,
    _bare,
    _cut,
    _org,
    _place,
)


def _event_np(text: str) -> tuple[str, str] | None:
    """The noun phrase after "went to" / "attended" without articles, and its head word
    (singular when the plural is an event noun: "classes" → "class")."""
    np = _cut(text, _ACTION_STOP)
    np = _SEE_OR_WATCH.sub("", np)
    bare = _bare(np)
    if not bare or _PRONOUN_START.match(bare) or len(bare.split()) > 6:
        return None
    head = bare.split()[-1].casefold()
    if head not in _EVENT_NOUNS and head.endswith("s") and head[:-1] in _EVENT_NOUNS:
        head = head[:-1]
    if head not in _EVENT_NOUNS and head.endswith("es") and head[:-2] in _EVENT_NOUNS:
        head = head[:-2]
    return bare, head


_EVENT_NAME = re.compile(
    r"\b(?:Festival|Fest|Con|Conference|Summit|Expo|Pride|Marathon|Games|Fair|Week|Show|"
    r"Concert|Gala|Awards|Parade|Carnival|Party|Tour|Olympics|Cup|Championships?|Open|"
    r"Meetup|Hackathon|Symposium|Convention|Retreat|Camp|Workshop|Ceremony)\b"
)


def _h_went_to(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    target = m.group("o").strip()
    found = _event_np(target)
    if found is None:
        return []
    bare, head = found
    if head in _EVENT_NOUNS or _EVENT_NAME.search(bare):
        return [_Hit("attended", bare, confidence=0.9, timing="past")]
    place = _place(target) if target[:1].isupper() or target[:4].casefold() == "the " else None
    if place and len(place.split()) <= 4:
        return [_Hit("visited", place, entity="place", confidence=0.9, timing="past")]
    if (
        head in _PLACE_NOUNS
        and bare.casefold() not in _PLACE_NOUN_EXCLUDED
        and not _POSSESSIVE_START.match(target)
    ):
        return [_Hit("visited", bare, confidence=0.75, timing="past")]
    return []


def _h_visited(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    target = m.group("o").strip()
    verb = m.group("v").casefold()
    if verb.split()[0] in ("was", "were") and not (ctx.clause.dates or ctx.clause.sentence.dates):
        return []
    found = _event_np(target)
    if found and found[1] in _EVENT_NOUNS and not target[:1].isupper():
        return [_Hit("attended", found[0], confidence=0.85, timing="past")]
    place = _place(target)
    if place and len(place.split()) <= 4:
        return [_Hit("visited", place, entity="place", confidence=0.9, timing="past")]
    if (
        found
        and found[1] in _PLACE_NOUNS
        and not _POSSESSIVE_START.match(target)
        and verb.split()[0] not in ("was", "were")
    ):
        return [_Hit("visited", found[0], confidence=0.75, timing="past")]
    return []


def _h_attended(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    found = _event_np(m.group("o"))
    if found is None:
        return []
    bare, head = found
    verb = m.group("v").casefold()
    if verb.split()[0] in ("was", "were", "had") and head not in _EVENT_NOUNS:
        return []
    if verb == "had" and (_TO_START.match(bare) or _HAD_A_TIME.search(bare)):
        return []  # "had to miss some games", "had a great time throwing a party"
    return [_Hit("attended", bare, confidence=0.9, timing="past")]


_HAD_A_TIME = re.compile(r"\b(?:time|blast|fun|day|night|moment)\b", re.I)


def _h_went_doing(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("did", f"went {m.group('g').casefold()}", confidence=0.8, timing="past")]


_DID_NOT_OBJECT = _set(
    "it that this them him me us something everything nothing sure up out here there home "
    "abroad away around back together"
)
_DID_EXCLUDED = re.compile(
    r"^(?:ran\s+(?:out|into|late|away)|made\s+(?:sure|it|up|out|fun|(?:a|my|our|the)\s+(?:final\s+|big\s+)?(?:decision|choice|call))|took\s+(?:care|place|part|time|a\s+(?:nap|break|"
    r"look|moment|second|minute|breath|shower))|got\s+(?:to|back|home|up|out|it|there|over|"
    r"used|lost|sick|married|engaged|divorced|tired|bored|ready)|passed\s+away|picked\s+up\s+"
    r"(?:my|the|a|her|his|our)\s+(?:kids?|son|daughter|phone|call)|saw\s+(?:that|it|this|you)|"
    r"lost\s+(?:it|track|my\s+mind|interest)|tried\s+(?:to|my\s+best|my\s+hand|hard)|gave\s+up|"
    r"checked\s+(?:in|on|it)|started\s+to|shot\s+(?:me|you))\b",
    re.I,
)


def _h_did(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A past action and its object: "ran a charity race", "finished my first marathon",
    "got promoted", "took the kids to the zoo"."""
    raw_verb = m.group("v")
    verb = raw_verb.casefold()
    if m.group("perfect"):
        verb = _PARTICIPLES.get(verb, verb)
    has_date = bool(ctx.clause.dates or ctx.clause.sentence.dates)
    confidence = 0.8
    if verb not in _ACTION_PAST:
        # any other regular past verb, when a date says it is an event ("knocked … over
        # this morning"), unless it says what someone thought, felt or said
        if not (has_date and verb.endswith("ed") and verb not in _NOT_ACTIONS and len(verb) > 4):
            return []
        confidence = 0.7
    tail = m.group("o") or ""
    if verb == "got" and (outcome := _got_outcome(tail)):
        return [_Hit("did", outcome, confidence=0.8, timing="past")]
    if verb in _NEEDS_DATE and not has_date:
        return []
    if verb in ("started", "began") and tail.split()[:1] and tail.split()[0].endswith("ing"):
        return []  # "started looking into…": the start of a habit, no event
    if _DID_EXCLUDED.match(f"{raw_verb} {tail}".strip()):
        return []
    if verb in _TAKES_SOMEWHERE and (outing := _outing(tail)) is not None:
        return [outing]
    phrase = _action_phrase(raw_verb, verb, tail)
    return [_Hit("did", phrase, confidence=confidence, timing="past")] if phrase else []


def _got_outcome(tail: str) -> str | None:
    """What happened to the speaker, from what follows "got": "got promoted", "got
    accepted into MIT"."""
    became = _GOT_OUTCOME.match(tail)
    if became is None:
        return None
    outcome = f"got {became.group('p').casefold()}"
    where = _OUTCOME_PLACE.match(tail[became.end() :])
    if where is None:
        return outcome
    org = _org(where.group("o"))
    if org:
        return f"{outcome} {where.group('prep')} {org}"
    if where.group("prep").casefold() == "to":  # "got promoted to senior designer"
        title = _cut(where.group("o"), _TITLE_STOP)
        words = title.split()
        if 0 < len(words) <= 4 and not _PRONOUN_START.match(title) and _LOWER_START.match(title):
            return f"{outcome} to {title}"
    return outcome


def _action_phrase(raw_verb: str, verb: str, tail: str) -> str | None:
    """The verb with its particle, its preposition and its object, cut before the first
    other preposition ("ran a charity race for a children's hospital" → "ran a charity
    race"); ``None`` when there is no object or it is only a pronoun."""
    words = tail.split()
    kept = [raw_verb]
    i = 0
    if i < len(words) and words[i].casefold() in _PARTICLES:
        kept.append(words[i])
        i += 1
    if i < len(words) and words[i].casefold() in _VERB_PREPS.get(verb, frozenset()):
        kept.append(words[i])
        i += 1
    rest = " ".join(words[i:])
    obj = _cut(" " + rest, _ACTION_STOP)
    if not obj or obj.casefold() in _DID_NOT_OBJECT:
        return None
    first = obj.split()[0].casefold()
    if _PRONOUN_START.match(obj) and (len(obj.split()) == 1 or first not in _POSSESSIVES):
        return None
    if verb == "got" and not _GOT_OBJECT.match(obj):
        return None  # "got sick", "got lucky"
    obj_words = obj.split()
    if len(obj_words) > 6 or all(w.casefold() in _AMOUNT_WORDS for w in obj_words):
        return None  # "learned a lot", "raised a ton": how much, not what
    if verb in _TAKES_SOMEWHERE:  # "took the dog to the vet"
        where = _TO_PLACE.match(rest[len(obj) :])
        place = _cut(where.group("np"), _ACTION_STOP) if where else ""
        first_word = place.split()[0].casefold() if place else ""
        if (
            place
            and len(place.split()) <= 5
            and not _PRONOUN_START.match(place)
            and first_word not in _BASE_VERBS
        ):
            obj_words += ["to", *place.split()]
    return " ".join(kept + obj_words)


_POSSESSIVES = _set("her his their some one")


def _outing(tail: str) -> _Hit | None:
    """Where someone was taken, as a place visited or an event attended: "(took) my niece
    to the aquarium" → visited aquarium, "(took) the kids to a concert" → attended
    concert; ``None`` when the destination is neither ("to the vet")."""
    obj = _cut(" " + tail, _ACTION_STOP)
    if not obj or len(obj.split()) > 7:
        return None
    where = _TO_PLACE.match(tail.strip()[len(obj) :])
    if where is None:
        return None
    target = where.group("np").strip()
    if target[:1].isupper():
        place = _place(target)
        if place and place.split()[0] not in _NOT_PROPER and len(place.split()) <= 4:
            return _Hit("visited", place, entity="place", confidence=0.8, timing="past")
        return None
    found = _event_np(target)
    if found is None or _POSSESSIVE_START.match(target):
        return None
    bare, head = found
    if head in _EVENT_NOUNS:
        return _Hit("attended", bare, confidence=0.8, timing="past")
    if head in _PLACE_NOUNS and bare.casefold() not in _PLACE_NOUN_EXCLUDED:
        return _Hit("visited", bare, confidence=0.75, timing="past")
    return None

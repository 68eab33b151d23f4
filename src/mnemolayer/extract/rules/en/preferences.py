"""Rule handlers for preferences and pastimes: allergies, diets, food, likes and
dislikes, preferences, and hobbies ("took up pottery", "in my free time I paint").
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.en.lexicon import _HOBBY_NOUNS, _set
from mnemolayer.extract.rules.en.message import _Ctx, _Hit
from mnemolayer.extract.rules.en.phrases import (
    _ACTION_STOP,
    _DOT_END,
    _PREFER_SPLIT,
    _PRONOUN_START,
    _RATHER_SPLIT,
    _RATHER_VERB,
    _bare,
    _base,
    _cut,
    _gerund,
    _pref_objects,
)
from mnemolayer.extract.rules.en.subjects import _ADVERBS


def _h_allergic(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("allergic_to", o, confidence=0.95) for o in _pref_objects(m.group("o"))]


def _h_allergy(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    thing = _bare(m.group("o"))
    if not thing or _PRONOUN_START.match(thing) or len(thing.split()) > 3:
        return []
    return [_Hit("allergic_to", thing, confidence=0.9)]


def _h_diet(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    diet = " ".join(m.group("o").casefold().replace(" based", "-based").split())
    timing = (
        "past"
        if m.group(0).casefold().startswith(("went", "turned", "became", "switched"))
        else None
    )
    return [_Hit("diet", diet, confidence=0.9, timing=timing)]


_NOT_FOOD = _set(
    "out in well healthy healthier clean less more much late early alone together right "
    "properly slowly fast quickly like there here lunch dinner breakfast something anything "
    "whatever a lot too so when what"
)


def _foods(text: str) -> list[str]:
    """The foods or drinks ``text`` names ("coffee and tea"); none when it starts with a
    word that is no food ("out", "healthy", "lunch")."""
    first = text.strip().split()[:1]
    if first and first[0].casefold() in _NOT_FOOD:
        return []
    return _pref_objects(text)


def _h_eats(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("eats", o, confidence=0.85) for o in _foods(m.group("o"))]


def _h_gave_up(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """ "I quit coffee", "I've given up meat": a habit of eating or drinking ends (a job
    quit is :func:`~mnemolayer.extract.rules.en.identity._h_quit_job`, matched first)."""
    return [_Hit("eats", o, None, 0.8, "past", True) for o in _foods(m.group("o"))]


def _h_likes(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("likes", o, confidence=0.9) for o in _pref_objects(m.group("o"))]


def _h_fan(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A liking said as a kind of person: "I'm a huge Arsenal fan", "I'm a coffee lover"."""
    thing = _bare(m.group("o"))
    if not thing or _PRONOUN_START.match(thing) or thing.casefold() in _NOT_FANDOM:
        return []
    return [_Hit("likes", thing, confidence=0.85)]


#: What stands before "fan"/"lover" without naming what one likes ("a fellow fan").
_NOT_FANDOM = _set("fellow former new old fair-weather casual self-proclaimed")


def _h_dislikes(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("dislikes", o, confidence=0.9) for o in _pref_objects(m.group("o"))]


def _h_prefers(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    text = _PREFER_SPLIT.split(m.group("o"), maxsplit=1)[0]
    if text[:4].casefold() == "not ":
        return []
    objects = _pref_objects(text)
    return [_Hit("prefers", o, confidence=0.9) for o in objects[:1]]


def _h_took_up(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    np = _bare(_cut(m.group("o")))
    if not np or _PRONOUN_START.match(np) or len(np.split()) > 4:
        return []
    head = np.split()[0].casefold()
    if not (head.endswith("ing") or head in _HOBBY_NOUNS or np.casefold() in _HOBBY_NOUNS):
        return []
    started = m.group(0).casefold().split()[0] in ("started", "began") or " started " in (
        " " + m.group(0).casefold()
    )
    if started and head.endswith("ing") and not _is_pastime(head):
        return []  # "started looking into…", "started caring more": a start, not a hobby
    return [_Hit("hobby", np, confidence=0.85, timing="past")]


#: Hobby verbs too general to name a pastime after "started" ("started doing…").
_GENERAL_VERBS = _set(
    "do make study learn train watch practice practise program code explore travel"
)


def _is_pastime(gerund: str) -> bool:
    """Whether an "-ing" word names a pastime ("painting", "rock climbing" → climbing)."""
    low = gerund.casefold()
    if low in _HOBBY_NOUNS:
        return True
    base = _base(low)
    return base in _HOBBY_VERBS and base not in _GENERAL_VERBS


#: Verbs of pastimes: in a free-time clause they name a hobby ("I paint" → painting).
_HOBBY_VERBS = _set(
    """paint draw sketch knit sew crochet quilt embroider bake cook read write journal blog
    sing dance garden hike climb boulder swim surf run jog cycle bike fish hunt play practice
    practise watch listen build craft sculpt skate ski snowboard volunteer meditate code
    program study learn collect travel explore photograph train lift box ride sail kayak
    paddle row golf tinker brew camp skateboard make do""".replace("\n", " ")
)
_GO_DOING = re.compile(r"^go(?:es)?\s+(?P<a>(?:[a-z-]+\s+)?[a-z-]+ing)\b(?P<o>.*)", re.I)
_ACTIVITY_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+(?:also\s+)?", re.I)
#: "listen to music", "play with clay": prepositions a pastime keeps.
_HOBBY_PREPS = {"listen": "to", "play": "with", "volunteer": "at"}


def _free_time_hits(text: str) -> list[_Hit]:
    """The pastimes a free-time clause names ("in my spare time I paint" → painting; "…I
    usually go rock climbing or paint watercolors" → rock climbing, painting watercolors).
    ``text`` follows the subject."""
    hits: list[_Hit] = []
    for part in _ACTIVITY_SPLIT.split(_cut(text, _FREE_TIME_STOP)):
        activity = _activity(_ADVERBS.sub("", part.strip()))
        if activity is None:
            break
        hits.append(_Hit("hobby", activity, confidence=0.8))
    return hits


_FREE_TIME_STOP = re.compile(
    r"\s*(?:[;:!?()\"|]|" + _DOT_END + r"|\s-\s)|\s+(?:because|cause|since|but|so|when|while|"
    r"which|where|with\s+(?:my|our|a|the|friends|family)|to\s+(?:relax|unwind|de-?stress)|"
    r"and\s+(?:I|we|it|that|then))\b",
    re.I,
)


def _activity(part: str) -> str | None:
    """One pastime: "paint watercolors" → "painting watercolors", "go rock climbing" →
    "rock climbing", "knitting" → "knitting"; ``None`` when ``part`` names none."""
    going = _GO_DOING.match(part)
    if going:
        return going.group("a").casefold()
    words = part.split()
    if not words:
        return None
    verb = words[0].casefold()
    if verb.endswith("s") and not verb.endswith("ss") and verb[:-1] in _HOBBY_VERBS:
        verb = verb[:-1]
    if verb not in _HOBBY_VERBS:
        return None
    rest = words[1:]
    kept = [_gerund(verb)]
    if rest and rest[0].casefold() == _HOBBY_PREPS.get(verb):
        kept.append(rest.pop(0))
    obj = _cut(" " + " ".join(rest), _ACTION_STOP)
    if obj and _PRONOUN_START.match(obj):
        return None
    if verb in ("make", "do") and not obj:
        return None  # "I make", "I do": no pastime without its object
    if verb == "do":
        return _bare(obj)  # "I do woodworking" → woodworking
    return " ".join([*kept, obj]) if obj else " ".join(kept)


def _h_rather(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    text = _RATHER_SPLIT.split(m.group("o"), maxsplit=1)[0]
    text = _RATHER_VERB.sub("", text.strip())
    objects = _pref_objects(text)
    return [_Hit("prefers", objects[0], confidence=0.8)] if objects else []

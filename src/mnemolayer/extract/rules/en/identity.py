"""Rule handlers for identity, relationships and pets: age, name, nationality,
origin, home, relationship status, partners, children, relatives, pets, and the jobs
and partners one leaves.
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.en.lexicon import (
    _DEMONYMS,
    _KNOWN_PLACES,
    _LANGUAGES,
    _PET_KINDS,
    _PET_RE,
    _PET_SINGULAR,
    _RELATION_PLURALS,
    _RELATIONS,
    _alt,
    _number,
    _set,
)
from mnemolayer.extract.rules.en.message import _Ctx, _Handler, _Hit
from mnemolayer.extract.rules.en.phrases import (
    _ACTION_STOP,
    _APPOSITIVE_JOB,
    _COMMON_NP,
    _LANGUAGE_LEVEL,
    _LANGUAGES_INTRO,
    _MY_JOB_AT,
    _NP_STOP,
    _ORG_SUFFIX,
    _PET_ADJECTIVES,
    _PREPOSITION,
    _SPEAKS_STOP,
    _bare,
    _cut,
    _items,
    _leading_name,
    _name_ends,
    _names_list,
    _org,
    _place,
)
from mnemolayer.extract.rules.en.subjects import _is_name
from mnemolayer.extract.rules.en.text import _NAME_TOKEN
from mnemolayer.extract.rules.en.work import _job_hits, _project


def _h_age(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    years = _number(m.group("n"))
    if years is None or not 1 <= years <= 120:
        return []
    if not m.group("n")[:1].isdigit() and m.group(0)[:3].casefold() == "are":
        return []  # "we are three": how many, not how old
    return [_Hit("age", str(years), confidence=0.9)]


def _h_born(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A birthday from a birth date: "I was born on October 12th (1990)"."""
    if not ctx.clause.dates:
        return []
    day = ctx.msg.day_of_year(ctx.clause.dates[0])
    return [_Hit("birthday", day, confidence=0.85)] if day else []


def _h_age_to_be(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """The age someone turns: "Frank turns 70 next week", "she'll be six in June"."""
    return [_Hit(h.predicate, h.obj, confidence=0.8) for h in _h_age(m, ctx)]


def _h_name(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if not ctx.is_self:
        return []
    found = _leading_name(m.group("o"))
    if found is None or not _name_ends(found[1]):
        return []
    hits = [_Hit("name", found[0], confidence=0.9)]
    described = _APPOSITIVE_JOB.match(found[1])
    if described:  # "I'm Sophie, a nurse from Dublin"
        hits += _job_hits(described.group("job"), require_known=True)
    return hits


def _h_nationality(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("nationality", m.group("o"), confidence=0.85)]


def _h_from(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    place = _place(m.group("o"))
    return [_Hit("from", place, entity="place", confidence=0.9)] if place else []


def _h_lives(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    place = _place(m.group("o"))
    return [_Hit("lives_in", place, entity="place", confidence=0.9)] if place else []


def _h_moved(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    target = m.group("o")
    project = _project(target)
    if project:
        return [_Hit("works_on", project, entity="project", confidence=0.85, timing="past")]
    place = _place(target)
    if not place:
        return []
    return [_Hit("lives_in", place, entity="place", confidence=0.9, timing="past")]


def _h_moving(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    place = _place(m.group("o"))
    if not place:
        return []
    return [_Hit("plans", f"move to {place}", confidence=0.85, timing="future")]


def _h_moved_out(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    place = _place(m.group("o"))
    if not place:
        return []
    return [_Hit("lives_in", place, "place", 0.85, "past", negated=True, entity="place")]


def _h_speaks(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    text = _LANGUAGES_INTRO.sub("", m.group("o"))
    np = _cut(text, _SPEAKS_STOP)
    found = []
    for item in _items(np):
        word = _LANGUAGE_LEVEL.sub("", item)
        if word in _LANGUAGES:
            found.append(_Hit("speaks", word, confidence=0.9))
    return found


def _h_status(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("relationship_status", m.group("o").casefold(), confidence=0.9)]


def _h_got_status(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    status = m.group("o").casefold()
    hits = [_Hit("relationship_status", status, confidence=0.9, timing="past")]
    partner = _leading_name(m.group("p") or "")
    if partner:
        predicate = "partner" if status == "engaged" else "spouse"
        negated = status == "divorced"
        hits.append(_Hit(predicate, partner[0], "person", 0.85, negated=negated, entity="person"))
    return hits


def _h_partner(predicate: str, *, negated: bool = False) -> _Handler:
    def handler(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
        found = _leading_name(m.group("o"))
        if found is None:
            return []
        ctx.msg.person(found[0])
        return [_Hit(predicate, found[0], "person", 0.9, negated=negated, entity="person")]

    return handler


def _h_new_child(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    found = _leading_name(m.group("o"))
    if found is None:
        return []
    ctx.msg.person(found[0])
    return [_Hit("child", found[0], "person", 0.9, "past", entity="person")]


def _h_gender(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("gender", " ".join(m.group("o").casefold().split()), confidence=0.85)]


def _h_is_my_relative(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if ctx.is_self:
        return []
    word = " ".join(m.group("r").casefold().split())
    predicate = _RELATIONS.get(word)
    if predicate is None:
        return []
    return [
        _Hit(predicate, ctx.subject.name, "person", 0.9, subject=ctx.msg.speaker, entity="person")
    ]


def _h_is_my_pet(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    if ctx.is_self:
        return []
    single = _PET_SINGULAR[" ".join(m.group("p").casefold().split())]
    return [
        _Hit(
            "has_pet",
            ctx.subject.name,
            _PET_KINDS[single],
            0.9,
            subject=ctx.msg.speaker,
            entity="pet",
        )
    ]


def _h_has_relatives(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    word = " ".join(m.group("r").casefold().split())
    predicate = _RELATIONS.get(word) or _RELATION_PLURALS.get(word)
    if predicate is None:
        return []
    hits = []
    for name in _names_list(m.group("o")):
        ctx.msg.person(name)
        hits.append(_Hit(predicate, name, "person", 0.9, entity="person"))
    return hits


_PET_NP = re.compile(
    rf"^(?:(?:a|an|one|two|three|four|five|\d+|another|some|new|little|the)\s+)*"
    rf"(?:(?!(?:always|never|ever|just|been|wanted|had|seen|lost|really|also)\b)[\w-]+\s+){{0,3}}?"
    rf"(?P<pet>{_PET_RE})\b(?P<tail>.*)$",
    re.I,
)
#: "a dog named Max", "two cats, Luna and Milo", "a puppy called Coco".
_PET_NAMED = re.compile(
    rf"(?:^|\s)(?:(?:a|an|one|two|three|four|five|\d+|another|some|new|little)\s+)*"
    rf"(?:[\w-]+\s+){{0,3}}?(?P<pet>{_PET_RE})\s*(?:,\s*|:\s*|\s+(?:(?:who|that)\s+(?:is|are)\s+)?"
    rf"(?:named|called)\s+)(?P<names>{_NAME_TOKEN}(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*){_NAME_TOKEN})*)",
)
_PET_NAMED_LATER = re.compile(
    rf"(?:\b(?:named|called)\s+(?:him|her|it|them)\s+|\b(?:his|her|its|their)\s+names?\s+(?:is|are)\s+)"
    rf"(?P<names>{_NAME_TOKEN}(?:\s*(?:,\s*(?:and\s+)?|\s+and\s+){_NAME_TOKEN})*)"
)
#: What may follow an unnamed pet ("a dog", "three chickens in the backyard"); anything
#: else makes the animal a modifier ("a dog walker", "a cat allergy").
_PET_TAIL_OK = re.compile(
    r"^\s*(?:\||in|at|on|for|from|with|and|but|who|that|which|named|called|too|now|so|since|"
    r"because|as|of\s+(?:my|our)\s+own|back|home|last|this|recently|yesterday)\b",
    re.I,
)
_PAST_GETTING = _set("got gotten adopted rescued bought home in welcomed")


def _h_pet(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A pet: "I have a dog named Max" → has_pet Max (dog); "I have a golden retriever" →
    has_pet golden retriever; "we adopted a puppy" also → did "adopted a puppy"."""
    verb = m.group("v").casefold().split()[-1]
    text = m.group("o")
    timing = "past" if verb in _PAST_GETTING else None
    hits: list[_Hit] = []
    previous_end = 0
    for named in _PET_NAMED.finditer(text):
        gap = text[previous_end : named.start("pet")]
        if _NP_STOP.search(gap) or _PREPOSITION.search(gap):
            break  # "a picture of a dog named Max" is no pet of the speaker
        previous_end = named.end()
        kind = _PET_KINDS[_PET_SINGULAR[" ".join(named.group("pet").casefold().split())]]
        for name in _names_list(named.group("names")):
            if _is_name(name.split()[0]):
                ctx.msg.entity(name, "pet")
                hits.append(_Hit("has_pet", name, kind, 0.9, timing=timing, entity="pet"))
    if hits:
        return hits
    pet = _PET_NP.match(text)
    after = text[pet.end("pet") :] + " " + ctx.clause.following if pet else ""
    later = _PET_NAMED_LATER.search(after) if pet else None
    if pet and later:  # "we adopted a kitten on Saturday, her name is Luna"
        kind = _PET_KINDS[_PET_SINGULAR[" ".join(pet.group("pet").casefold().split())]]
        names = [n for n in _names_list(later.group("names")) if _is_name(n)]
        for name in names:
            ctx.msg.entity(name, "pet")
        return [_Hit("has_pet", n, kind, 0.85, timing=timing, entity="pet") for n in names]
    if pet is None:
        return []
    head_start = text[: pet.start("pet")]
    if _NP_STOP.search(head_start) or _PREPOSITION.search(head_start):
        return []  # "a picture of my dog", "a home for a cat"
    tail = pet.group("tail")
    if tail.strip() and not _NP_STOP.match(tail) and not _PET_TAIL_OK.match(tail):
        return []  # "a dog walker", "a cat allergy"
    single = _PET_SINGULAR[" ".join(pet.group("pet").casefold().split())]
    described = _bare(text[: pet.end("pet")])
    described = _PET_ADJECTIVES.sub("", described)
    words = described.split()
    obj = " ".join([*words[:-1], single.split()[-1]]) if words else single
    if " " in single and not described.casefold().endswith(single):
        obj = single
    hits = [_Hit("has_pet", obj, _PET_KINDS[single], 0.85, timing=timing)]
    if verb in ("adopted", "rescued"):
        phrase = _cut(text, _ACTION_STOP)
        hits.append(_Hit("did", f"{verb} {phrase}", confidence=0.7, timing="past"))
    return hits


def _h_quit_job(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    text = m.group("o").strip()
    job = _MY_JOB_AT.match(text)
    if job:
        org = _org(job.group("o"))
        place = _cut(job.group("o"))
        if org is None and _COMMON_NP.match(place) and len(place.split()) <= 4:
            org = _bare(place)  # "my job at the bank"
    elif m.group("v").casefold() == "lost":
        return []
    else:
        if m.group("v").casefold() in ("left", "quit") and not _ORG_SUFFIX.search(text):
            org = _org(text)
            if org and (org in _KNOWN_PLACES or any(w in _KNOWN_PLACES for w in org.split())):
                return []
        else:
            org = _org(text)
    if not org:
        return []
    return [
        _Hit("works_at", org, negated=True, entity="organization", confidence=0.85, timing="past")
    ]


def _h_broke_up(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    found = _leading_name(m.group("o"))
    if found is None:
        return []
    predicate = "spouse" if "divorc" in m.group("v").casefold() else "partner"
    return [_Hit(predicate, found[0], "person", 0.85, negated=True, entity="person")]


_DEMONYM_RE = _alt(_DEMONYMS)

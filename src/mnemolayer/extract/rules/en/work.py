"""Rule handlers for work and study: job titles, employers ("at a startup called
Lumen"), projects, responsibilities, schools and fields of study.
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.en.lexicon import _KNOWN_PLACES, _set
from mnemolayer.extract.rules.en.message import _Ctx, _Hit
from mnemolayer.extract.rules.en.phrases import (
    _AGE_PREFIX,
    _AND_A,
    _AS_ROLE,
    _AS_TITLE,
    _AT,
    _AT_FOR,
    _AT_IN,
    _AT_ORG,
    _AT_WITH_IN,
    _COMMON_NP,
    _EDU,
    _FIELD_STOP,
    _FROM_PLACE,
    _JOINED_SOMEONE,
    _LIST_STOP,
    _NP_STOP,
    _ORG_SUFFIX,
    _PROJECT_FIRST,
    _PROJECT_LAST,
    _PRONOUN_START,
    _PROPER_ORG,
    _SCHOOL_WORDS,
    _TITLE_STOP,
    _bare,
    _cut,
    _is_occupation,
    _org,
    _place,
    _proper,
)


def _job_hits(np_text: str, *, require_known: bool) -> list[_Hit]:
    """A job title and what follows it: "nurse at General Hospital" → job, works_at."""
    hits: list[_Hit] = []
    text = np_text.strip()
    age = _AGE_PREFIX.match(text)
    if age:
        hits.append(_Hit("age", str(int(age.group(1))), confidence=0.85))
        text = text[age.end() :]
    title = _bare(_cut(text, _TITLE_STOP))
    if not title or (require_known and not _is_occupation(title)):
        return []
    if _PRONOUN_START.match(title) or len(title.split()) > 5:
        return []
    hits.append(_Hit("job", title, confidence=0.9 if require_known else 0.85))
    tail = text[text.find(title) + len(title) :] if title in text else ""
    place = _AT_ORG.match(tail)
    if place:
        org = _employer(place.group("o"))
        if org and title.casefold().endswith("student"):
            school = place.group("o").strip()
            return [
                *(h for h in hits if h.predicate != "job"),
                _Hit("studies_at", org, entity="organization", confidence=0.9),
                *_field_after(school[school.find(org) + len(org) :]),
            ]
        if org:
            hits.append(_Hit("works_at", org, entity="organization", confidence=0.85))
    origin = _FROM_PLACE.match(tail)
    if origin:
        where = _place(origin.group("o"))
        if where:
            hits.append(_Hit("from", where, entity="place", confidence=0.85))
    return hits


def _h_job_as(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return _job_hits(m.group("o"), require_known=False)


def _h_job_is(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    for part in _AND_A.split(m.group("o")):
        hits = _job_hits(part, require_known=True)
        if hits:
            return hits
    return []


def _h_job_became(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [
        _Hit(h.predicate, h.obj, h.object_type, h.confidence, "past", entity=h.entity)
        for h in _job_hits(m.group("o"), require_known=True)
    ]


def _h_new_job(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    tail = m.group("o")
    as_title = _AS_TITLE.match(tail)
    if as_title:
        return [
            _Hit(h.predicate, h.obj, h.object_type, h.confidence, "past", entity=h.entity)
            for h in _job_hits(as_title.group("t"), require_known=False)
        ]
    at = _AT_WITH_IN.match(tail)
    org = _employer(at.group("o")) if at else None
    if org and org not in _KNOWN_PLACES:
        return [_Hit("works_at", org, entity="organization", confidence=0.85, timing="past")]
    if at is not None and not tail.lstrip().casefold().startswith("in"):
        return _employer_hits(at.group("o"))  # "a job at the bakery": a common noun
    return []


_CALLED = re.compile(r"^(?P<np>.+?)\s+(?:called|named)\s+(?P<name>[A-Z0-9].*)$")


def _employer(text: str) -> str | None:
    """An organisation at the start of ``text``, by its name ("Acme Corp") or introduced
    by what it is ("a startup called Lumen" → "Lumen")."""
    org = _org(text)
    if org is None:
        called = _CALLED.match(_cut(text, _LIST_STOP))
        words = called.group("np").split() if called else []
        if called and len(words) <= 5 and words[-1].casefold() in _EMPLOYER_NOUNS:
            org = _org(called.group("name"))
    return org


#: What a workplace introduced by its name is ("a startup called Lumen").
_EMPLOYER_NOUNS = _set(
    """startup start-up company firm agency business bakery restaurant cafe café bar studio
    lab shop store hospital clinic school bank nonprofit non-profit charity practice
    brewery winery hotel gym salon magazine newspaper publisher consultancy corporation
    organization organisation foundation university college academy factory brand label
    team outfit""".replace("\n", " ")
)


def _h_works_at(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """An employer: "I work at Google (as an engineer)", "…for a startup called
    Brightloop"."""
    return _employer_hits(m.group("o"))


def _employer_hits(target: str) -> list[_Hit]:
    """:func:`_h_works_at` of the text after "at" / "for": a named employer (and the role
    after "as"), else a short common noun phrase ("the bakery")."""
    org = _employer(target)
    if org:
        hits = [_Hit("works_at", org, entity="organization", confidence=0.9)]
        role = _AS_ROLE.search(target)
        if role:
            hits += [
                h for h in _job_hits(role.group("t"), require_known=False) if h.predicate == "job"
            ]
        return hits
    np = _cut(target)
    if _COMMON_NP.match(np) and not _PRONOUN_START.match(_bare(np)):
        bare = _bare(np)
        if bare and len(bare.split()) <= 4 and bare.casefold() not in ("moment", "same time"):
            return [_Hit("works_at", bare, confidence=0.7)]
    return []


def _h_started_as(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A new job and its employer: "I started as a librarian at the university library"."""
    hits = _employer_hits(m.group("o"))
    if not hits:
        return []
    return hits + [h for h in _job_hits(m.group("j"), require_known=False) if h.predicate == "job"]


def _h_joined(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    target = m.group("o")
    org = _employer(target)
    if not org or org in _KNOWN_PLACES:
        return []
    after = target.strip()[target.strip().find(org) + len(org) :]
    if " " not in org and not _ORG_SUFFIX.search(org) and _JOINED_SOMEONE.match(after):
        return []  # "joined Maria for lunch" names a person, not an employer
    predicate = "studies_at" if _EDU.search(org) else "works_at"
    return [_Hit(predicate, org, entity="organization", confidence=0.85, timing="past")]


def _project(text: str) -> str | None:
    """A project named at the start of ``text``: "project Orca", "the Orca project",
    "Kestrel"."""
    text = text.strip()
    m = _PROJECT_FIRST.match(text)
    if m:
        name = m.group("name").strip(".,!?;:")
        return name if name[:1].isalnum() else None
    m = _PROJECT_LAST.match(text)
    if m:
        return m.group("name")
    return None


def _h_works_on(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    target = m.group("o")
    project = _project(target) or _proper(target, _PROPER_ORG)
    if not project or project in _KNOWN_PLACES:
        return []
    return [_Hit("works_on", project, entity="project", confidence=0.9)]


def _h_reassigned(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    target = m.group("o")
    project = _project(target)
    verb = m.group("v").casefold()
    if project is None and "assign" in verb:
        project = _proper(target, _PROPER_ORG)
    if project is None and m.group("f") and _project(m.group("f")):
        project = _proper(target, _PROPER_ORG)
    if not project or project in _KNOWN_PLACES:
        return []
    return [_Hit("works_on", project, entity="project", confidence=0.85, timing="past")]


_ROLE_ANY_OBJECT = _set(
    "administer administers administered manage manages oversee oversees head heads "
    "supervise supervises coordinate coordinates chair chairs moderate moderates "
    "maintain maintains managing overseeing heading"
)
_ORG_UNITS = _set(
    """team teams company business shop store club department dept group org organization
    organisation lab project program programme school restaurant cafe bakery bar studio gym
    blog channel podcast nonprofit charity unit division office branch chapter committee
    board startup firm agency clinic practice band choir newsletter site website community
    server servers repo repository infrastructure platform pipeline budget account accounts
    network library""".replace("\n", " ")
)
_ROLE_NOT = _set(
    "time stress anxiety money expectations emotions feelings life diabetes pain schedule"
)


_ROLE_STOP = re.compile(r"\s+(?:at|for|in|with|on|from)\b|" + _NP_STOP.pattern, re.I)


def _h_role(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    verb = m.group("v").casefold().split()[-1]
    target = m.group("o")
    np = _cut(target, _ROLE_STOP)
    bare = _bare(np)
    if (
        not bare
        or _PRONOUN_START.match(bare)
        or len(bare.split()) > 6
        or bare[:3].casefold() == "to "
    ):
        return []
    head = bare.split()[-1].casefold()
    if head in _ROLE_NOT:
        return []
    if verb not in _ROLE_ANY_OBJECT and (head not in _ORG_UNITS or np == bare):
        return []  # "I run marathons", "I own a dog": not a responsibility
    hits = [_Hit("role", bare, confidence=0.85)]
    at = _AT_FOR.match(target.strip()[len(np) :])
    org = _org(at.group("o")) if at else None
    if org and org not in _KNOWN_PLACES:
        hits.append(_Hit("works_at", org, entity="organization", confidence=0.8))
    return hits


def _h_responsible(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    bare = _bare(_cut(m.group("o")))
    if not bare or _PRONOUN_START.match(bare) or len(bare.split()) > 6:
        return []
    return [_Hit("role", bare, confidence=0.85)]


def _h_studies_at(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A school: "I'm a student at McGill", with the field when it follows ("…, studying
    economics")."""
    target = m.group("o").strip()
    org = _org(target)
    if not org or org in _KNOWN_PLACES:
        return []
    at = target.find(org)
    return [
        _Hit("studies_at", org, entity="organization", confidence=0.9),
        *_field_after(target[at + len(org) :] if at >= 0 else ""),
    ]


def _field_after(tail: str) -> list[_Hit]:
    """The field of study that follows a school: "(McGill), studying chemistry"."""
    studying = _STUDYING_TAIL.match(tail)
    field_ = _bare(_cut(studying.group("f"), _FIELD_STOP)) if studying else ""
    if not field_ or len(field_.split()) > 4 or _PRONOUN_START.match(field_):
        return []
    return [_Hit("studies", field_, confidence=0.85)]


_STUDYING_TAIL = re.compile(
    r"^\s*,?\s*(?:and\s+|where\s+)?(?:(?:I|we|he|she)\s+(?:am\s+|is\s+)?)?(?:studying|study|studies|"
    r"majoring\s+in|major\s+in|doing\s+(?:a|my|her|his)\s+(?:degree|major|masters?|phd)\s+in)\s+(?P<f>.+)",
    re.I,
)


def _h_attends_school(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    org = _org(m.group("o"))
    if not org or not _EDU.search(org):
        return []
    return [_Hit("studies_at", org, entity="organization", confidence=0.85)]


def _h_school_start(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A school one started at: "started college at NYU", "enrolled at Stanford"."""
    org = _org(m.group("o"))
    if not org or org in _KNOWN_PLACES:
        return []
    if not (_EDU.search(org) or _SCHOOL_WORDS.search(m.group(0).casefold())):
        return []  # "started at Spotify" is a job, read by the next rules
    return [_Hit("studies_at", org, entity="organization", confidence=0.85, timing="past")]


def _h_studies(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    text = m.group("o")
    at = _AT_IN.match(text)
    if at:
        org = _org(at.group("o"))
        if org and (_EDU.search(org) or org not in _KNOWN_PLACES):
            return [_Hit("studies_at", org, entity="organization", confidence=0.9)]
        return []
    subject = _cut(text, _FIELD_STOP)
    subject = _bare(subject)
    if not subject or _PRONOUN_START.match(subject) or len(subject.split()) > 4:
        return []
    if subject.split()[0].casefold() in (
        "hard",
        "abroad",
        "a",
        "every",
        "online",
        "full-time",
        "part-time",
    ):
        return []
    hits = [_Hit("studies", subject, confidence=0.9)]
    rest = text[text.find(subject) + len(subject) :] if subject in text else ""
    at = _AT.match(rest)
    org = _org(at.group("o")) if at else None
    if org:
        hits.append(_Hit("studies_at", org, entity="organization", confidence=0.85))
    return hits


_NOT_FIELDS = frozenset(
    {"grad", "graduate", "college", "university", "phd", "high school", "first-year",
     "exchange", "international", "full-time", "part-time", "mature", "former", "new",
     "good", "bad", "straight-a", "a"}
)  # fmt: skip


def _h_student_of(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A field of study: "I'm a biology student (at Leeds)", with the school if named."""
    field_ = m.group("f").strip()
    if field_.casefold() in _NOT_FIELDS:
        return []  # "a grad student", "a good student": no field of study
    hits = [_Hit("studies", field_, confidence=0.85)]
    at = _AT.match(m.group("rest") or "")
    org = _org(at.group("o")) if at else None
    if org:
        hits.append(_Hit("studies_at", org, entity="organization", confidence=0.9))
    return hits

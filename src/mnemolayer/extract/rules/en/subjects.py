"""Subjects of the English rule extractor: who a clause is about ("I", a name, "my
sister Maria", "my neighbor Dana", "her husband Leo", "he"/"she"), and the relatives and
pets named anywhere in a clause ("…with my brother Tom", "Meet Ziggy, my new kitten").
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.en.lexicon import (
    _ACQ_RE,
    _ALSO_NAMES,
    _NUMBER_WORDS,
    _PET_KINDS,
    _PET_RE,
    _PET_SINGULAR,
    _REL_MODS,
    _REL_RE,
    _RELATION_PLURALS,
    _RELATIONS,
    _RELS_RE,
    _common_word,
    _number,
)
from mnemolayer.extract.rules.en.message import _Hit, _Message, _Subject
from mnemolayer.extract.rules.en.phrases import _NAME_WORD, _leading_name, _names_list
from mnemolayer.extract.rules.en.text import _NAME_TOKEN, _PERSON, _Clause
from mnemolayer.extract.rules.en.work import _job_hits

_LEAD = re.compile(
    r"^(?:\|+\s*|[a-z]+ly\b\s*,?\s*(?=(?:I|we|my|our)\b)|(?:oh|ah|aw|well|so|and|but|also|anyway|anyways|actually|honestly|btw|because|cause|cuz|"
    r"by\s+the\s+way|fun\s+fact|lol|lmao|haha\w*|hah|yeah|yes|yep|yup|ok|okay|hey|hi|hello|um+|"
    r"uh+|hmm+|guess\s+what|you\s+know\s+what|you\s+know|as\s+you\s+know|as\s+I\s+said|"
    r"as\s+I\s+mentioned|good\s+news|great\s+news|big\s+news|news|update|plus|besides|"
    r"luckily|sadly|unfortunately|fortunately|thankfully|basically|finally|recently|lately|"
    r"currently|nowadays|these\s+days|at\s+the\s+moment|right\s+now|now|then|just\s+so\s+you\s+know|"
    r"earlier|personally|for\s+the\s+record|as\s+for\s+me|speaking\s+of\s+which|anyhow|wow|omg|"
    r"ugh|yay|phew|alright|all\s+right|in\s+fact|also|meanwhile|still|and\s+now|but\s+now|"
    r"so\s+yeah|long\s+story\s+short|to\s+be\s+honest|tbh|ngl|fyi|ps|p\.s|(?:it\s+)?turns\s+out|"
    r"apparently|quick\s+update|random\s+fact|side\s+note|oh\s+and|also\s+fun\s+fact|"
    r"big\s+day|exciting\s+news|sad\s+news|believe\s+it\s+or\s+not|for\s+what\s+it'?s\s+worth)\b[\s,:!.-]*)",
    re.I,
)
_SELF_SUBJECT = re.compile(
    rf"^(?:I|we|We|(?:my|our|My|Our)\s+{_REL_MODS}(?P<rel>{_REL_RE})(?:\s*,?\s+(?P<relname>{_NAME_TOKEN}),?)?"
    rf"\s+and\s+I|{_NAME_TOKEN}\s+and\s+I|[Mm]e\s+and\s+(?:(?i:my|our)\s+{_REL_MODS}(?P<merel>{_REL_RE})(?:\s*,?\s+(?P<mename>{_NAME_TOKEN}),?)?|(?:my\s+)?\w+)|"
    rf"(?:my|our|My|Our)\s+(?:family|wife|husband|partner|kids|friends|team)\s+and\s+I|"
    rf"[Bb]oth\s+of\s+us|[Tt]he\s+two\s+of\s+us)\b",
)
#: "6-year-old", "five year old" before a relation word ("my 6-year-old daughter Mia").
_AGE_MOD = rf"(?:(?P<age>\d{{1,2}}|{_NUMBER_WORDS})[- ](?:year|yr)s?[- ]old\s+)?"
_NAMED_RELATIVE = re.compile(
    rf"^(?i:my|our)\s+{_REL_MODS}{_AGE_MOD}{_REL_MODS}(?P<rel>{_REL_RE})\s*,?\s+(?P<name>{_PERSON}(?:\s+{_NAME_TOKEN})?)(?:\s*,?\s+|\s*,?\s*$)",
)
_NAMED_PET = re.compile(
    rf"^(?i:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<pet>{_PET_RE})\s*,?\s+(?P<name>{_NAME_TOKEN})\s*,?\s+",
)
_OWNER_RELATIVE = re.compile(
    rf"^(?P<owner>{_NAME_TOKEN})'s\s+{_REL_MODS}(?P<rel>{_REL_RE})\s*,?\s+(?P<name>{_NAME_TOKEN})\s*,?\s+",
)
#: "her husband Leo": a relative of the person named before.
_THEIR_RELATIVE = re.compile(
    rf"^(?:his|her|His|Her)\s+{_REL_MODS}(?P<rel>{_REL_RE})\s*,?\s+(?P<name>{_NAME_TOKEN})(?:\s*,?\s+|\s*,?\s*$)"
)
_FRIEND_OF_MINE_SUBJECT = re.compile(
    rf"^(?i:a)\s+(?i:good\s+|close\s+|old\s+)?(?i:friend)\s+(?i:of)\s+(?i:mine|ours)\s*,?\s+"
    rf"(?:(?i:named|called)\s+)?(?P<name>{_NAME_TOKEN})\s*,?\s+"
)
_APPOSITIVE = re.compile(rf"^,\s*(?i:my|our)\s+{_REL_MODS}(?P<rel>{_REL_RE})\s*,\s*")
#: Any other short description between commas after a name: "Ravi, my roommate, …",
#: "Sarah, a nurse from Leeds, …".
_APPOSITIVE_OTHER = re.compile(r"^,\s*(?P<np>(?i:my|our|a|an|the)\s+[^,|]{1,40}?)\s*(?:,\s*|$)")
#: What may stand between a name and its verb: where the person is from ("Priya from my
#: running club is…"), who is with them ("Marco and his wife got…").
_NAME_MODIFIER = re.compile(
    rf"^\s+(?:from\s+(?:(?:my|our|the)\s+)?[a-z][\w-]*(?:\s+[a-z][\w-]*){{0,3}}?"
    rf"|and\s+(?:his|her|their)\s+{_REL_MODS}{_REL_RE})"
    r"(?=\s+(?:is|was|has|had|works|lives|just|also|recently|moved|got|loves|likes|hates|studies|"
    r"speaks|turned|turns|adopted|bought)\b)"
)
#: A person or pet named after someone unnamed: "my friend's wife Priya", "my brother's
#: dog Olive"; the name is the subject, and no relation can be stated.
_SOMEONES_NAMED = re.compile(
    rf"^(?i:my|our)\s+{_REL_MODS}(?:{_REL_RE}|{_ACQ_RE})'s\s+{_REL_MODS}"
    rf"(?:{_REL_RE}|{_ACQ_RE}|(?:[\w-]+\s+)?(?P<pet>{_PET_RE}))\s*,?\s+(?P<name>{_NAME_TOKEN})\s*,?\s+"
)
_NAMED_ACQUAINTANCE = re.compile(
    rf"^(?i:my|our)\s+{_REL_MODS}{_ACQ_RE}\s*,?\s+(?P<name>{_PERSON})(?:\s*,?\s+|\s*,?\s*$)"
)
_OWNER_PET_SUBJECT = re.compile(
    rf"^(?P<owner>{_NAME_TOKEN})'s\s+(?:[\w-]+\s+){{0,2}}?(?P<pet>{_PET_RE})\s*,?\s+(?P<name>{_NAME_TOKEN})\s*,?\s+"
)
_PRONOUN_SUBJECT = re.compile(r"^(?:he|she|He|She)\s+")
_ADVERBS = re.compile(
    r"^(?:(?:really|also|still|just|currently|now|actually|absolutely|totally|definitely|"
    r"truly|honestly|recently|finally|already|usually|always|mostly|generally|kind\s+of|"
    r"sort\s+of|pretty\s+much|even|only|both|all|originally|officially|genuinely|seriously|"
    r"literally|certainly|basically|simply|deeply|particularly|especially|so|too|happily|"
    r"proudly|secretly|sometimes|often|then|personally|presently|newly|soon|apparently|"
    r"reportedly|eventually|\|)\s+)+",
    re.I,
)


_TITLE_PREFIX = re.compile(r"^(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+")
#: A verb without the "-s" of a third person after a capitalised word: that word is no
#: one's name ("Sounds like fun", "Looks like rain", "Unconditional love is…").
_PLURAL_VERB_NEXT = re.compile(
    r"^\s+(?:(?:really|just|also|still|always|never|usually|often|totally|definitely)\s+)*"
    r"(?:like|love|enjoy|hate|live|work|have|want|need|hope|think|feel|look|sound|seem|make|"
    r"take|go|do|get|see|know|eat|speak|study|prefer|plan|own|adore|play|teach|manage|lead|"
    r"come|say|tell|bring|give|keep|let|remind|mean|help|show|are|were)\b"
)


def _strip_lead(text: str) -> str:
    """``text`` without the fillers, greetings and time words it opens with."""
    while True:
        m = _LEAD.match(text)
        if not m or not m.group():
            return text
        text = text[m.end() :]


def _is_name(word: str) -> bool:
    word = _TITLE_PREFIX.sub("", word)
    low = word.casefold()
    return (
        _NAME_WORD.fullmatch(word) is not None
        and not _common_word(word)
        and (low not in _RELATIONS or low in _ALSO_NAMES)
        and (low not in _PET_SINGULAR or low in _ALSO_NAMES)
    )


def _subject(msg: _Message, clause: _Clause, text: str) -> tuple[_Subject, str] | None:
    """The clause's subject and the text after it, or ``None`` when the clause starts
    with no subject this extractor trusts. Named relatives and pets found here are
    recorded as facts of the speaker."""
    me = _Subject(msg.speaker, "self")
    m = _SELF_SUBJECT.match(text)
    if m:
        if m.group("rel") and m.group("relname") and _is_name(m.group("relname")):
            _relation(msg, clause, msg.speaker, m.group("rel"), m.group("relname"))
        if m.group("merel") and m.group("mename") and _is_name(m.group("mename")):
            _relation(msg, clause, msg.speaker, m.group("merel"), m.group("mename"))
        return me, text[m.end() :]
    m = _NAMED_RELATIVE.match(text)
    if m and _is_name(m.group("name").split()[0]):
        name = _clean_name(m.group("name"))
        _relation(msg, clause, msg.speaker, m.group("rel"), name)
        _age_of(msg, clause, name, m.group("age"))
        return _Subject(name, "person"), text[m.end() :]
    m = _THEIR_RELATIVE.match(text)
    if m and msg.last_person is not None and _is_name(m.group("name")):
        owner = msg.last_person
        _relation(msg, clause, owner, m.group("rel"), m.group("name"))
        return _Subject(m.group("name"), "person"), text[m.end() :]
    m = _FRIEND_OF_MINE_SUBJECT.match(text)
    if m and _is_name(m.group("name")):
        _relation(msg, clause, msg.speaker, "friend", m.group("name"))
        return _Subject(m.group("name"), "person"), text[m.end() :]
    m = _NAMED_PET.match(text)
    if m and _is_name(m.group("name")):
        _pet(msg, clause, msg.speaker, m.group("pet"), m.group("name"))
        return _Subject(m.group("name"), "pet"), text[m.end() :]
    m = _OWNER_RELATIVE.match(text)
    if m and _is_name(m.group("owner")) and _is_name(m.group("name")):
        msg.person(m.group("owner"))
        _relation(msg, clause, m.group("owner"), m.group("rel"), m.group("name"))
        return _Subject(m.group("name"), "person"), text[m.end() :]
    m = _OWNER_PET_SUBJECT.match(text)
    if m and _is_name(m.group("owner")) and _is_name(m.group("name")):
        msg.person(m.group("owner"))
        _pet(msg, clause, m.group("owner"), m.group("pet"), m.group("name"))
        return _Subject(m.group("name"), "pet"), text[m.end() :]
    m = _SOMEONES_NAMED.match(text)
    if m and _is_name(m.group("name")):
        if m.group("pet"):
            msg.entity(m.group("name"), "pet")
            return _Subject(m.group("name"), "pet"), text[m.end() :]
        msg.person(m.group("name"))
        return _Subject(m.group("name"), "person"), text[m.end() :]
    m = _NAMED_ACQUAINTANCE.match(text)
    if m and _is_name(m.group("name").split()[0]):
        name = _clean_name(m.group("name"))
        msg.person(name)
        return _Subject(name, "person"), text[m.end() :]
    m = _PRONOUN_SUBJECT.match(text)
    if m:
        if msg.last_person is None:
            return None
        return _Subject(msg.last_person, "person", 0.8), text[m.end() :]
    if clause.first and _PRO_DROP.match(text):
        return None  # "Bought a new guitar today!": the "I" is dropped, "Bought" is no name
    found = _leading_name(text)
    if found is None:
        return None
    name, rest = found
    if _PLURAL_VERB_NEXT.match(rest):
        return None  # "Sounds like fun", "Unconditional love is…": no name and its verb
    rest = _NAME_MODIFIER.sub("", rest, count=1)  # "Priya from my book club is…"
    msg.person(name)
    appositive = _APPOSITIVE.match(rest)
    described = _APPOSITIVE_OTHER.match(rest)
    if appositive:
        _relation(msg, clause, msg.speaker, appositive.group("rel"), name)
        rest = rest[appositive.end() :]
    elif described:  # "Sarah, a nurse from Leeds, lives in York"
        for hit in _job_hits(described.group("np"), require_known=True):
            if described.group("np")[:1].casefold() == "a":
                msg.add(name, hit, clause)
        rest = rest[described.end() :]
    elif not rest.startswith(" "):
        return None
    return _Subject(name, "person"), rest


def _age_of(msg: _Message, clause: _Clause, name: str, age: str | None) -> None:
    """The age given before a relation word ("my 6-year-old daughter Mia") as a fact."""
    years = _number(age) if age else None
    if years is not None and 0 < years <= 120:
        msg.add(name, _Hit("age", str(years), confidence=0.85), clause)


def _clean_name(name: str) -> str:
    tokens = name.split()
    first = 2 if _TITLE_PREFIX.match(name) else 1
    if len(tokens) > first and not _is_name(tokens[first]):
        tokens = tokens[:first]
    return " ".join(tokens)


def _relation(msg: _Message, clause: _Clause, owner: str, word: str, name: str) -> None:
    predicate = _RELATIONS.get(" ".join(word.casefold().split())) or _RELATION_PLURALS.get(
        word.casefold()
    )
    if predicate is None or not _is_name(name):
        return
    msg.person(name)
    msg.add(owner, _Hit(predicate, name, object_type="person", confidence=0.9), clause)


def _pet(msg: _Message, clause: _Clause, owner: str, word: str, name: str) -> None:
    single = _PET_SINGULAR.get(" ".join(word.casefold().split()))
    if single is None:
        return
    kind = _PET_KINDS[single]
    msg.entity(name, "pet")
    msg.add(owner, _Hit("has_pet", name, object_type=kind, confidence=0.9), clause)


_ANY_RELATIVE = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+{_REL_MODS}{_AGE_MOD}{_REL_MODS}(?P<rel>{_REL_RE})\s*,?\s+(?P<name>{_PERSON})\b(?!'(?!s\b))",
)
_ANY_RELATIVES = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+{_REL_MODS}(?P<rel>{_RELS_RE})\s*,?\s+(?:are\s+)?(?:named\s+|called\s+)?"
    rf"(?P<names>{_NAME_TOKEN}(?:\s*,\s*{_NAME_TOKEN})*\s*,?\s+(?:and|&)\s+{_NAME_TOKEN})",
)
_ANY_ACQUAINTANCE = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+{_REL_MODS}{_ACQ_RE}\s*,?\s+(?P<name>{_NAME_TOKEN})\b(?!'(?!s\b))"
)
_RELATIVE_CALLED = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+{_REL_MODS}(?P<rel>{_REL_RE})(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+(?P<name>{_NAME_TOKEN})",
)
_FRIEND_OF_MINE = re.compile(
    rf"\b(?i:a)\s+(?:good\s+|close\s+|old\s+)?friend\s+of\s+(?:mine|ours)\s*,?\s+(?:named\s+|called\s+)?(?P<name>{_NAME_TOKEN})"
)
_NAME_MY_PET = re.compile(
    rf"(?<![\w'])(?P<name>{_NAME_TOKEN}),\s+(?i:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<pet>{_PET_RE})\b(?!\s+(?:is|was)\b)",
)
_ANY_OWNER_PET = re.compile(
    rf"(?<![\w'])(?P<owner>{_NAME_TOKEN})'s\s+(?:[\w-]+\s+){{0,2}}?(?P<pet>{_PET_RE})"
    rf"(?:\s*,?\s+|'s\s+name\s+is\s+|\s+is\s+(?:called|named)\s+)(?P<name>{_NAME_TOKEN})\b(?!'(?!s\b))",
)
_ANY_PET = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<pet>{_PET_RE})\s*,?\s+(?P<name>{_NAME_TOKEN})\b(?!')",
)
_PET_CALLED = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<pet>{_PET_RE})(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+(?P<name>{_NAME_TOKEN})",
)
_HAS_RELATION_WORD = re.compile(r"\b(?:my|our|mine|ours)\b|'s\b", re.I)


def _named_anywhere(msg: _Message, clause: _Clause) -> None:
    """Relatives and pets named anywhere in a clause: "with my brother Tom", "a friend of
    mine, Anna", "our cat Luna", "my sister's name is Maria"."""
    text = clause.text
    if not _HAS_RELATION_WORD.search(text):
        return
    for pattern in (_ANY_RELATIVE, _RELATIVE_CALLED):
        for m in pattern.finditer(text):
            if _is_name(m.group("name")) and not _capitalised_at_random(m):
                _relation(msg, clause, msg.speaker, m.group("rel"), m.group("name"))
                _age_of(msg, clause, m.group("name"), m.groupdict().get("age"))
    for m in _ANY_ACQUAINTANCE.finditer(text):
        if _is_name(m.group("name")):
            msg.person(m.group("name"))  # "I met my neighbor Ruth. She's 82."
    for m in _ANY_RELATIVES.finditer(text):
        for name in _names_list(m.group("names")):
            _relation(msg, clause, msg.speaker, m.group("rel"), name)
    for m in _FRIEND_OF_MINE.finditer(text):
        if _is_name(m.group("name")):
            _relation(msg, clause, msg.speaker, "friend", m.group("name"))
    for pattern in (_ANY_PET, _PET_CALLED):
        for m in pattern.finditer(text):
            if _is_name(m.group("name")) and not _capitalised_at_random(m):
                _pet(msg, clause, msg.speaker, m.group("pet"), m.group("name"))
    for m in _ANY_OWNER_PET.finditer(text):
        if _is_name(m.group("owner")) and _is_name(m.group("name")):
            msg.person(m.group("owner"))
            _pet(msg, clause, m.group("owner"), m.group("pet"), m.group("name"))


def _capitalised_at_random(m: re.Match[str]) -> bool:
    """True when the relation word is capitalised mid-sentence ("my Mom Said"): such text
    capitalises words at random, so its names cannot be trusted."""
    word = m.group("rel") if "rel" in m.re.groupindex else m.group("pet")
    return word[:1].isupper() and m.start() > 0


_PRO_DROP = re.compile(
    r"^(?:(?:just|finally|recently|officially)\s+)?(?:[a-z]{3,}ed|been\s+[a-z]+ing|got|went|ran|took|made|began|"
    r"joined|quit|left|bought|won|met|broke|found|built|wrote|flew|spent|saw|sold|tried)\b"
    r"(?!\s+(?:to\s+say|you|u|that|it|this)\b)",
    re.I,
)

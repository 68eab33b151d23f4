"""Phrases of the English rule extractor: where an object ends, and what makes a
place, an organisation, a list, a plan's verb phrase, a job title or a person's name.

These functions take text and return text (or ``None`` when the text holds no clean
phrase of the kind asked for); they know nothing of the message being read.
:func:`_clean_phrase` is the last check of every phrase object before it is kept.
"""

from __future__ import annotations

import re

from mnemolayer.extract.rules.en.lexicon import (
    _ALSO_NAMES,
    _BASE_GERUND,
    _BASE_VERBS,
    _CHAT_OBJECTS,
    _CHAT_PHRASE,
    _CHAT_VERBS,
    _COMPOUNDS,
    _DEMONYMS,
    _GERUND_BASE,
    _GOT_PARTICIPLES,
    _KNOWN_PLACES,
    _LANGUAGES,
    _LONE_PLAN_VERBS,
    _NOT_OCCUPATION,
    _NOT_PROPER,
    _OCCUPATION_PHRASES,
    _OCCUPATION_SUFFIX,
    _OCCUPATIONS,
    _PARTICLES,
    _PET_SINGULAR,
    _PLACE_NOUNS,
    _RELATION_PLURALS,
    _RELATIONS,
    _TO_NOUNS,
    _common_word,
    _set,
)
from mnemolayer.extract.rules.en.text import _NAME_TOKEN

#: A full stop that ends a phrase (not the one of "Dr. Smith", "St. Louis").
_DOT_END = r"(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bSt)(?<!\bMt)(?<!\bMrs)(?<!\bProf)\.(?:\s|$)"
#: Words that end a noun-phrase object.
_NP_STOP_WORDS = (
    r"\s+(?:because|cause|cuz|since|but|so|although|though|tho|while|whereas|when|whenever|"
    r"where|which|who|whom|whose|that|if|unless|until|till|after|before|as|especially|except|"
    r"than|lol|lmao|haha\w*|and\s+(?:I|we|my|it|that|then|also|he|she|they|you|so|now|this)|"
    r"then|now|right\s+now|these\s+days|nowadays|lately|recently|at\s+the\s+moment|"
    r"a\s+lot|a\s+bunch|so\s+much|very\s+much|too\s+much|too|either|as\s+well|"
    r"all\s+the\s+time|at\s+all|most\s+of\s+all|more\s+than|with\s+(?:my|our|a|an|the|some|"
    r"friends|family|him|her|them|me|us|people|his|their)|to\s+be\s+honest|honestly|actually|"
    r"really|again|already|yet|ever|myself|personally|I\s+think|I\s+guess|I\s+mean|you\s+know|"
    r"at\s+(?:night|home|work)|in\s+the\s+(?:morning|evening|afternoon|summer|winter)|"
    r"in\s+general|overall|and\s+stuff|and\s+all|or\s+something|or\s+so|etc|for\s+(?:my|our|his|"
    r"her|their|people|others|friends|family|me|work|"
    r"fun|a\s+living|life|sure)|by\s+(?:trade|profession)|full[- ]time|part[- ]time|"
    r"though|instead|together|like|such\s+as|sometimes|often|usually|occasionally|"
    r"regularly|daily|weekly|always|rarely|mostly|anyway|lately|still)\b"
)
#: Where a noun-phrase object ends.
_NP_STOP = re.compile(r"\s*(?:[,;:!?()\"|]|" + _DOT_END + r"|\s-\s)|" + _NP_STOP_WORDS, re.I)
#: Where a list of noun phrases ends: as :data:`_NP_STOP`, but a comma only ends it before
#: a new clause ("hiking, jazz and sushi" is one list; "hiking, which…" is not).
_LIST_STOP = re.compile(
    r"\s*(?:[;:!?()\"|]|" + _DOT_END + r"|\s-\s)"
    r"|\s*,\s*(?=(?:the|his|her|their|this|that)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are|was|were|has|had|[a-z]+ed)\b)"
    r"|\s*,\s*(?=(?:which|who|that|because|but|so|especially|though|it|I|they|we|he|she|you|and\s+I|since|when|"
    r"if|as|even|mostly|particularly|not|no|too|also|although|plus|lol|haha\w*)\b)|"
    + _NP_STOP_WORDS,
    re.I,
)
#: Where a verb-phrase object (a plan, a goal) ends.
_VP_STOP = re.compile(
    r"\s*(?:[,;:!?()\"|]|" + _DOT_END + r"|\s-\s)|(?<!\bin)(?<!\bout)(?<!\bup)(?<!\btogether)"
    r"\s+with\s+(?:my|our|some|a\s+few|friends|family|him|her|them|the\s+kids)\b"
    r"|\s+(?:because|cause|cuz|since|but|so\s+that|so|although|though|while|whereas|when|"
    r"whenever|where|which|if|unless|until|till|after|before|once|as\s+soon\s+as|"
    r"and\s+(?:I|we|then|also|maybe|hopefully|it|that)|then|or|lol|lmao|haha\w*|hopefully|"
    r"maybe|at\s+some\s+point|in\s+the\s+future|I\s+think|I\s+guess|I\s+hope|I\s+mean|you\s+know|"
    r"for\s+(?:sure|real|fun|once)|again|too|already|now|right\s+now|finally|eventually|"
    r"to\s+be\s+honest|honestly|actually)\b",
    re.I,
)
#: The object of an action verb ends at the first preposition too.
_ACTION_STOP = re.compile(
    r"\s*(?:[,;:!?()\"|]|" + _DOT_END + r"|\s-\s)"
    r"|\s+(?:for|with|at|in|on|to|from|during|after|before|about|around|near|by|over|through|"
    r"into|across|because|cause|since|while|when|and|but|so|or|that|which|who|where|then|"
    r"again|finally|together|too|also|just|really|yesterday|today|last|this|lol|haha\w*|"
    r"as|like|without|instead|alone)\b",
    re.I,
)
_LEADING_DET = re.compile(
    r"^(?:(?:a|an|the|some|my|our|his|her|their|your|its|this|that|these|those)\s+)+", re.I
)
_PRONOUN_START = re.compile(
    r"^(?![A-Z]{2,}\b)(?i:it|that|this|these|those|them|you|ya|him|her|us|me|everything|everyone|everybody|"
    r"anything|anyone|nothing|something|someone|somebody|myself|yourself|yourselves|what|how|"
    r"when|where|why|who|whatever|whoever|the\s+fact|the\s+idea|the\s+way|your|ur|one|ones|"
    r"all\s+of\s+(?:it|them)|both\s+of\s+them|so|such|too|very|more|less|much|not|no|any|"
    r"they|we|he|she|I)\b",
)
_POSSESSIVE_START = re.compile(r"^(?:my|our|your|his|her|their)\s", re.I)
_LIST_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+|&\s+)?|\s+(?:and|or|&|as\s+well\s+as|plus)\s+")
_PROPER_TOKEN = r"(?:(?:St|Mt|Ft)\.\s+)?(?!I\b)[A-Z\u00C0-\u00DE][\w'&.-]*(?<!\.)"
_PROPER_PLACE = re.compile(
    rf"^(?:[Tt]he\s+)?(?P<np>{_PROPER_TOKEN}(?:\s+(?:(?:of|de|da|do|dos|das|del|della|di|du|"
    rf"des|la|le|los|las|upon|on|am|en|sur)\s+)?{_PROPER_TOKEN})*)"
)
_PROPER_ORG = re.compile(
    rf"^(?:[Tt]he\s+)?(?P<np>(?:{_PROPER_TOKEN}|\d[\w-]*[A-Za-z][\w-]*)(?:\s+(?:(?:of|de|for|"
    rf"and|&|at|on|in|the)\s+)?(?:{_PROPER_TOKEN}|&|\d+))*)"
)
_IN_PLACE = re.compile(
    r"^(?:an?|the|this|that|our|my)\s+(?:[\w'-]+\s+){0,4}?in\s+(?P<rest>.+)$", re.I
)
_ORG_SUFFIX = re.compile(
    r"\b(?:Inc|Corp|Corporation|Ltd|LLC|Labs?|Technologies|Tech|Group|Bank|Company|Co|"
    r"University|College|Institute|School|Hospital|Clinic|Foundation|Agency|Studios?|"
    r"Systems|Solutions|Partners|Consulting|Capital|Media|Games|Software|Health)\b"
)
_EDU = re.compile(r"\b(?:University|College|Institute|School|Academy|Polytechnic|Uni)\b|\bU\b")
# Small patterns the functions below use (compiled once, here).
_BOTH = re.compile(r"^both\s+", re.I)
_CONJUNCTION = re.compile(r"\s(?:and|or|&)\s")
_YOU = re.compile(r"\b(?:you|your|ya)\b", re.I)
_LOWER_START = re.compile(r"^[a-z]")
_ATE_STEM = re.compile(r"[^eo]at$")
_DOUBLED = re.compile(r"[^aeiou]*[aeiou][bdgklmnprt]")
_NAME_RUN = re.compile(rf"({_NAME_TOKEN}(?:\s+{_NAME_TOKEN}){{0,2}})")
_NAME_WORD = re.compile(_NAME_TOKEN)
_NAME_SEPARATOR = re.compile(r"^\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)")
_NAME_END = re.compile(
    r"^\s*(?:$|[,!.|]|(?:and|but|by\s+the\s+way|btw|from|here|nice|too)\b)", re.I
)
_APPOSITIVE_JOB = re.compile(r"^\s*,\s*(?:an?\s+)(?P<job>.+)")
_AGE_PREFIX = re.compile(r"^(\d{1,3})[- ]year[- ]old\s+", re.I)
_AT_ORG = re.compile(r"^\s+(?:at|for|with)\s+(?P<o>.+)", re.I)
_FROM_PLACE = re.compile(r"^\s+from\s+(?P<o>.+)", re.I)
_AND_A = re.compile(r"\s+and\s+(?:also\s+)?(?:an?\s+)", re.I)
_AS_TITLE = re.compile(r"^as\s+(?:an?\s+|the\s+)?(?P<t>.+)", re.I)
_AS_ROLE = re.compile(r"\bas\s+(?:an?\s+|the\s+)?(?P<t>.+)$", re.I)
_AT_WITH_IN = re.compile(r"^(?:at|with|in)\s+(?P<o>.+)", re.I)
_AT_FOR = re.compile(r"^\s*(?:at|for)\s+(?P<o>.+)", re.I)
_AT_IN = re.compile(r"^(?:at|in)\s+(?P<o>.+)", re.I)
_AT = re.compile(r"^\s*at\s+(?P<o>.+)", re.I)
_COMMON_NP = re.compile(r"^(?:an?|the)\s+[a-z]")
_JOINED_SOMEONE = re.compile(r"^\s+(?:for|with|and|on|to)\b")
_PROJECT_FIRST = re.compile(r"^(?:the\s+)?project\s+(?P<name>\S+)", re.I)
_PROJECT_LAST = re.compile(
    r"^(?:the\s+)?(?P<name>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+(?:project|team)\b"
)
_SCHOOL_WORDS = re.compile(
    r"college|school|universit|uni\b|degree|program|phd|master|course|kindergarten"
)
_LANGUAGES_INTRO = re.compile(r"^(?:\w+\s+)?languages?\s*(?::|,|-)?\s*(?:namely\s+)?", re.I)
_LANGUAGE_LEVEL = re.compile(
    r"^(?:a\s+(?:bit|little)\s+of|some|basic|fluent|conversational)\s+", re.I
)
_SPEAKS_STOP = re.compile(
    r"\s+(?:fluently|well|a\s+little|at\s+home)\b|" + _LIST_STOP.pattern, re.I
)
_TITLE_STOP = re.compile(
    r"\s+(?:at|for|in|from|with|on|and|who|but|since)\b|" + _NP_STOP.pattern, re.I
)
_FIELD_STOP = re.compile(r"\s+(?:at|in|for|with|and\s+I)\b|" + _NP_STOP.pattern, re.I)
_PREPOSITION = re.compile(r"\b(?:of|for|with|to|at|in|from|about)\s", re.I)
_PET_ADJECTIVES = re.compile(
    r"^(?:(?:one|two|three|four|five|\d+|another|new|little|cute|adorable|sweet|lovely|few|several|"
    r"many|some|couple\s+of|"
    r"beautiful|tiny|young|second|first|very|super|really)\s+)+",
    re.I,
)
_PREFER_SPLIT = re.compile(r"\s+(?:over|to|rather\s+than|than|instead\s+of|more\s+than)\s+", re.I)
_RATHER_SPLIT = re.compile(r"\s+(?:than|over|instead\s+of)\s+", re.I)
_RATHER_VERB = re.compile(
    r"^(?:have|eat|drink|do|go\s+for|take|use|get|watch|listen\s+to|read|play)\s+", re.I
)
_DESTINATION_START = re.compile(r"^(?:[A-Z]|the\s+|a\s+|an\s+|my\s+|our\s+)")
_BE_DOING = re.compile(r"^be\s+(?P<g>[a-z]+ing)\b\s*(?P<rest>.*)", re.I)
_TO_START = re.compile(r"^\s*to\s+")
_SEE_OR_WATCH = re.compile(r"^(?:see|watch)\s+", re.I)
_GOT_OUTCOME = re.compile(rf"^\s*(?P<p>{_GOT_PARTICIPLES})\b", re.I)
_OUTCOME_PLACE = re.compile(r"^\s+(?P<prep>into|to|at|by|for)\s+(?P<o>.+)", re.I)
_GOT_OBJECT = re.compile(r"^(?:an?|my|the|our|\d+|new)\b", re.I)
_TO_PLACE = re.compile(r"^\s*to\s+(?P<np>.+)", re.I)
_MY_JOB_AT = re.compile(
    r"^(?:my|her|his|their|the|our)\s+(?:\w+\s+)?(?:job|position|role|gig|work)\s+"
    r"(?:at|with|in)\s+(?P<o>.+)",
    re.I,
)
_ON_PREFIX = re.compile(r"^on\s+", re.I)
_MONTH = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\d{1,2}[/.-]\d{1,2}", re.I
)
_BEEN_START = re.compile(r"^been\b", re.I)


def _cut(text: str, stop: re.Pattern[str] = _NP_STOP) -> str:
    """``text`` up to the first boundary ``stop`` finds, trimmed of spaces and punctuation."""
    m = stop.search(text)
    if m:
        text = text[: m.start()]
    return text.strip(" \t'\"-.,!?|")


def _bare(np: str) -> str:
    """A noun phrase without its leading articles, possessives and demonstratives."""
    return _LEADING_DET.sub("", np).strip()


def _proper(text: str, pattern: re.Pattern[str] = _PROPER_PLACE) -> str | None:
    """The capitalised name ``text`` starts with ("the Louvre" → "Louvre"), else ``None``."""
    m = pattern.match(text.strip())
    if not m:
        return None
    np = m.group("np").strip(" .'&-")
    tokens = np.split()
    while tokens and tokens[-1].casefold() in _NOT_PROPER:
        tokens.pop()
    if not tokens or tokens[0].casefold() in _NOT_PROPER:
        return None
    return " ".join(tokens)


def _place(text: str) -> str | None:
    """A place at the start of ``text``: a capitalised name ("Porto", "New York City"), or
    the name after "in" in "a small town in Ohio"."""
    found = _proper(text)
    if found:
        return None if found in _DEMONYMS or found in _LANGUAGES else found
    m = _IN_PLACE.match(text.strip())
    if m and not _NP_STOP.match(text[: m.start("rest")]):
        inner = _proper(m.group("rest"))
        if inner and inner not in _DEMONYMS:
            return inner
    return _known_lowercase_place(text)


#: What cannot begin a lower-case place name ("in the paris of the south").
_DETERMINERS = frozenset({"The", "A", "An", "My", "Our", "Your", "His", "Her", "Their"})


def _known_lowercase_place(text: str) -> str | None:
    """A place in lower case, as chat often writes it ("i live in lisbon", "new york"): the
    first 1-3 words, capitalised, when the last is in :data:`_KNOWN_PLACES`."""
    words = re.findall(r"[a-z][a-z'-]*", text.strip().split(",")[0].split(".")[0])[:3]
    for n in range(len(words), 0, -1):
        head = [w.capitalize() for w in words[:n]]
        if head[-1] in _KNOWN_PLACES and (n == 1 or head[0] not in _DETERMINERS):
            return " ".join(head)
    return None


def _org(text: str) -> str | None:
    """An employer or school at the start of ``text``: a capitalised name ("Acme Corp",
    "the University of Lisbon", "3M")."""
    found = _proper(text, _PROPER_ORG)
    if found is None:
        return None
    tokens = found.split()
    while tokens and tokens[-1].casefold() in {"of", "and", "&", "for", "at", "on", "in", "the"}:
        tokens.pop()
    return " ".join(tokens) or None


def _items(np: str) -> list[str]:
    """A list object split into its items ("hiking, jazz and sushi" → three), unless the
    phrase is one thing ("mac and cheese", "old black and white movies"). Commas without
    a final "and"/"or" make no list: what follows the first comma is an afterthought."""
    np = _BOTH.sub("", np.strip())
    if "," in np and not _CONJUNCTION.search(np):
        np = np.split(",")[0]
    words = np.split()
    for i in range(1, len(words) - 1):
        if words[i].casefold() == "and":
            pair = f"{words[i - 1]}-and-{words[i + 1]}".casefold()
            if any(pair in compound for compound in _COMPOUNDS):
                words[i] = "\u0000"  # keep this "and" inside its item
    joined = " ".join(words)
    return [p.strip().replace("\u0000", "and") for p in _LIST_SPLIT.split(joined) if p.strip()]


_ESPECIALLY = re.compile(
    r"^\s*,?\s*(?:especially|particularly|above\s+all|in\s+particular|mostly)\s+(?P<x>.+)", re.I
)


def _pref_objects(text: str) -> list[str]:
    """The things a preference verb is about ("I love hiking and jazz" → hiking, jazz);
    none for pronouns, clauses, people and possessions ("I love it", "I love how…",
    "I love my wife")."""
    text = text.strip()
    if text[:3].casefold() == "to ":
        vp = _vp(text[3:])
        return [vp] if vp else []
    np = _cut(text, _LIST_STOP)
    if not np or _PRONOUN_START.match(np) or _POSSESSIVE_START.match(np):
        return []
    out = []
    items = _items(np)
    especially = _ESPECIALLY.search(text[len(np) :]) if text.startswith(np) else None
    if especially:  # "I love jazz, especially Coltrane"
        items += _items(_cut(especially.group("x"), _LIST_STOP))
    pointing = _DEFINITE_START.match(np) is not None
    for item in items:
        bare = _bare(_ALL_THE.sub("", item))
        if not bare or _PRONOUN_START.match(item) or len(bare.split()) > 6:
            break  # the list ended; what follows is something else
        if bare.casefold() in _RELATIONS or bare.casefold() in _RELATION_PLURALS:
            continue
        if pointing and bare[:1].islower() and bare.split()[-1].casefold() not in _GENERIC_THE:
            continue  # "I love the colors!": about something at hand, no lasting taste
        if _FINITE_BE.search(bare) or _REFERRING.search(bare):
            break  # "…, they are a great escape": the list ended in a clause
        if _vague_activity(bare) or _PREPOSITION_START.match(bare):
            continue  # "having a great time", "just going", "through charity"
        out.append(bare)
    return out


#: "-ing" words that name no activity on their own ("I love doing").
_EMPTY_GERUNDS = _set("going doing being having getting playing spending making caring trying")


def _vague_activity(phrase: str) -> bool:
    """Whether a gerund phrase names no activity: "having a great time", "just going",
    "spending time"."""
    words = _JUST.sub("", phrase).split()
    if not words or not words[0].casefold().endswith("ing"):
        return False
    if words[0].casefold() in _EMPTY_GERUNDS and (len(words) == 1 or words[1:] == ["time"]):
        return True
    return _VAGUE_VP.search(" ".join([_base(words[0]), *words[1:]])) is not None


_JUST = re.compile(r"^just\s+", re.I)


_DEFINITE_START = re.compile(r"^(?:all\s+)?(?:the|this|that|these|those)\s", re.I)
_ALL_THE = re.compile(r"^all\s+(?=(?:the|this|that|these|those)\s)", re.I)
#: What "the" names as a kind, not as a thing at hand ("I love the outdoors").
_GENERIC_THE = _PLACE_NOUNS | _set(
    """outdoors ocean sea sun snow rain city theater theatre movies cinema gym water
    wilderness woods desert cold heat winter summer spring fall autumn night mornings
    evenings weekends holidays radio news internet piano guitar violin drums cello
    saxophone sax flute trumpet ukulele harp bass banjo harmonica clarinet oboe accordion
    stars outdoor opera ballet symphony""".replace("\n", " ")
)


#: What "for" starts when it ends a plan's object: who or what the plan is for ("bake a
#: cake for my friends").
_FOR_WHOM = _set(
    "my our his her their the these those some people others friends family him them me us everyone"
)
#: Words after "to" that are places one goes to, though they are also verbs ("go back to
#: work").
_TO_PLACE_VERBS = _set("work party rest shop camp")
_WH_WORDS = _set("how what where when whether which who why")
#: Plans and goals that name no plan: resolutions and idioms ("keep going", "make it
#: work", "have a great time", "stay positive").
_VAGUE_VP = re.compile(
    r"^(?:keep|continue|carry\s+on|need|have\s+to|be\s+able|figure|see\s+what|give\s+back)\b"
    r"|^stay\s+(?:positive|strong|motivated|focused|determined|upbeat|active|healthy|calm|sane|"
    r"safe|busy|tuned|up|hopeful|optimistic|humble|grounded|connected|in\s+touch)\b"
    r"|^make\s+(?:it|this|that|things|them|the\s+most|sure|progress)\b"
    r"|\bmake\s+(?:an?\s+|some\s+)?(?:(?:real|big|huge|positive)\s+)?(?:difference|impact|change)\b"
    r"|^make\s+.*\b(?:happen|come\s+true|work|a\s+reality|a\s+success)$"
    r"|^have\s+(?:(?:a|an|some|so\s+much|lots\s+of|such\s+an?)\s+)?(?:(?:really\s+)?(?:good|great|fun|nice|"
    r"wonderful|amazing|awesome|lovely|relaxing|blast|)\s*)*(?:time|fun|blast)\b"
    r"|^get\s+(?:it|them|'em|better|used|ready|through|back|some\s+rest|going)\b"
    r"|^do\s+(?:my|our|his|her|their)\s+best\b"
    r"|^spend\s+(?:some\s+|more\s+|quality\s+)?time$"
    r"|^(?:have|grab|get)\s+(?:some\s+)?(?:dinner|lunch|breakfast|brunch|coffee|a\s+drink|drinks)$"
    r"|^reach\s+(?:my|our|his|her|their)\s+(?:goals?|dreams?)\b",
    re.I,
)


#: A plan that cancels a plan is no plan ("cancel my trip"): the cancellation rule reads
#: it as a retracted plan.
_CANCEL_START = re.compile(r"^(?:cancel|call\s+off|scrap)\b", re.I)


def _shorten_vp(vp: str) -> str:
    """A plan's verb and object without the purpose or beneficiary that follows them
    ("visit Vermont to see the fall colors" → "visit Vermont", "bake a cake for my
    friends" → "bake a cake"); what comes right after the verb stays ("learn to swim",
    "look for a flat")."""
    words = vp.split()
    for i in range(2, len(words) - 1):
        word, prev, after = words[i].casefold(), words[i - 1].casefold(), words[i + 1].casefold()
        if prev in _PARTICLES or prev in _WH_WORDS:
            continue
        purpose = (
            word == "to"
            and after in _BASE_VERBS
            and after not in _TO_PLACE_VERBS
            and prev not in _TO_NOUNS
        )
        beneficiary = word == "for" and after in _FOR_WHOM
        by_doing = word == "by" and after.endswith("ing")
        in_order = word == "in" and after == "order"
        if purpose or beneficiary or by_doing or in_order:
            return " ".join(words[:i])
    return vp


def _vp(text: str) -> str | None:
    """A verb phrase for a plan, decision or goal, cut at the clause boundary and before a
    purpose or beneficiary ("visit Japan with my wife because…" → "visit Japan"); ``None``
    for talk about the conversation ("tell you something"), idioms that name no plan
    ("keep going", "make it happen") and empty phrases."""
    vp = _shorten_vp(_cut(text, _VP_STOP))
    words = vp.split()
    if not words or len(words) > 8:
        return None
    first = words[0].casefold()
    if _CHAT_PHRASE.match(vp) or _VAGUE_VP.search(vp) or _CANCEL_START.match(vp):
        return None
    if first == "be":
        if len(words) < 2 or words[1] not in ("a", "an", "in", "at", "on"):
            return None
    elif first in _CHAT_VERBS and (len(words) <= 2 or words[1].casefold() in _CHAT_OBJECTS):
        return None  # "tell you something", "ask about it"; not "ask my boss for a raise"
    if len(words) == 1 and first not in _LONE_PLAN_VERBS:
        return None
    if _YOU.search(vp) or first in ("not", "never", "it", "that"):
        return None
    if not _LOWER_START.match(vp):
        return None  # a plan starts with its verb
    return vp


def _is_occupation(np: str) -> bool:
    low = np.casefold()
    if any(low == p or low.endswith(" " + p) for p in _OCCUPATION_PHRASES):
        return True
    words = low.split()
    if not words or len(words) > 5:
        return False
    head = words[-1]
    if head in _NOT_OCCUPATION:
        return False
    return (
        head in _OCCUPATIONS
        or bool(_OCCUPATION_SUFFIX.search(head))
        or (head.endswith("ist") and len(head) > 5)
    )


def _base(gerund: str) -> str:
    """The base form of a gerund: "visiting" → "visit", "moving" → "move", "running" →
    "run"."""
    low = gerund.casefold()
    if low in _GERUND_BASE:
        return _GERUND_BASE[low]
    if not low.endswith("ing") or len(low) < 5:
        return low
    stem = low[:-3]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]  # "planning" → "plan"
    if stem.endswith(("v", "c")) or (len(stem) >= 5 and _ATE_STEM.search(stem)):
        return stem + "e"  # "giving" → "give", "graduating" → "graduate"
    if _SILENT_E_STEM.search(stem):
        return stem + "e"  # "recharging", "cycling", "realizing", "scoring", "baking"
    return stem


#: Stems of "-ing" words whose base ends in a silent "e": "charg(e)", "judg(e)", "cycl(e)",
#: "realiz(e)", "scor(e)", "promis(e)", "bak(e)" (not "speak", "walk", "focus", "pour").
_SILENT_E_STEM = re.compile(r"(?:[rdl]g|[^aeioulrwn]l|[aeiouy]z|[^o]or|[aeio]s|[^aeiou][aiou]k)$")


def _gerund(verb: str) -> str:
    """The gerund of a verb: "paint" → "painting", "dance" → "dancing", "run" →
    "running"."""
    low = verb.casefold()
    if low in _BASE_GERUND:
        return _BASE_GERUND[low]
    if low.endswith("ie"):
        return low[:-2] + "ying"
    if low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and len(low) > 2:
        return low[:-1] + "ing"
    if _DOUBLED.fullmatch(low):
        return low + low[-1] + "ing"  # one syllable ending consonant-vowel-consonant
    return low + "ing"


def _leading_name(text: str) -> tuple[str, str] | None:
    """A person's name at the start of ``text`` (one to three capitalised words that are
    not common words) and the text after it."""
    m = _NAME_RUN.match(text)
    if not m:
        return None
    tokens = m.group(1).split()
    kept: list[str] = []
    for token in tokens:
        low = token.casefold()
        if _common_word(token):
            break
        if (low in _RELATIONS or low in _PET_SINGULAR or low in _RELATION_PLURALS) and (
            low not in _ALSO_NAMES
        ):
            break
        kept.append(token)
    if not kept:
        return None
    name = " ".join(kept)
    rest = text[len(" ".join(tokens[: len(kept)])) :]
    # "Maria Rome" style runs are rare; a second token that is a place is left out.
    return name, rest


def _names_list(text: str) -> list[str]:
    """Names at the start of ``text``: "Leo", "Leo and Mia", "Leo, Mia, and Sam"."""
    names: list[str] = []
    rest = text.strip()
    while True:
        found = _leading_name(rest)
        if found is None:
            break
        names.append(found[0])
        rest = found[1]
        sep = _NAME_SEPARATOR.match(rest)
        if not sep:
            break
        rest = rest[sep.end() :]
    return names


def _name_ends(rest: str) -> bool:
    """Whether a name is followed by the end of what introduces it ("I'm Anna, …")."""
    return _NAME_END.match(rest) is not None


#: Prepositions a liked thing cannot start with ("beyond", "through charity").
_PREPOSITION_START = re.compile(
    r"^(?:beyond|through|about|with|into|onto|on|in|at|for|from|over|under|around|by|of|to)\b"
)


#: Predicates whose object is a phrase cut from the message (not a name or a value): they
#: are checked by :func:`_clean_phrase` before they are kept.
_PHRASE_PREDICATES = frozenset(
    {"likes", "dislikes", "prefers", "hobby", "eats", "allergic_to", "has_pet", "attended",
     "visited", "did", "plans", "decided", "goal", "role", "works_at", "studies", "job"}
)  # fmt: skip
#: Words a phrase cannot end with: it was cut in the middle ("Painting landscapes and").
_DANGLING = _set(
    """and or but nor so to for of with at in on from about by into onto over under through
    as than like how what which who whom that based because if when while the a an my our
    your his her their its some any another every each few more very really just such"""
)
#: Words that say how much, not what: a phrase of only these names nothing ("a few more").
_AMOUNT_WORDS = _set(
    """a an the some any few more many much lot lots ton tons bunch couple several another
    other one ones bit little all most both each every plenty of none enough whole"""
)
#: Adverbs that trail a phrase without being part of it ("made cookies recently").
_TRAILING_ADVERB = re.compile(
    r"\s+(?:recently|lately|sometime|sometimes|someday|together|there|here|again|too|anyway|"
    r"already|now|yet|afterwards?|instead|first|finally|though|ever|really|as\s+well|"
    r"just\s+in\s+case|for\s+now|so\s+far|at\s+all|and\s+stuff|and\s+all|or\s+so|"
    r"or\s+something|even\s+more|more\s+and\s+more|soon|today|tonight|back\s+then|"
    r"these\s+days|at\s+the\s+moment)$",
    re.I,
)
#: Pronouns inside a phrase: it is about something said before, or it is a clause ("see
#: them", "seeing others enjoy it", "they are a great escape"); such a phrase is dropped.
_REFERRING = re.compile(
    r"(?<![\w'-])(?:I|we|they|he|she|you|u|ya|y'all|it|them|'em|this|that|these|those|"
    r"something|anything|everything|stuff|yours|your|ours|theirs|each\s?other|eachother|"
    r"one\s+another|another\s+one|the\s+other\s+one|things)(?![\w-]|'(?!s\b))"
)
#: A finite "be" inside a phrase makes it a clause ("making sure veterans are supported").
_FINITE_BE = re.compile(r"\b(?:is|are|was|were|am)\b")


def _clean_phrase(phrase: str) -> str | None:
    """A phrase object without the adverbs trailing it, or ``None`` when it is no clean
    phrase: it ends in a conjunction, a preposition or an article (it was cut mid-way),
    it only says how much ("a few more"), or it refers back with a pronoun ("check them
    out") or holds a clause of its own ("they are a great escape")."""
    while True:
        trimmed = _TRAILING_ADVERB.sub("", phrase)
        if trimmed == phrase:
            break
        phrase = trimmed
    words = phrase.split()
    if not words or words[-1].casefold() in _DANGLING:
        return None
    if all(w.casefold() in _AMOUNT_WORDS for w in words):
        return None
    if _REFERRING.search(phrase) or _FINITE_BE.search(phrase):
        return None
    return phrase

"""Text handling of the English rule extractor: normalising a message, splitting it
into sentences and clauses, and masking date and time phrases.

A clause (:class:`_Clause`) is what the rules read: its text with every date phrase and
vague time replaced by ``|`` (so that they never end up inside an object), the dates it
names, and what the split says about it (it inherits the previous subject, it only sets
a scene, it is about leisure…).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field

from mnemolayer.extract.dates import find_date_spans
from mnemolayer.extract.rules.en.lexicon import _ACQ_RE, _NOT_NAMES, _REL_MODS, _REL_RE

_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'", "“": '"', "”": '"'})
_DASHES = re.compile(r"\s*[\u2013\u2014]\s*")

_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b([Cc])an'?t\b"), r"\1an not"),
    (re.compile(r"\b([Ww])on't\b"), r"\1ill not"),
    (re.compile(r"\b([Aa])in't\b"), r"\1m not"),
    (re.compile(r"\b(\w+)n't\b"), r"\1 not"),
    (re.compile(r"\b(do|does|did|is|are|was|were|have|has|had|would|could|should)nt\b", re.I), r"\1 not"),
    (re.compile(r"\b([Ii])'?m\b"), "I am"),
    (re.compile(r"\b([Ii])'ve\b|\b([Ii])ve\b"), "I have"),
    (re.compile(r"\b(\w+)'ve\b"), r"\1 have"),
    (re.compile(r"\b(\w+)'ll\b"), r"\1 will"),
    (re.compile(r"\b(I|we|you|he|she|they)'d\s+(?=(?:been|gone|done|had|never|already|just\s+been)\b)", re.I), r"\1 had "),
    (re.compile(r"\b(\w+)'d\b"), r"\1 would"),
    (re.compile(r"\b(we|you|they)'re\b", re.I), r"\1 are"),
    (re.compile(r"\b(he|she|it|that|there|what|who|where|here)'s\s+(?=(?:been|got|gotten|had)\b)", re.I), r"\1 has "),
    (re.compile(r"\b(he|she|it|that|there|what|who|where|here)'s\b", re.I), r"\1 is"),
    (re.compile(r"\b([A-Z][a-z]+)'s\s+(?=(?:been|got|gotten)\b)"), r"\1 has "),
    (
        re.compile(
            r"\b([A-Z][a-z]+)'s\s+(?=(?:a|an|the|from|in|at|living|working|moving|going|"
            r"currently|now|still|also|really|so|very|not|no|my|our|your|his|her|\d+|"
            r"allergic|married|engaged|single|vegan|vegetarian|into|obsessed|planning)\b)"
        ),
        r"\1 is ",
    ),
    (re.compile(r"\b(birthday|bday|b-day|name)'s\b", re.I), r"\1 is"),
    (re.compile(r"\b[Ll]et's\b"), "let us"),
    (re.compile(r"\bgonna\b", re.I), "going to"),
    (re.compile(r"\bwanna\b", re.I), "want to"),
    (re.compile(r"\bgotta\b", re.I), "got to"),
    (re.compile(r"\bkinda\b", re.I), "kind of"),
    (re.compile(r"\bsorta\b", re.I), "sort of"),
    (re.compile(r"\bim\b"), "I am"),
    (re.compile(r"\bi(?=\s)"), "I"),
    (re.compile(r"\bu\b"), "you"),
)  # fmt: skip


def _normalise(text: str) -> str:
    """NFKC, ASCII quotes, contractions and chat spellings spelled out."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _DASHES.sub(" - ", text)
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


_SENTENCE_BREAK = re.compile(r"[.!?]+[\"')\]]*(?=\s|$)|\n+|\s*;\s*|\s*\u2026\s*|\.{3,}")
#: Abbreviations a name follows ("Dr. Smith", "St. Louis", "J. K."): never a sentence end.
_TITLE = re.compile(r"(?:\b(?:Dr|Mr|Mrs|Ms|St|Mt|Ft|Prof|Rev|Gen|Capt|Lt|Sgt)|\b[A-Z])$")
#: Abbreviations that end a sentence only when a capitalised word follows ("Acme Corp. We…").
_ABBREVIATION = re.compile(
    r"\b(?:Jr|Sr|vs|etc|approx|Ave|No|Inc|Co|Ltd|Corp|e\.g|i\.e|a\.m|p\.m)$", re.I
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if(?!\s+(?:that|it|this)\s+(?:matters|helps|counts|makes\s+sense)|\s+you\s+(?:must\s+know|"
    r"ask\s+me|are\s+curious|want\s+to\s+know|care|wonder|need\s+anything)|\s+(?:anything|so|not|"
    r"possible|needed|any|ever|only)\b)|unless|wish|wished|wishes|imagine|imagining|suppose|supposing|hypothetically|"
    r"pretend|pretending|as though|whether|in theory|fantasi[sz]e)\b|\bas if\b",
    re.I,
)
#: A sentence that asks: "Do you…", "Where do you…" (not "What I love most is…").
_ASKS = re.compile(
    r"^(?:(?:do|does|did|are|is|was|were|can|could|would|will|should|have|has|had|shall|"
    r"may|might|am)\s+(?:you|I|we|he|she|they|it|there|your|my|ya|y'all)\b"
    r"|(?:where|what|when|who|whom|whose|why|how|which)\b(?!\s+(?:I|we)\s))",
    re.I,
)
#: The question that ends a statement: "…, what about you?", "…, do you?", "…, right?".
_QUESTION_TAIL = re.compile(
    r"(?:,|\s+-|\s+(?=(?:what|how)\s+about\b))\s*(?:and\s+|but\s+|so\s+)?(?:what\s+about|how\s+about|"
    r"and\s+you|you|u|right|wbu|hbu|any\s+\w+|thoughts|is\s+that|does\s+that|isn't\s+it|"
    r"ok|okay|(?:do|does|did|are|is|was|were|can|could|would|will|should|have|has)\s+"
    r"(?:you|u|they|we|I|it|that|this|there)|(?:where|what|when|who|why|how|which)\b)[^,]*$",
    re.I,
)


@dataclass(slots=True)
class _Sentence:
    text: str  # without its final punctuation
    question: bool  # it ended with "?"


def _sentences(text: str) -> list[_Sentence]:
    """``text`` split into sentences at ``. ! ? ;``, ellipses and newlines (not after
    "Dr.", "St.", an initial…)."""
    out: list[_Sentence] = []
    start = 0
    for m in _SENTENCE_BREAK.finditer(text):
        if m.group() == ".":
            before = text[start : m.start()]
            if _TITLE.search(before):
                continue
            if _ABBREVIATION.search(before) and not _CAPITAL_NEXT.match(text[m.end() :]):
                continue
        chunk = text[start : m.start()].strip()
        if chunk:
            out.append(_Sentence(chunk, "?" in m.group()))
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(_Sentence(tail, False))
    return out


#: Vague times: cut out of clauses like dates, but they give no date.
_VAGUE_TIME = re.compile(
    r"\b(?:(?:last|next|this|coming)\s+(?:summer|winter|spring|fall|autumn|semester|season|"
    r"holidays?|christmas|easter|thanksgiving|time)"
    r"|in\s+(?:the\s+)?(?:(?:early|late|mid)[\s-]+)?(?:19|20)\d\d(?:s)?"
    r"|in\s+(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december)(?:\s+(?:19|20)\d\d)?"
    r"|(?:a\s+)?(?:few|couple(?:\s+of)?|several|many)\s+(?:days|weeks|months|years)\s+(?:ago|back)"
    r"|(?:the\s+)?other\s+(?:day|week|night)"
    r"|over\s+the\s+(?:weekend|holidays|summer|winter|break)"
    r"|(?:earlier|later)\s+(?:today|tonight|this\s+\w+)"
    r"|(?:every|each)\s+(?:single\s+)?(?:day|week|month|year|morning|evening|night|weekend|"
    r"summer|winter|(?:mon|tues|wednes|thurs|fri|satur|sun)day)"
    r"|on\s+(?:weekends|the\s+weekends?|weekdays|(?:mon|tues|wednes|thurs|fri|satur|sun)days)"
    r"|(?:at\s+)?the\s+(?:beginning|start|end)\s+of\s+(?:the\s+|this\s+|next\s+|last\s+)?"
    r"(?:week|month|year|summer|semester)"
    r"|(?:for|since)\s+(?:the\s+(?:past|last)\s+)?(?:\d+|a|an|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|several|many|a\s+few|a\s+couple\s+of|a\s+couple)\s+(?:days|weeks|"
    r"months|years|decades|day|week|month|year|decade)(?:\s+now)?"
    r"|since\s+(?:19|20)\d\d|since\s+(?:i\s+was\s+)?(?:a\s+)?(?:kid|child|little)"
    r"|a\s+while\s+(?:ago|back)|some\s+day|someday|one\s+day|eventually"
    r"|(?<!\btalk\s)(?<!\bspeak\s)(?<!\bchat\s)(?<!\byou\s)soon)\b",
    re.I,
)
_FREE_TIME = re.compile(
    r"(?:^|\s+)(?:in|during)\s+(?:my|our)\s+(?:free|spare|down|leisure)\s*time\b|\s+as\s+a\s+hobby\b"
    r"|(?:^|\s+)(?:just\s+)?for\s+fun\b|(?<=\w)(?<!\blove)(?<!\bloves)(?<!\blike)(?<!\blikes)(?<!\bwant)(?<!\bwants)(?<!\bneed)"
    r"(?<!\bneeds)(?<!\bgoing)(?<!\bhave)(?<!\bhas)(?<!\btry)(?<!\bhope)(?<!\bplan)(?<!\bable)"
    r"(?<!\bused)(?<!\bprefer)(?<!\benjoy)\s+to\s+(?:relax|unwind|de-?stress|wind\s+down)\b"
    r"|(?:^|\s+)(?:after|outside(?:\s+of)?)\s+work\b"
    r"|(?:^|\s+)(?:when(?:ever)?)\s+I\s+(?:have|get)\s+(?:some\s+)?(?:free\s+|spare\s+)?time\b"
    r"|(?:^|\s+)whenever\s+I\s+(?:can|get\s+the\s+chance)\b"
    r"|(?:^|\s+)(?:when(?:ever)?|while)\s+I\s+am\s+not\s+(?:working|at\s+work|busy)\b",
    re.I,
)
#: Vague times that make a clause about leisure ("on weekends I go kayaking").
_WEEKENDS = re.compile(r"^(?:on|every|each)\s+(?:the\s+)?weekends?$|^on\s+weekends$", re.I)
_ANYMORE = re.compile(r"\b(?:anymore|any\s+more|any\s+longer)\b", re.I)

_VERB_START = (
    r"(?:(?:also|now|currently|still|just|recently|really|even|then|finally)\s+)?"
    r"(?:live|lives|work|works|moved|love|loves|like|likes|enjoy|enjoys|hate|hates|prefer|"
    r"prefers|have|has|own|owns|speak|speaks|study|studies|teach|teaches|manage|manages|lead|"
    r"leads|administer|administers|adopted|got|visited|went|ran|finished|started|decided|"
    r"plan|plans|want|wants|hope|hopes|eat|eats|play|plays|attended|joined|bought|built|made|"
    r"took|signed|painted|baked|cooked|wrote|won|completed|volunteered|traveled|travelled|"
    r"flew|hiked|learned|am|is|are|adore|adores|grew|came)\b"
)
#: What starts a clause with a subject of its own: "I", "my…", "he"/"she", a name and its
#: verb ("Emma just turned 5"), or a noun phrase and its verb ("the doctor retested me").
_SUBJECT_START = (
    r"(?:\|\s*)*(?:(?:I|we|We|my|My|our|Our|he|He|she|She)\b"
    r"|[A-Z][a-z]+\s+(?:(?:just|also|still|now|recently|finally|really|actually)\s+)?"
    r"(?:is|was|has|[a-z]+s|[a-z]+ed|turned)\b"
    r"|(?:the|his|her|their|this|that)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are|was|were|has|had|[a-z]+ed)\b"
    r"|(?:his|her|their)\s+(?:[a-z]+\s+)?[a-z]+\s+[A-Z][a-z]+\s+(?:is|was|has|[a-z]+s|[a-z]+ed)\b)"
)
#: "Tom and I are…": "I" closes a compound subject, not a new clause.
_COMPOUND_I = (
    r"I\s+(?:are|were|both|broke\s+up|split\s+up|got\s+divorced|divorced|separated|"
    r"called\s+it\s+quits)\b"
)
#: What follows "and" when the copula is left out: "Leo is 5 and obsessed with dinosaurs".
_COPULA_START = (
    r"(?:(?:also|really|totally|super|very|completely|absolutely)\s+)?(?:obsessed|allergic|"
    r"passionate|crazy|into|fond|addicted|hooked|keen|originally|fluent|married|engaged|"
    r"vegetarian|vegan|an?\s+(?:big\s+|huge\s+)?fan)\b"
)
_CLAUSE_BREAK = re.compile(
    rf"(?P<own>(?<!\b[Mm]e)\s*,?\s+(?:and|but|so|because|cause|cuz|since|although|though|while|whereas|"
    rf"plus|or|and\s+then|and\s+now|and\s+also|but\s+now)\s+(?={_SUBJECT_START})(?!{_COMPOUND_I})"
    rf"|\s*,\s*(?={_SUBJECT_START})(?!(?i:my|our)\s+{_REL_MODS}(?:{_REL_RE}|{_ACQ_RE})\s*,))"
    rf"|(?P<ell>\s*,?\s+(?:and|but|so|and\s+then|and\s+also|but\s+now|and\s+now)\s+(?=(?:\|\s*)*{_VERB_START})"
    rf"|\s*,\s*(?!like\b)(?=(?:\|\s*)*{_VERB_START}(?<!\bam)(?<!\bis)(?<!\bare)))"
    r"|(?P<sub>\s*,?\s+(?:when|whenever|while|after|before|until|till|once|as\s+soon\s+as|"
    r"if|unless|which|whose|where|as\s+long\s+as|even\s+though)\s+)"
    rf"|(?P<cop>\s*,?\s+and\s+(?={_COPULA_START}))"
    r"|(?P<who>\s*,?\s+who\s+)"
    rf"|(?P<colon>\s*:\s*(?={_SUBJECT_START}))"
    r"|(?P<plain>\s*[()]\s*|\s+-+\s+|\s*,\s*(?:and\s+|but\s+|so\s+)?(?=(?:also|plus|btw)\b))",
)
_LEADING_SUBORDINATE = re.compile(
    r"^(?:when|whenever|while|after|before|until|till|once|as\s+soon\s+as|if|unless|"
    r"even\s+though|as\s+long\s+as|back\s+when)\b",
    re.I,
)
_NAME_TOKEN = r"[A-Z\u00C0-\u00DE][a-z\u00DF-\u00FF]+(?:-[A-Za-z\u00C0-\u00FF]+|'(?!s\b)[A-Za-z\u00C0-\u00FF]+)?"
#: A person's name, with a title when it has one ("Mr. Hendricks", "Dr Patel").
_PERSON = rf"(?:(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+)?{_NAME_TOKEN}"
_LAST_NAME = re.compile(rf"({_NAME_TOKEN})$")


@dataclass(slots=True)
class _Clause:
    """One clause: ``text`` is what rules read (date and vague-time phrases replaced by
    ``|``), ``evidence`` the clause as written."""

    text: str
    evidence: str
    dates: list[str]
    sentence: _SentenceInfo
    inherit: bool = False  # "… and work at Acme": no subject of its own
    subordinate: bool = False  # "when I was a kid": sets a scene, states nothing
    anymore: bool = False
    free_time: bool = False  # "in my free time", "as a hobby"
    following: str = ""  # the rest of the sentence after this clause
    vague: list[str] = field(default_factory=list)  # vague times: "next summer", "in June"
    copula: bool = False  # "… and obsessed with dinosaurs": "is" left out
    first: bool = False  # the first clause of its sentence
    decision: bool = False  # it follows "I've made up my mind": its plan is a decision


@dataclass(slots=True)
class _SentenceInfo:
    dates: list[str]


#: A word that belongs to the time phrase after it ("about five years ago", "for tonight").
_TIME_LEAD = re.compile(
    r"(?:^|\s)(?:about|around|roughly|approximately|almost|nearly|over|for|by|until|till|"
    r"before|on|at)\s+$",
    re.I,
)


def _time_start(text: str, start: int) -> int:
    """Where the time phrase at ``start`` begins once a leading word of it ("about", "for")
    is counted in."""
    m = _TIME_LEAD.search(text, max(0, start - 16), start)
    return m.start() + (1 if m.group()[:1].isspace() else 0) if m else start


@dataclass(frozen=True, slots=True)
class _Mark:
    """What one ``|`` of a masked sentence stands for: the text it replaced (``shown``,
    "about five years ago"), the time phrase in it (``phrase``, "five years ago"), and
    whether that phrase is a date (else a vague time, "next summer")."""

    shown: str
    phrase: str
    is_date: bool


def _mask_times(text: str) -> tuple[str, list[_Mark]]:
    """``text`` with each date phrase and vague time replaced by ``|``, and what each ``|``
    stands for, in order."""
    found = [(s, e, True) for s, e in find_date_spans(text, "en")]
    found += [(m.start(), m.end(), False) for m in _VAGUE_TIME.finditer(text)]
    found.sort()
    pieces: list[str] = []
    marks: list[_Mark] = []
    last = 0
    for phrase_start, end, is_date in found:
        start = _time_start(text, phrase_start)
        if phrase_start < last:
            continue  # a vague time inside a date phrase
        start = max(start, last)
        pieces.append(text[last:start])
        pieces.append(" | ")
        marks.append(_Mark(text[start:end], text[phrase_start:end], is_date))
        last = end
    pieces.append(text[last:])
    return " ".join("".join(pieces).split()), marks


_NO_MARK = _Mark("", "", False)


def _clauses(sentence: str, marks: list[_Mark], info: _SentenceInfo) -> list[_Clause]:
    """The masked ``sentence`` split into clauses (see :data:`_CLAUSE_BREAK`); ``marks``
    says what each ``|`` in it stands for."""
    out: list[_Clause] = []
    start = used = 0
    inherit = subordinate = copula = False
    prefix = ""
    for m in _CLAUSE_BREAK.finditer(sentence):
        piece = sentence[start : m.start()]
        count = piece.count("|")
        if piece.strip():
            clause = _clause(prefix, piece, marks[used : used + count], info, inherit, subordinate)
            clause.copula = copula
            out.append(clause)
        used += count + m.group().count("|")
        prefix = ""
        copula = m.group("cop") is not None
        inherit = m.group("ell") is not None or copula
        subordinate = m.group("sub") is not None
        if m.group("who") is not None:
            name = _LAST_NAME.search(piece.rstrip())
            if name and name.group(1).casefold() not in _NOT_NAMES:
                prefix = name.group(1) + " "  # "a sister named Maria who lives in Rome"
            else:
                subordinate = True
        start = m.end()
    piece = sentence[start:]
    if piece.strip():
        clause = _clause(prefix, piece, marks[used:], info, inherit, subordinate)
        clause.copula = copula
        out.append(clause)
    for clause, rest in itertools.pairwise(out):
        clause.following = rest.text
        if rest.inherit and clause.free_time:
            rest.free_time = True  # "in my free time I knit and play chess"
    return out


def _clause(
    prefix: str,
    text: str,
    marks: list[_Mark],
    info: _SentenceInfo,
    inherit: bool,
    subordinate: bool,
) -> _Clause:
    phrases = iter(marks)
    evidence = _MARK.sub(lambda _: next(phrases, _NO_MARK).shown, text).strip(" ,")
    work = prefix + text
    free_time = bool(_FREE_TIME.search(work))
    if free_time:
        work = _FREE_TIME.sub(" ", work)
    free_time = free_time or any(_WEEKENDS.match(m.phrase) for m in marks if not m.is_date)
    anymore = bool(_ANYMORE.search(work))
    if anymore:
        work = _ANYMORE.sub(" ", work)
    if _LEADING_SUBORDINATE.match(work.lstrip("| ")):
        subordinate = True
    return _Clause(
        text=" ".join(work.split()),
        evidence=" ".join(evidence.split()),
        dates=[mark.phrase for mark in marks if mark.is_date],
        vague=[mark.phrase for mark in marks if not mark.is_date],
        sentence=info,
        inherit=inherit,
        subordinate=subordinate,
        anymore=anymore,
        free_time=free_time,
    )


#: A capitalised word next (after "Corp.", a sentence goes on only before one).
_CAPITAL_NEXT = re.compile(r"\s+[A-Z]")
#: Where a date or time phrase was cut out of a clause.
_MARK = re.compile(r"\|")

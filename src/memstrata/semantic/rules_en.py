"""Offline rule-based fact extraction for English chat messages.

:func:`extract_en` reads one message and returns the facts it states as
subject–predicate–object triples (predicates from :data:`~.predicates.PREDICATES`), the
people, places, organisations, projects and pets those facts name, and the dates the
message mentions, resolved against the message's own timestamp.

How it works, per message (compiled regular expressions and word lists; no parser and no
model; about 0.2 ms for a typical chat message):

1. **Normalise**: NFKC, typographic quotes to ASCII, contractions spelled out ("I'm" →
   "I am", "can't" → "can not", "Lena's a nurse" → "Lena is a nurse"), chat spellings
   ("im", "gonna", "wanna") spelled out.
2. **Split** into sentences, then clauses at conjunctions and commas that start a new
   subject ("…, and I work at Acme") or a new verb of the same subject ("I live in Lisbon
   and work at Acme": the second clause inherits "I"; "Leo is 5 and obsessed with
   dinosaurs" inherits "Leo is"). Sentences that ask ("Do you…", "Where…", a final "?"
   after no statement) or suppose ("if", "wish", "imagine") are skipped, and so are
   clauses that only set a scene ("when I was a kid…", "…, which is nice").
3. **Dates**: date phrases (:func:`~.dates.find_date_spans`) and vague times ("every day",
   "for two years", "next summer") are cut out of a clause so that they never end up
   inside an object. An event or a plan takes the first date of its clause (else of its
   sentence) that fits its tense, resolved by :func:`~.dates.resolve_date` against the
   message time.
4. **Subject**: after fillers ("Oh,", "Btw", "Turns out") a clause must start with a
   subject: "I"/"we" (→ ``speaker``, else :data:`~.types.SELF`), a capitalised name
   ("Lena"), a named relative or pet ("my sister Maria", "my dog Max": the relation is a
   fact of its own), or "he"/"she" for the last person named in the message. A message
   that opens with a past verb drops its "I" ("Just started at Spotify!"). Anything else
   ("you", "my mom", "people") is no subject, and the clause gives no fact. Named
   relatives and pets are also picked up anywhere in a clause ("…with my brother Tom").
5. **Rules**: the rest of the clause is matched, at its start, against one ordered table
   of verb-phrase rules (``live in``, ``work as``, ``am allergic to``, ``went to``…); the
   first rule whose handler accepts the object wins. Objects are cut at clause
   boundaries, stripped of articles and possessives, checked for their kind (a place or
   an employer is a capitalised name, a job a known occupation, a pet a known animal) and
   split when they are lists ("hiking, jazz and sushi").
6. **Negation**: "no longer", "not … anymore", "used to" and "stopped …-ing" retract the
   fact they wrap (``negated=True``); a plain "don't like" / "am not a fan of" is a
   ``dislikes`` fact; other plain negatives ("didn't", "never", "am not a nurse") and
   modals ("might", "would") state nothing.

Precision is preferred over recall throughout: a clause that fits no rule exactly gives
no fact rather than a guessed one.
"""

from __future__ import annotations

import itertools
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from .dates import Preference, find_date_spans, find_dates, resolve_date
from .types import SELF, ExtractedEntity, ExtractedFact, Extraction, ResolvedDate

__all__ = ["extract_en"]

log = logging.getLogger(__name__)

#: Sentences longer than this (in characters) are not chat sentences; they are skipped.
_MAX_SENTENCE_CHARS = 600


def _alt(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first; a space matches any whitespace."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered) + ")"


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ------------------------------------------------------------------------------ lexicons

#: Relation words → predicate (the relation of the speaker to the named person).
_RELATIONS: dict[str, str] = {
    **dict.fromkeys(["wife", "husband", "spouse", "hubby"], "spouse"),
    **dict.fromkeys(
        ["boyfriend", "girlfriend", "partner", "fiance", "fiancé", "fiancee", "fiancée"],
        "partner",
    ),
    **dict.fromkeys(["mom", "mother", "mum", "mommy", "mama", "momma"], "mother"),
    **dict.fromkeys(["dad", "father", "daddy", "papa"], "father"),
    **dict.fromkeys(["sister", "sis"], "sister"),
    **dict.fromkeys(["brother"], "brother"),
    **dict.fromkeys(["son", "daughter", "kid", "child", "baby", "baby boy", "baby girl"], "child"),
    **dict.fromkeys(["friend", "bestie", "bff", "buddy", "pal"], "friend"),
    **dict.fromkeys(["colleague", "coworker", "co-worker", "workmate", "teammate"], "colleague"),
    **dict.fromkeys(["boss", "manager", "supervisor"], "boss"),
    **dict.fromkeys(
        [
            "cousin", "aunt", "auntie", "uncle", "grandma", "grandmother", "granny", "nana",
            "grandpa", "grandfather", "granddad", "grandad", "niece", "nephew", "grandson",
            "granddaughter", "grandchild", "mother-in-law", "father-in-law", "sister-in-law",
            "brother-in-law", "son-in-law", "daughter-in-law", "stepmom", "stepmother",
            "stepdad", "stepfather", "stepsister", "stepbrother", "stepson", "stepdaughter",
            "half-sister", "half-brother", "godmother", "godfather", "goddaughter", "godson",
        ],
        "relative",
    ),
}  # fmt: skip

#: Plural relation words → predicate ("my kids Leo and Mia").
_RELATION_PLURALS: dict[str, str] = {
    **dict.fromkeys(["sisters"], "sister"),
    **dict.fromkeys(["brothers"], "brother"),
    **dict.fromkeys(["kids", "children", "sons", "daughters", "twins"], "child"),
    **dict.fromkeys(["friends", "besties", "buddies"], "friend"),
    **dict.fromkeys(["colleagues", "coworkers", "co-workers", "teammates"], "colleague"),
    **dict.fromkeys(
        ["cousins", "nieces", "nephews", "grandkids", "grandchildren", "aunts", "uncles"],
        "relative",
    ),
}

# Lexical alternations match in any case; names next to them keep theirs (no re.I there).
_REL_RE = "(?i:" + _alt(_RELATIONS) + ")"
_RELS_RE = "(?i:" + _alt(_RELATION_PLURALS) + ")"
#: Words that may stand between "my" and a relation word ("my little sister Maria").
_REL_MODS = (
    r"(?i:(?:best|closest|close|good|dear|old|oldest|older|elder|eldest|big|little|younger|"
    r"youngest|twin|new|only|lovely|amazing|awesome|wonderful|sweet|favou?rite|adult|"
    r"teenage|work|college|childhood|school|uni|university|online|long-?time|lifelong|"
    r"beloved|two|three|four)\s+)*"
)

#: Pet words → the animal's kind, given as ``object_type``.
_PET_KINDS: dict[str, str] = {
    **dict.fromkeys(["dog", "puppy", "pup", "doggo", "pooch"], "dog"),
    **dict.fromkeys(["cat", "kitten", "kitty"], "cat"),
    **dict.fromkeys(
        [
            "labrador", "golden retriever", "retriever", "labradoodle", "goldendoodle",
            "poodle", "beagle", "corgi", "husky", "bulldog", "french bulldog", "frenchie",
            "pug", "chihuahua", "dachshund", "terrier", "german shepherd", "collie",
            "border collie", "spaniel", "cocker spaniel", "schnauzer", "rottweiler",
            "greyhound", "whippet", "dalmatian", "pitbull", "pit bull", "mastiff",
            "great dane", "shih tzu", "pomeranian", "yorkie", "doberman", "sheepdog",
            "shiba inu", "shiba",
        ],
        "dog",
    ),
    **dict.fromkeys(
        ["tabby", "siamese cat", "persian cat", "ragdoll", "maine coon", "bengal cat", "sphynx"],
        "cat",
    ),
    **{a: a for a in [
        "rabbit", "hamster", "gerbil", "guinea pig", "ferret", "parrot", "parakeet", "budgie",
        "cockatiel", "canary", "bird", "fish", "goldfish", "betta", "turtle", "tortoise",
        "snake", "lizard", "gecko", "iguana", "chinchilla", "hedgehog", "rat", "mouse",
        "horse", "pony", "goat", "pig", "chicken", "hen", "duck", "axolotl", "frog",
    ]},
    "bunny": "rabbit",
}  # fmt: skip


def _plural(word: str) -> str:
    irregular = {"mouse": "mice", "fish": "fish", "goldfish": "goldfish", "sheepdog": "sheepdogs"}
    if word in irregular:
        return irregular[word]
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    return word + "s"


#: Every pet word, singular and plural, → its singular form.
_PET_SINGULAR: dict[str, str] = {
    **{w: w for w in _PET_KINDS},
    **{_plural(w): w for w in _PET_KINDS},
}
_PET_RE = "(?i:" + _alt(_PET_SINGULAR) + ")"

#: Head nouns that make a job title ("senior software engineer" → engineer).
_OCCUPATIONS = _set(
    """accountant actor actress administrator analyst anesthesiologist animator announcer
    anthropologist archaeologist architect archivist artist assistant astronaut astronomer
    athlete attorney auditor author baker banker barber barista bartender biologist blogger
    bookkeeper botanist bricklayer broker builder butcher buyer carpenter cashier caregiver
    caretaker ceo cfo cto coo chef chemist chiropractor choreographer cleaner clerk coach
    comedian composer consultant contractor cook coordinator copywriter counselor counsellor
    courier curator dancer dentist designer detective developer dietitian dietician diplomat
    director dispatcher doctor doula driver economist editor educator electrician engineer
    entrepreneur executive farmer filmmaker firefighter fisherman florist freelancer gardener
    geologist hairdresser hairstylist historian housekeeper hygienist illustrator
    influencer inspector instructor intern interpreter investigator janitor jeweler jeweller
    journalist judge lawyer lecturer librarian lifeguard linguist locksmith machinist manager
    marketer mathematician mechanic mediator medic merchant midwife miner model musician
    nanny neurologist neuroscientist novelist nurse nutritionist officer optician
    optometrist painter paralegal paramedic pastor pediatrician pharmacist philosopher
    photographer physician physicist physiotherapist pianist pilot plumber podcaster poet
    policeman policewoman politician postman priest principal producer professor
    programmer psychiatrist psychologist publicist publisher rabbi realtor receptionist
    recruiter referee reporter researcher salesman saleswoman salesperson scientist sculptor
    secretary senator server sheriff singer songwriter soldier solicitor specialist
    statistician stockbroker strategist student stylist surgeon surveyor tailor tattooist
    teacher technician technologist therapist trainer translator tutor veterinarian vet
    waiter waitress welder writer youtuber zoologist cop paramedic homemaker housewife
    househusband dentist radiologist sonographer pharmacologist mover roofer landscaper
    sommelier bouncer bodyguard guard ranger firefighter paramedic analyst admin sysadmin
    devops""".replace("\n", " ")
)
#: Job titles of more than one word whose head alone is no job ("stay-at-home mom").
_OCCUPATION_PHRASES = (
    "stay-at-home mom", "stay-at-home dad", "stay-at-home parent", "stay at home mom",
    "stay at home dad", "full-time mom", "full-time dad", "flight attendant",
    "real estate agent", "travel agent", "insurance agent", "social worker",
    "construction worker", "dental assistant", "web developer", "software developer",
    "graduate student", "grad student", "phd student", "medical student", "law student",
)  # fmt: skip
_OCCUPATION_SUFFIX = re.compile(r"(?:ologist|ician|iatrist|ographer|apist|eer|smith|wright)$")
_NOT_OCCUPATION = _set(
    "volunteer career pioneer engineer-in-training optimist pessimist realist idealist "
    "perfectionist minimalist feminist activist extremist purist atheist"
)

#: Nationalities ("I'm Canadian" → nationality).
_DEMONYMS = _set(
    """American British English Scottish Welsh Irish Canadian Mexican Brazilian Argentinian
    Argentine Chilean Colombian Peruvian Venezuelan Cuban French German Italian Spanish
    Portuguese Dutch Belgian Swiss Austrian Swedish Norwegian Danish Finnish Icelandic
    Polish Czech Slovak Hungarian Romanian Bulgarian Greek Turkish Russian Ukrainian Serbian
    Croatian Bosnian Slovenian Albanian Lithuanian Latvian Estonian Chinese Japanese Korean
    Vietnamese Thai Filipino Filipina Indonesian Malaysian Singaporean Indian Pakistani
    Bangladeshi Nepali Nepalese Afghan Iranian Iraqi Syrian Lebanese Israeli Palestinian
    Jordanian Saudi Egyptian Moroccan Algerian Tunisian Nigerian Ghanaian Kenyan Ethiopian
    Somali Australian Jamaican Haitian Dominican Taiwanese Mongolian Ecuadorian Bolivian
    Uruguayan Paraguayan Guatemalan Honduran Salvadoran Nicaraguan Panamanian""".replace("\n", " ")
)

#: Languages ("I speak Portuguese and a bit of French").
_LANGUAGES = _set(
    """English Spanish French German Italian Portuguese Dutch Swedish Norwegian Danish Finnish
    Polish Czech Russian Ukrainian Greek Turkish Arabic Hebrew Persian Farsi Hindi Urdu
    Bengali Punjabi Tamil Telugu Marathi Gujarati Mandarin Cantonese Chinese Japanese Korean
    Vietnamese Thai Indonesian Malay Tagalog Swahili Hungarian Romanian Catalan Basque Irish
    Welsh Latin Icelandic Serbian Croatian Bulgarian Slovak Esperanto ASL""".replace("\n", " ")
)

_DIETS = (
    "vegetarian", "vegan", "pescatarian", "pescetarian", "flexitarian", "plant-based",
    "plant based", "keto", "paleo", "gluten-free", "gluten free", "dairy-free", "dairy free",
    "lactose-free", "kosher", "halal", "carnivore", "raw vegan", "low-carb", "low carb",
    "sugar-free", "sugar free",
)  # fmt: skip
_DIET_RE = _alt(_DIETS)

#: Head nouns of events one attends ("a LGBTQ support group", "my cousin's wedding").
_EVENT_NOUNS = _set(
    """concert gig festival fest wedding party conference convention meetup meet-up group
    class course workshop seminar webinar lecture talk show game match exhibition exhibit
    fair expo parade rally protest ceremony graduation funeral memorial retreat camp gala
    fundraiser tournament competition contest race marathon triathlon session meeting
    interview reunion premiere opera ballet play musical recital service mass vigil
    celebration shower potluck barbecue bbq picnic hackathon summit symposium screening
    tasting auction event launch performance audition tryout tryouts orientation bootcamp
    appointment checkup check-up consultation
    5k 10k half-marathon jam mic quiz night club gathering dinner brunch""".replace("\n", " ")
)
#: Head nouns of places one visits ("the beach", "a national park").
_PLACE_NOUNS = _set(
    """beach park museum zoo aquarium lake mountains mountain island countryside coast desert
    forest gallery castle cathedral temple waterfall farm vineyard winery garden gardens
    resort village cabin springs falls canyon ruins palace monastery lighthouse market
    bazaar harbor harbour pier boardwalk""".replace("\n", " ")
)
_PLACE_NOUN_EXCLUDED = _set("ballpark car-park skatepark")

#: Capitalised places, so that "I left Berlin" is not read as leaving an employer.
_KNOWN_PLACES = _set(
    """America USA US UK Britain England Scotland Wales Ireland Canada Mexico Brazil Argentina
    Chile Colombia Peru France Germany Italy Spain Portugal Netherlands Holland Belgium
    Switzerland Austria Sweden Norway Denmark Finland Iceland Poland Greece Turkey Russia
    Ukraine China Japan Korea Vietnam Thailand Philippines Indonesia Malaysia Singapore India
    Pakistan Israel Egypt Morocco Nigeria Kenya Australia Zealand Europe Asia Africa
    London Paris Berlin Madrid Lisbon Porto Rome Milan Amsterdam Brussels Vienna Prague
    Dublin Stockholm Oslo Copenhagen Helsinki Warsaw Athens Istanbul Moscow Tokyo Kyoto
    Osaka Seoul Beijing Shanghai Bangkok Delhi Mumbai Sydney Melbourne Toronto Vancouver
    Montreal Boston Chicago Seattle Portland Austin Denver Miami Atlanta Houston Dallas
    Phoenix Philadelphia York Angeles Francisco Diego Vegas Orleans Washington Texas
    California Florida Ohio Oregon Colorado Arizona Georgia Virginia Michigan Minnesota
    Wisconsin Illinois Massachusetts Jersey Carolina Tennessee Kentucky Alabama Utah Nevada
    Hawaii Alaska Brooklyn Manhattan Bali Barcelona Munich Hamburg Zurich Geneva Edinburgh
    Manchester Liverpool Glasgow Florence Venice Naples Seville Valencia""".replace("\n", " ")
)

#: Capitalised words that are never a person's name at the start of a clause or after
#: "I'm" (lower-cased for lookup). Nationalities and languages are checked apart.
_NOT_NAMES = _set(
    """i me my mine we us our you your he him his she her they them their it its this that
    these those there here what when where why how who which whose the a an and but or so if
    then than yes no not nope yep yeah yup ok okay hi hey hello thanks thank sorry please sure
    fine good great nice cool awesome amazing wow oh ah aw lol haha omg well just really also
    still even maybe perhaps probably definitely actually honestly anyway btw today tonight
    tomorrow yesterday now later soon everyone everybody someone somebody anyone anybody
    nobody none everything something anything nothing people kids children guys folks
    parents family friends all both each every many most some few other another last next
    first new old big little happy glad tired excited ready busy free back home done single
    married engaged divorced retired god jesus lord mom dad mum mommy daddy mama papa grandma
    grandpa granny nana baby honey dear sir madam dude bro man mr mrs ms dr monday tuesday
    wednesday thursday friday saturday sunday january february march april may june july
    august september october november december christmas easter thanksgiving halloween
    summer winter spring fall autumn weekend morning evening night afternoon life work
    school college university love hope christian catholic jewish muslim buddhist hindu
    mormon protestant atheist agnostic been went had got did was were made took saw gay lesbian bisexual straight queer trans black white
    asian latino latina hispanic vegan vegetarian going getting living working trying
    looking feeling doing planning thinking coming leaving moving staying having one two
    three four five six seven eight nine ten hm hmm um uh ugh yay please congrats
    congratulations cheers bye goodbye morning night""".replace("\n", " ")
)

#: Capitalised words that never start or end a place or organisation name.
_NOT_PROPER = _set(
    """i i'm me my we our you your he she they it this that these those there here the a an
    and or but so if then yes no not ok okay hi hey hello thanks sorry please yesterday today
    tomorrow tonight now monday tuesday wednesday thursday friday saturday sunday everyone
    someone nobody everything something nothing mom dad lol haha omg also just really
    still maybe last next""".replace("\n", " ")
)
#: Verbs that open talk about the conversation, not a plan or a goal ("I want to say…").
_CHAT_VERBS = _set(
    """say tell ask know thank share talk chat mention check hear let remind clarify confirm
    think believe guess suppose assume
    add note point answer reply explain discuss update vent rant understand be apologize
    apologise admit stress emphasize emphasise hug wish double-check""".replace("\n", " ")
)
#: What a conversational verb is about when it is talk, not a plan ("say that…").
_CHAT_OBJECTS = _set(
    "you u that if what how about something anything this it so why whether for to thanks "
    "hi hello goodbye sorry more"
)
#: Verb phrases about the conversation that start with an ordinary verb ("see if…").
_CHAT_PHRASE = re.compile(
    r"^(?:make\s+sure|get\s+back\s+to|see\s+(?:if|what|how|whether|where|why|it|that|this)|"
    r"show\s+(?:you|me)|give\s+(?:you|it)|keep\s+(?:you|it|this|that)|send\s+you|"
    r"go\s+(?:now|to\s+bed|to\s+sleep)|clear\s+(?:up|things)|(?:figure|find|work)\s+out\s+"
    r"(?:what|how|where|why|if|whether|which)|decide\s+(?:what|how|where|whether|which|if))\b",
    re.I,
)
#: One-word plans that say too little to keep ("I want to go").
_VAGUE_SINGLE_VERBS = _set("go come stay leave try do help sleep eat rest cry die scream be get")

#: Past tense action verbs whose object makes a ``did`` fact ("ran a charity race").
_ACTION_PAST = _set(
    """achieved adopted applied auditioned baked biked bought booked brewed built camped
    carved caught celebrated climbed coached competed completed composed cooked crafted
    created crocheted cycled danced decorated delivered designed directed donated drew drove
    earned entered explored filmed finished fixed founded gardened gave graduated grew
    hiked hosted installed jogged knit knitted launched learned learnt lost made mastered met
    opened organized organised painted passed performed photographed planted played
    practiced practised prepared presented produced published ran raced raised rebuilt
    received recorded redecorated released remodeled renovated repaired rescued restored
    rode sailed sang saw scored sculpted sewed shot signed skated skied sold started
    submitted surfed swam taught threw took toured trained tried volunteered walked watched
    won wrote got picked checked booked hit bought broke tore hurt brought held led ate
    drank fell found sent moved read""".replace("\n", " ")
)
#: Regular past forms that tell what someone thought, felt, said or intended, not did.
_NOT_ACTIONS = _set(
    """wanted needed liked loved hated enjoyed preferred seemed looked sounded wondered
    realized realised noticed decided tried used talked asked answered replied mentioned
    called texted messaged emailed worried hoped wished missed remembered believed figured
    guessed supposed assumed imagined expected considered happened ended stayed waited
    rested relaxed napped cried laughed smiled complained argued agreed disagreed
    apologized apologised explained admitted promised pretended planned intended managed
    stopped tended deserved owned lived worked studied feared doubted cared mattered
    learned liked annoyed bothered scared excited bored interested surprised shocked
    stressed tired worried confused amazed impressed pleased relieved thrilled
    disappointed exhausted freaked joked chatted shared posted commented replied""".replace(
        "\n", " "
    )
)
#: "got promoted": "got" followed by what happened to the speaker.
_GOT_PARTICIPLES = (
    r"(?:promoted|hired|accepted|admitted|elected|published|selected|nominated|certified|"
    r"vaccinated|baptized|baptised|drafted|tattooed|chosen|recognized|recognised|awarded|"
    r"licensed|ordained|knighted|scouted|shortlisted|waitlisted)"
)
#: Verbs whose object goes somewhere: "took the kids to the zoo".
_TAKES_SOMEWHERE = _set("took brought drove walked sent")
#: Past participles of the irregular action verbs ("I've run a marathon").
_PARTICIPLES = {
    "run": "ran", "won": "won", "made": "made", "built": "built", "written": "wrote",
    "bought": "bought", "taken": "took", "seen": "saw", "given": "gave", "grown": "grew",
    "met": "met", "sung": "sang", "swum": "swam", "ridden": "rode", "driven": "drove",
    "drawn": "drew", "begun": "started", "taught": "taught", "thrown": "threw", "got": "got",
    "gotten": "got", "lost": "lost", "caught": "caught", "sold": "sold", "read": "read",
}  # fmt: skip
#: Tense-ambiguous action verbs ("I read books"): a ``did`` fact only with a date.
_NEEDS_DATE = _set("read hit got hurt ate drank fell sent found")
#: Prepositions an action verb keeps before its object ("signed up for a class").
_VERB_PREPS: dict[str, frozenset[str]] = {
    "graduated": _set("from"), "volunteered": _set("at for with"), "competed": _set("in"),
    "performed": _set("at in"), "applied": _set("for to"), "trained": _set("for"),
    "raced": _set("in"), "walked": _set("in"), "ran": _set("in"), "spoke": _set("at"),
    "presented": _set("at"), "played": _set("in at"), "sang": _set("in at"),
    "learned": _set("to how"), "learnt": _set("to how"), "signed": _set("for"),
    "met": _set("with"), "checked": _set(""), "picked": _set(""), "fell": _set("off from"),
    "moved": _set("into in"),
}  # fmt: skip
_PARTICLES = _set("up out off back down over away")

#: Gerunds whose base form is not the gerund minus "-ing".
_GERUND_BASE = {
    "being": "be", "seeing": "see", "having": "have", "making": "make", "taking": "take",
    "coming": "come", "giving": "give", "living": "live", "moving": "move", "driving": "drive",
    "leaving": "leave", "writing": "write", "riding": "ride", "hiking": "hike",
    "baking": "bake", "dancing": "dance", "skating": "skate", "smoking": "smoke",
    "dating": "date", "sharing": "share", "using": "use", "changing": "change",
    "becoming": "become", "retiring": "retire", "celebrating": "celebrate",
    "competing": "compete", "creating": "create", "exploring": "explore",
    "graduating": "graduate", "practicing": "practice", "practising": "practise",
    "preparing": "prepare", "purchasing": "purchase", "serving": "serve", "caring": "care",
    "racing": "race", "raising": "raise", "hosting": "host", "continuing": "continue",
    "running": "run", "swimming": "swim", "shopping": "shop", "planning": "plan",
    "sitting": "sit", "putting": "put", "quitting": "quit", "stopping": "stop",
    "jogging": "jog", "chatting": "chat", "winning": "win", "beginning": "begin",
    "getting": "get", "cutting": "cut", "setting": "set", "travelling": "travel",
    "lying": "lie", "dying": "die", "tying": "tie", "choosing": "choose", "losing": "lose",
    "producing": "produce", "organizing": "organize", "organising": "organise",
    "volunteering": "volunteer", "debuting": "debut", "biking": "bike",
    "voting": "vote", "hoping": "hope", "joking": "joke", "smiling": "smile", "daring": "dare",
    "comparing": "compare", "managing": "manage", "arranging": "arrange",
    "exercising": "exercise", "closing": "close", "announcing": "announce",
    "releasing": "release", "promoting": "promote", "completing": "complete",
    "relocating": "relocate", "decorating": "decorate", "injuring": "injure",
    "pursuing": "pursue", "renovating": "renovate", "including": "include",
    "visiting": "visit", "quoting": "quote", "rating": "rate",
}  # fmt: skip
_BASE_GERUND = {base: ing for ing, base in _GERUND_BASE.items()} | {"travel": "traveling"}

#: Hobby words accepted after "took up" / "got into" besides any "-ing" word.
_HOBBY_NOUNS = _set(
    """yoga pilates pottery chess guitar piano violin cello drums ukulele photography golf
    tennis boxing karate judo jiu-jitsu archery fencing meditation calligraphy crochet origami
    woodworking birdwatching dance ballet salsa tango ceramics astronomy poetry soccer football
    basketball volleyball baseball hockey badminton squash pickleball crossfit weightlifting
    bouldering parkour taekwondo theater theatre improv watercolor watercolors watercolour
    embroidery quilting scrapbooking beekeeping running climbing sewing knitting""".replace(
        "\n", " "
    )
)

#: Two-word expressions joined by "and" that are one thing ("mac and cheese").
_COMPOUNDS = _set(
    "rock-and-roll mac-and-cheese fish-and-chips salt-and-pepper peanut-butter-and-jelly "
    "drum-and-bass rhythm-and-blues arts-and-crafts hide-and-seek bread-and-butter "
    "black-and-white sweet-and-sour trial-and-error surf-and-turf rock-n-roll "
    "dungeons-and-dragons pb-and-j r-and-b"
)

# --------------------------------------------------------------------------- normalising

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


# ----------------------------------------------------------------------------- sentences

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


# ------------------------------------------------------------------------------- clauses

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
    r"|a\s+while\s+(?:ago|back)|some\s+day|someday|one\s+day|eventually|soon)\b",
    re.I,
)
_FREE_TIME = re.compile(
    r"(?:^|\s+)(?:in|during)\s+(?:my|our)\s+(?:free|spare|down|leisure)\s*time\b|\s+as\s+a\s+hobby\b",
    re.I,
)
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
    r"|(?:the|his|her|their|this|that)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are|was|were|has|had|[a-z]+ed)\b)"
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
    rf"|\s*,\s*(?={_SUBJECT_START})(?!(?i:my|our)\s+{_REL_MODS}{_REL_RE}\s*,))"
    rf"|(?P<ell>\s*,?\s+(?:and|but|so|and\s+then|and\s+also|but\s+now|and\s+now)\s+(?=(?:\|\s*)*{_VERB_START})"
    rf"|\s*,\s*(?=(?:\|\s*)*{_VERB_START}(?<!\bam)(?<!\bis)(?<!\bare)))"
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
_NAME_TOKEN = r"[A-Z\u00C0-\u00DE][a-z\u00DF-\u00FF]+(?:[-'][A-Za-z\u00C0-\u00FF]+)?"
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


@dataclass(slots=True)
class _SentenceInfo:
    dates: list[str]


def _mask_times(text: str) -> tuple[str, list[tuple[str, bool]]]:
    """``text`` with each date phrase and vague time replaced by ``|``, and what each ``|``
    stands for, in order: ``(phrase, is_a_date)``."""
    found = [(s, e, True) for s, e in find_date_spans(text, "en")]
    found += [(m.start(), m.end(), False) for m in _VAGUE_TIME.finditer(text)]
    found.sort()
    pieces: list[str] = []
    marks: list[tuple[str, bool]] = []
    last = 0
    for start, end, is_date in found:
        if start < last:
            continue  # a vague time inside a date phrase
        pieces.append(text[last:start])
        pieces.append(" | ")
        marks.append((text[start:end], is_date))
        last = end
    pieces.append(text[last:])
    return " ".join("".join(pieces).split()), marks


def _clauses(sentence: str, marks: list[tuple[str, bool]], info: _SentenceInfo) -> list[_Clause]:
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
    return out


def _clause(
    prefix: str,
    text: str,
    marks: list[tuple[str, bool]],
    info: _SentenceInfo,
    inherit: bool,
    subordinate: bool,
) -> _Clause:
    phrases = iter(marks)
    evidence = _MARK.sub(lambda _: next(phrases, ("", False))[0], text).strip(" ,")
    work = prefix + text
    free_time = bool(_FREE_TIME.search(work))
    if free_time:
        work = _FREE_TIME.sub(" ", work)
    anymore = bool(_ANYMORE.search(work))
    if anymore:
        work = _ANYMORE.sub(" ", work)
    if _LEADING_SUBORDINATE.match(work.lstrip("| ")):
        subordinate = True
    return _Clause(
        text=" ".join(work.split()),
        evidence=" ".join(evidence.split()),
        dates=[phrase for phrase, is_date in marks if is_date],
        vague=[phrase for phrase, is_date in marks if not is_date],
        sentence=info,
        inherit=inherit,
        subordinate=subordinate,
        anymore=anymore,
        free_time=free_time,
    )


# -------------------------------------------------------------------------------- objects

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
    r"though|instead|together|like\s+(?:crazy|mad)|sometimes|often|usually|occasionally|"
    r"regularly|daily|weekly|always|rarely|mostly|anyway|lately|still)\b"
)
#: Where a noun-phrase object ends.
_NP_STOP = re.compile(r"\s*(?:[,;:!?()\"|]|" + _DOT_END + r"|\s-\s)|" + _NP_STOP_WORDS, re.I)
#: Where a list of noun phrases ends: as :data:`_NP_STOP`, but a comma only ends it before
#: a new clause ("hiking, jazz and sushi" is one list; "hiking, which…" is not).
_LIST_STOP = re.compile(
    r"\s*(?:[;:!?()\"|]|" + _DOT_END + r"|\s-\s)"
    r"|\s*,\s*(?=(?:the|his|her|their|this|that)\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are|was|were|has|had|[a-z]+ed)\b)"
    r"|\s*,\s*(?=(?:which|who|that|because|but|so|especially|though|it|I|and\s+I|since|when|"
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
    r"all\s+of\s+(?:it|them)|both\s+of\s+them|so|such|too|very|more|less|much|not|no|any)\b",
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


# Small patterns the handlers use (compiled once, here).
_CAPITAL_NEXT = re.compile(r"\s+[A-Z]")
_MARK = re.compile(r"\|")
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
    r"^(?:(?:one|two|three|four|five|\d+|another|new|little|cute|adorable|sweet|lovely|"
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
    for item in items:
        bare = _bare(item)
        if not bare or _PRONOUN_START.match(item) or len(bare.split()) > 6:
            break  # the list ended; what follows is something else
        if bare.casefold() in _RELATIONS or bare.casefold() in _RELATION_PLURALS:
            continue
        out.append(bare)
    return out


def _vp(text: str) -> str | None:
    """A verb phrase for a plan, decision or goal, cut at the clause boundary ("visit Japan
    with my wife because…" → "visit Japan"); ``None`` for talk about the conversation
    ("tell you something") and empty phrases."""
    vp = _cut(text, _VP_STOP)
    words = vp.split()
    if not words or len(words) > 12:
        return None
    first = words[0].casefold()
    if _CHAT_PHRASE.match(vp):
        return None
    if first == "be":
        if len(words) < 2 or words[1] not in ("a", "an", "in", "at", "on"):
            return None
    elif first in _CHAT_VERBS and (len(words) <= 2 or words[1].casefold() in _CHAT_OBJECTS):
        return None  # "tell you something", "ask about it"; not "ask my boss for a raise"
    if len(words) == 1 and first in _VAGUE_SINGLE_VERBS:
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
    return stem


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
        if low in _NOT_NAMES or token in _DEMONYMS or token in _LANGUAGES:
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


# --------------------------------------------------------------------------- the message


@dataclass(frozen=True, slots=True)
class _Subject:
    name: str
    kind: str  # "self", "person" or "pet"
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class _Hit:
    """A fact a rule found, before negation and dates are applied."""

    predicate: str
    obj: str
    object_type: str | None = None
    confidence: float = 0.9
    timing: str | None = None  # "past" / "future": the fact takes the clause's date
    negated: bool = False
    subject: str | None = None  # the fact's subject when it is not the clause's
    entity: str | None = None  # the object's entity type when it names one


#: Predicates a "no longer…" cannot retract: events happened, plans are not states.
_NOT_RETRACTABLE = frozenset(
    {"name", "age", "did", "visited", "attended", "plans", "decided", "goal"}
)
_FUTURE_VAGUE = re.compile(
    r"^(?:next|this\s+coming|coming|later|soon|some\s*day|one\s+day|eventually|in\s+"
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december))\b",
    re.I,
)
_FUTURE_WORDS = re.compile(
    r"\b(?:next|tomorrow|coming|from\s+now|tonight|in\s+(?:\d+|a|an|two|three|four|five|six|"
    r"a\s+couple\s+of)\s+\w+|this)\b",
    re.I,
)


@dataclass(slots=True)
class _Message:
    """One message being read: who said it and when, and what was found so far."""

    speaker: str
    timestamp: datetime | None
    facts: list[ExtractedFact] = field(default_factory=list)
    entities: dict[str, ExtractedEntity] = field(default_factory=dict)
    last_person: str | None = None
    seen: set[tuple[str, str, str, bool]] = field(default_factory=set)

    def date_of(self, clause: _Clause, timing: str) -> date | None:
        """The first date of ``clause`` (else of its sentence) that fits ``timing``."""
        for phrases in (clause.dates, clause.sentence.dates):
            for phrase in phrases:
                day = self.resolve(phrase, timing)
                if day is not None:
                    return day
        return None

    def resolve(self, phrase: str, timing: str) -> date | None:
        prefer: Preference = "past" if timing == "past" else "future"
        if self.timestamp is None:
            found = find_dates(phrase, None, "en")
            return found[0].value if found else None
        day = resolve_date(phrase, self.timestamp, "en", prefer=prefer)
        if day is None:
            return None
        today = self.timestamp.date()
        if (timing == "past" and day > today) or (timing == "future" and day < today):
            return None
        return day

    def has_future_date(self, clause: _Clause) -> bool:
        """Whether ``clause`` (or its sentence) names a time that is still to come: a day
        ("next Friday"), or a vague future ("next summer", "in June", "soon")."""
        if any(_FUTURE_VAGUE.match(phrase) for phrase in clause.vague):
            return True
        if self.timestamp is None:
            return any(_FUTURE_WORDS.search(p) for p in clause.dates + clause.sentence.dates)
        return self.date_of(clause, "future") is not None

    def add(self, subject: str, hit: _Hit, clause: _Clause, factor: float = 1.0) -> None:
        obj = " ".join(hit.obj.split()).strip(" ,.;:!?'\"-|")
        if not obj or len(obj) > 120:
            return
        key = (subject.casefold(), hit.predicate, obj.casefold(), hit.negated)
        if key in self.seen:
            return
        self.seen.add(key)
        when = self.date_of(clause, hit.timing) if hit.timing else None
        self.facts.append(
            ExtractedFact(
                subject=subject,
                predicate=hit.predicate,
                object=obj,
                object_type=hit.object_type or hit.entity,
                negated=hit.negated,
                date=when,
                confidence=round(hit.confidence * factor, 3),
                evidence=clause.evidence,
            )
        )
        if hit.entity:
            self.entity(obj, hit.entity)

    def entity(self, name: str, kind: str) -> None:
        if name not in self.entities and name != SELF:
            self.entities[name] = ExtractedEntity(name=name, type=kind)

    def person(self, name: str, kind: str = "person") -> None:
        """``name`` is a third party of this message (for "he"/"she" later on)."""
        self.entity(name, kind)
        if kind == "person":
            self.last_person = name


# ------------------------------------------------------------------------------- subjects

_LEAD = re.compile(
    r"^(?:\|+\s*|[a-z]+ly\b\s*,?\s*(?=(?:I|we|my|our)\b)|(?:oh|ah|aw|well|so|and|but|also|anyway|anyways|actually|honestly|btw|"
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
_NAMED_RELATIVE = re.compile(
    rf"^(?i:my|our)\s+{_REL_MODS}(?P<rel>{_REL_RE})\s*,?\s+(?P<name>{_PERSON}(?:\s+{_NAME_TOKEN})?)(?:\s*,?\s+|\s*,?\s*$)",
)
_NAMED_PET = re.compile(
    rf"^(?i:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<pet>{_PET_RE})\s*,?\s+(?P<name>{_NAME_TOKEN})\s*,?\s+",
)
_OWNER_RELATIVE = re.compile(
    rf"^(?P<owner>{_NAME_TOKEN})'s\s+{_REL_MODS}(?P<rel>{_REL_RE})\s*,?\s+(?P<name>{_NAME_TOKEN})\s*,?\s+",
)
_FRIEND_OF_MINE_SUBJECT = re.compile(
    rf"^(?i:a)\s+(?i:good\s+|close\s+|old\s+)?(?i:friend)\s+(?i:of)\s+(?i:mine|ours)\s*,?\s+"
    rf"(?:(?i:named|called)\s+)?(?P<name>{_NAME_TOKEN})\s*,?\s+"
)
_APPOSITIVE = re.compile(rf"^,\s*(?i:my|our)\s+{_REL_MODS}(?P<rel>{_REL_RE})\s*,\s*")
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
        and low not in _NOT_NAMES
        and word not in _DEMONYMS
        and word not in _LANGUAGES
        and (low not in _RELATIONS or low in _ALSO_NAMES)
        and (low not in _PET_SINGULAR or low in _ALSO_NAMES)
    )


#: Relation and animal words that are also common (pet) names: "our dog Buddy".
_ALSO_NAMES = _set("buddy pal kitty bunny pepper")


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
        return _Subject(name, "person"), text[m.end() :]
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
    appositive = _APPOSITIVE.match(rest)
    if appositive:
        _relation(msg, clause, msg.speaker, appositive.group("rel"), name)
        rest = rest[appositive.end() :]
    elif not rest.startswith(" "):
        return None
    msg.person(name)
    return _Subject(name, "person"), rest


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


# ---------------------------------------------------- relations and pets named anywhere

_ANY_RELATIVE = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+{_REL_MODS}(?P<rel>{_REL_RE})\s*,?\s+(?P<name>{_PERSON})\b(?!')",
)
_ANY_RELATIVES = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+{_REL_MODS}(?P<rel>{_RELS_RE})\s*,?\s+(?:are\s+)?(?:named\s+|called\s+)?"
    rf"(?P<names>{_NAME_TOKEN}(?:\s*,\s*{_NAME_TOKEN})*\s*,?\s+(?:and|&)\s+{_NAME_TOKEN})",
)
_RELATIVE_CALLED = re.compile(
    rf"(?<![\w'])(?i:my|our)\s+{_REL_MODS}(?P<rel>{_REL_RE})(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+(?P<name>{_NAME_TOKEN})",
)
_FRIEND_OF_MINE = re.compile(
    rf"\b(?i:a)\s+(?:good\s+|close\s+|old\s+)?friend\s+of\s+(?:mine|ours)\s*,?\s+(?:named\s+|called\s+)?(?P<name>{_NAME_TOKEN})"
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


def _capitalised_at_random(m: re.Match[str]) -> bool:
    """True when the relation word is capitalised mid-sentence ("my Mom Said"): such text
    capitalises words at random, so its names cannot be trusted."""
    word = m.group(1)
    return word[:1].isupper() and m.start() > 0


# -------------------------------------------------------------------------------- rules


@dataclass(slots=True)
class _Ctx:
    """What a rule handler sees: the message, the clause and its subject."""

    msg: _Message
    clause: _Clause
    subject: _Subject

    @property
    def is_self(self) -> bool:
        return self.subject.kind == "self"


_Handler = Callable[[re.Match[str], _Ctx], list[_Hit]]


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    handler: _Handler


def _rule(pattern: str, handler: _Handler) -> _Rule:
    return _Rule(re.compile(pattern, re.I), handler)


_BE = r"(?:am|is|are)"
_HAVE = r"(?:have|has)"
_AGE_END = (
    r"(?=\s*(?:$|[,;!|]|\.(?!\d)|(?:and|but|now|today|btw|lol|haha|myself|too|already|"
    r"this|as\s+of|turning|going\s+on)\b))"
)


def _h_age(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    years = int(m.group("n"))
    return [_Hit("age", str(years), confidence=0.9)] if 1 <= years <= 120 else []


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
        org = _org(place.group("o"))
        if org and title.casefold().endswith("student"):
            return [h for h in hits if h.predicate != "job"] + [
                _Hit("studies_at", org, entity="organization", confidence=0.9)
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
    org = _org(at.group("o")) if at else None
    if org and org not in _KNOWN_PLACES:
        return [_Hit("works_at", org, entity="organization", confidence=0.85, timing="past")]
    return []


_CALLED = re.compile(r"^(?P<np>.+?)\s+(?:called|named)\s+(?P<name>[A-Z0-9].*)$")


def _h_works_at(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """An employer: "I work at Google (as an engineer)", "…for a startup called
    Brightloop"."""
    target = m.group("o")
    org = _org(target)
    if org is None:
        called = _CALLED.match(_cut(target, _LIST_STOP))
        org = _org(called.group("name")) if called else None
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


def _h_joined(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    target = m.group("o")
    org = _org(target)
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
    org = _org(m.group("o"))
    if not org or org in _KNOWN_PLACES:
        return []
    return [_Hit("studies_at", org, entity="organization", confidence=0.9)]


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


def _h_eats(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    objects = _pref_objects(m.group("o"))
    first = m.group("o").strip().split()[:1]
    if not objects or (first and first[0].casefold() in _NOT_FOOD):
        return []
    return [_Hit("eats", o, confidence=0.85) for o in objects]


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
    return [_Hit("hobby", np, confidence=0.85, timing="past")]


_NOT_HOBBY_VERBS = _set("am is are like love enjoy usually often do have just can will would")


def _h_free_time(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    """A pastime: "I paint in my free time" → hobby painting; "…I go hiking" → hiking."""
    verb = m.group("v").casefold()
    if verb in _NOT_HOBBY_VERBS:
        return []
    rest = _cut(m.group("o") or "", _ACTION_STOP)
    if verb in ("go", "goes") and rest.split()[:1] and rest.split()[0].endswith("ing"):
        return [_Hit("hobby", rest, confidence=0.8)]
    if verb.endswith("s") and not verb.endswith("ss"):
        verb = verb[:-1]
    if _PRONOUN_START.match(rest):
        return []
    activity = _gerund(verb) + (" " + rest if rest else "")
    return [_Hit("hobby", activity, confidence=0.8)]


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
    vp = _vp(f"{_base(gerund)} {rest}".strip())
    if vp is None or len(vp.split()) < 2:
        return []
    return [_Hit("plans", vp, confidence=0.8, timing="future")]


def _h_decided(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    vp = _vp(m.group("o"))
    return [_Hit("decided", vp, confidence=0.9, timing="past")] if vp else []


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


def _h_rather(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    text = _RATHER_SPLIT.split(m.group("o"), maxsplit=1)[0]
    text = _RATHER_VERB.sub("", text.strip())
    objects = _pref_objects(text)
    return [_Hit("prefers", objects[0], confidence=0.8)] if objects else []


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
    return [_Hit("attended", bare, confidence=0.9, timing="past")]


def _h_went_doing(m: re.Match[str], ctx: _Ctx) -> list[_Hit]:
    return [_Hit("did", f"went {m.group('g').casefold()}", confidence=0.8, timing="past")]


_DID_NOT_OBJECT = _set(
    "it that this them him me us something everything nothing sure up out here there home "
    "abroad away around back together"
)
_DID_EXCLUDED = re.compile(
    r"^(?:ran\s+(?:out|into|late|away)|made\s+(?:sure|it|up|out|fun)|took\s+(?:care|place|part|time|a\s+(?:nap|break|"
    r"look|moment|second|minute|breath|shower))|got\s+(?:to|back|home|up|out|it|there|over|"
    r"used|lost|sick|married|engaged|divorced|tired|bored|ready)|passed\s+away|picked\s+up\s+"
    r"(?:my|the|a|her|his|our)\s+(?:kids?|son|daughter|phone|call)|saw\s+(?:that|it|this|you)|"
    r"lost\s+(?:it|track|my\s+mind|interest)|tried\s+(?:to|my\s+best|hard)|gave\s+up|"
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
    if verb in _NEEDS_DATE and not has_date:
        return []
    tail = m.group("o") or ""
    if verb == "got" and (outcome := _got_outcome(tail)):
        return [_Hit("did", outcome, confidence=0.8, timing="past")]
    if _DID_EXCLUDED.match(f"{raw_verb} {tail}".strip()):
        return []
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
    org = _org(where.group("o")) if where else None
    return f"{outcome} {where.group('prep')} {org}" if where and org else outcome


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
    if len(obj_words) > 6:
        return None
    if verb in _TAKES_SOMEWHERE:  # "took the kids to the science museum"
        where = _TO_PLACE.match(rest[len(obj) :])
        place = _cut(where.group("np"), _ACTION_STOP) if where else ""
        if place and len(place.split()) <= 5 and not _PRONOUN_START.match(place):
            obj_words += ["to", *place.split()]
    return " ".join(kept + obj_words)


_POSSESSIVES = _set("her his their some one")


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
_ACTION_VERB_RE = (
    r"(?P<v>[a-z]+ed|" + "|".join(sorted(w for w in _ACTION_PAST if not w.endswith("ed"))) + r")"
)
_PARTICIPLE_RE = r"(?P<v>[a-z]+ed|" + "|".join(sorted(_PARTICIPLES)) + ")"

# The rule table: tried in order on the text after the subject; the first handler that
# returns hits wins. Verb forms cover "I …" and "Lena …".
# fmt: off
_RULES: tuple[_Rule, ...] = (
    # identity
    _rule(rf"^{_BE}\s+(?P<n>\d{{1,3}})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y/?o|\s+years\s+young)?{_AGE_END}", _h_age),
    _rule(rf"^(?:just\s+)?turned\s+(?P<n>\d{{1,3}}){_AGE_END}", _h_age),
    _rule(r"^(?:am|is)\s+(?:called|named)\s+(?P<o>.+)", _h_name),
    _rule(r"^(?:go|goes)\s+by\s+(?P<o>.+)", _h_name),
    _rule(rf"^(?:am|is)\s+(?:originally\s+)?(?P<o>{_DEMONYM_RE})(?=\s*(?:$|[,;!.|]|(?:and|but|by|too|myself|originally|through)\b))", _h_nationality),
    _rule(r"^am\s+(?P<o>[A-Z].*)", _h_name),
    _rule(rf"^(?:{_BE}\s+(?:originally\s+|actually\s+|also\s+)?from|(?:come|comes)\s+(?:originally\s+)?from|(?:was|were)\s+(?:born\s+and\s+(?:raised|bred)|born|raised)\s+in|grew\s+up\s+in|hails?\s+from)\s+(?P<o>.+)", _h_from),
    _rule(rf"^(?:(?:{_HAVE}\s+been\s+)?(?:live|lives|living|reside|resides|residing)|{_BE}\s+(?:living|residing|based|settled|staying)|based|settled)\s+(?:here\s+|there\s+|now\s+|full[- ]time\s+)?(?:in|on)\s+(?P<o>.+)", _h_lives),
    _rule(rf"^{_HAVE}\s+lived\s+in\s+(?P<o>.+?)\s*(?:for|since|\|)", _h_lives),
    _rule(r"^(?:call|calls)\s+(?P<o>[A-Z].*?)\s+home\b", _h_lives),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+|also\s+)?(?:moved|relocated)\s+(?:out\s+of|away\s+from)\s+(?P<o>.+)", _h_moved_out),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+|also\s+)?(?:moved|relocated)(?:\s+(?:back|over|here|away|out|all\s+the\s+way))?(?:\s+from\s+(?P<f>.+?))?\s+to\s+(?P<o>.+)", _h_moved),
    _rule(rf"^{_BE}\s+(?:moving|relocating)\s+(?:back\s+|over\s+)?to\s+(?P<o>.+)", _h_moving),
    _rule(rf"^(?:work|works|working|{_BE}\s+(?:currently\s+)?working|{_HAVE}\s+been\s+working)\s+as\s+(?:an?\s+|the\s+)?(?P<o>.+)", _h_job_as),
    _rule(rf"^{_BE}\s+(?:an?)\s+(?P<f>[a-z]+(?:\s+[a-z]+)?)\s+(?:student|major)\b(?P<rest>.*)", _h_student_of),
    _rule(rf"^{_BE}\s+(?:now\s+|currently\s+|still\s+)?(?:an?)\s+(?P<o>.+)", _h_job_is),
    _rule(rf"^{_HAVE}\s+been\s+(?:an?)\s+(?P<o>.+?)\s*(?:for|since|\|)", _h_job_is),
    _rule(rf"^(?:became|{_HAVE}\s+become)\s+(?:an?)\s+(?P<o>.+)", _h_job_became),
    _rule(rf"^{_BE}\s+(?:a|an)\s+(?P<n>\d{{1,3}})[- ]year[- ]old\b(?!\s+\w+\s+(?:named|called))", _h_age),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+)?(?:got|landed|accepted|started|found|took|gotten|taken)\s+(?:an?\s+|my\s+|the\s+|her\s+|his\s+)?(?:new\s+|first\s+|dream\s+|full-time\s+|part-time\s+)?(?:job|position|role|gig|internship)\s+(?P<o>.+)", _h_new_job),
    _rule(rf"^(?:{_BE}\s+(?:now\s+)?employed|(?:work|works|{_BE}\s+(?:currently\s+)?working|{_HAVE}\s+been\s+working|{_HAVE}\s+worked))\s+(?:at|for|by)\s+(?P<o>.+)", _h_works_at),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|officially\s+)?(?:joined|started\s+(?:working\s+)?at|started\s+working\s+for|got\s+hired\s+(?:at|by)|(?:was|were)\s+hired\s+(?:at|by)|signed\s+with)\s+(?P<o>.+)", _h_joined),
    _rule(rf"^(?:work|works|{_BE}\s+(?:currently\s+)?working|{_HAVE}\s+been\s+working)\s+on\s+(?P<o>.+)", _h_works_on),
    _rule(rf"^(?:was|were|{_HAVE}\s+been|got|{_BE}\s+(?:being\s+)?)\s*(?P<v>re-?assigned|assigned|transferred|moved|switched|shifted|put|reallocated)\s+(?:over\s+)?(?:from\s+(?P<f>.+?)\s+)?to\s+(?:work\s+on\s+)?(?P<o>.+)", _h_reassigned),
    _rule(r"^(?P<v>switched|moved|transferred)\s+(?:over\s+)?(?:from\s+(?P<f>.+?)\s+)?to\s+(?P<o>(?:the\s+)?project\s+.+|(?:the\s+)?[A-Z]\S*\s+(?:project|team).*)", _h_reassigned),
    _rule(rf"^(?P<v>administers?|administered|manages?|leads?|heads?|runs?|oversees?|maintains?|coordinates?|supervises?|chairs?|organi[sz]es?|moderates?|owns?|directs?|captains?|coaches?|{_BE}\s+(?:managing|leading|running|heading|overseeing))\s+(?P<o>.+)", _h_role),
    _rule(rf"^{_BE}\s+(?:now\s+)?(?:in\s+charge\s+of|responsible\s+for)\s+(?P<o>.+)", _h_responsible),
    _rule(rf"^(?:{_BE}\s+(?:a|an)\s+(?:\w+\s+){{0,2}}?(?:student|freshman|sophomore|undergrad|undergraduate|postdoc|grad)|{_BE}\s+(?:currently\s+)?(?:enrolled|studying)|study|studies|{_BE}\s+doing\s+(?:a|an|my|her|his)\s+\S+(?:\s+degree)?|(?:go|goes)\s+to\s+(?:school|college|university|uni|grad\s+school))\s+(?:at|in)\s+(?P<o>.+)", _h_studies_at),
    _rule(r"^(?:attend|attends|(?:am|is|are)\s+attending|(?:go|goes)\s+to)\s+(?P<o>.+)", _h_attends_school),
    _rule(r"^(?:just\s+|recently\s+|finally\s+)?(?:started|began|enrolled\s+(?:in|at))\s+" r"(?:(?:college|university|uni|school|grad\s+school|law\s+school|med\s+school|medical\s+school|" r"kindergarten|high\s+school|(?:a|an|my|her|his)\s+(?:\w+\s+)?(?:degree|program|programme|masters?|phd|course))\s+)?(?:at|in)?\s*(?P<o>[A-Z].*)", _h_school_start),
    _rule(rf"^(?:study|studies|{_BE}\s+(?:currently\s+)?studying|(?:major|majors)\s+in|{_BE}\s+majoring\s+in|{_BE}\s+(?:doing|pursuing|getting|finishing|working\s+on)\s+(?:an?|my|her|his)\s+(?:degree|phd|ph\.d\.?|master'?s|masters|bachelor'?s|bachelors|ba|bs|ma|ms|msc|bsc|diploma|doctorate)(?:\s+degree)?\s+in)\s+(?P<o>.+)", _h_studies),
    _rule(rf"^(?:speak|speaks|can\s+speak|{_BE}\s+fluent\s+in)\s+(?P<o>.+)", _h_speaks),
    _rule(rf"^{_BE}\s+(?:happily\s+|newly\s+|recently\s+|now\s+)?(?P<o>single|married|divorced|engaged|widowed|separated)(?!\s+(?:to|from)\b)(?=\s*(?:$|[,;!.|]|(?:and|but|now|with|at|for|again|currently|right|too|myself|since|lol|haha|happily)\b))", _h_status),
    _rule(rf"^(?:{_HAVE}\s+)?(?:just\s+|recently\s+|finally\s+)?got\s+(?P<o>married|engaged|divorced)(?:\s+to\s+(?P<p>.+))?", _h_got_status),
    _rule(rf"^{_BE}\s+(?:happily\s+)?married\s+to\s+(?P<o>.+)", _h_partner("spouse")),
    _rule(rf"^{_BE}\s+engaged\s+to\s+(?P<o>.+)", _h_partner("partner")),
    _rule(rf"^(?:{_BE}\s+(?:dating|in\s+a\s+relationship\s+with|going\s+out\s+with)|(?:am|is)\s+with)\s+(?P<o>[A-Z].*)", _h_partner("partner")),
    _rule(r"^married\s+(?P<o>[A-Z].*)", _h_partner("spouse")),
    _rule(r"^(?P<v>broke\s+up\s+with|split\s+up\s+with|divorced|(?:got\s+)?divorced\s+from|separated\s+from)\s+(?P<o>[A-Z].*)", _h_broke_up),
    _rule(rf"^{_BE}\s+(?:a\s+)?(?P<o>trans(?:gender)?\s+(?:woman|man|girl|guy)|non-?binary|genderqueer|genderfluid|transgender|agender)\b", _h_gender),
    _rule(rf"^is\s+(?:also\s+)?my\s+{_REL_MODS}(?P<r>{_REL_RE})\b", _h_is_my_relative),
    _rule(rf"^is\s+(?:also\s+)?my\s+(?:[\w-]+\s+){{0,2}}?(?P<p>{_PET_RE})\b", _h_is_my_pet),
    _rule(rf"^{_HAVE}\s+(?:an?|one|two|three|four|\d)\s+{_REL_MODS}(?P<r>{_RELS_RE}|{_REL_RE})\b\s*(?:,|:)?\s*(?:(?:who\s+is\s+|that\s+is\s+)?(?:named|called)\s+)?(?P<o>[A-Z].*)", _h_has_relatives),
    _rule(r"^(?:just\s+|recently\s+)?(?:had|welcomed|adopted)\s+(?:an?|our|their|her|his|my)\s+(?:new\s+|little\s+|baby\s+)?" r"(?:baby|son|daughter|boy|girl)(?:\s+(?:boy|girl))?\s*,?\s+(?:named|called)\s+(?P<o>[A-Z].*)", _h_new_child),
    # negation idioms
    _rule(r"^(?P<v>quit|left|lost|resigned\s+from|walked\s+away\s+from|(?:got|was|were)\s+(?:fired|laid\s+off|let\s+go)\s+from)\s+(?P<o>.+)", _h_quit_job),
    # pets
    _rule(rf"^(?P<v>{_HAVE}\s+(?:got|gotten|adopted|rescued)|{_HAVE}|own|owns|got|adopted|rescued|bought|brought\s+home|took\s+in|welcomed|{_BE}\s+(?:adopting|getting|fostering)|foster|fosters)\s+(?P<o>.+)", _h_pet),
    # preferences
    _rule(rf"^{_BE}\s+(?:severely\s+|very\s+|really\s+|deathly\s+|mildly\s+|slightly\s+|super\s+|extremely\s+|highly\s+|a\s+bit\s+|a\s+little\s+)?allergic\s+to\s+(?P<o>.+)", _h_allergic),
    _rule(rf"^{_HAVE}\s+(?:an?\s+)?(?:severe\s+|mild\s+|bad\s+|serious\s+|terrible\s+|deadly\s+|life-threatening\s+)?(?:allerg(?:y|ies)|intolerance)\s+to\s+(?P<o>.+)", _h_allergic),
    _rule(rf"^{_BE}\s+(?:severely\s+|very\s+|mildly\s+|slightly\s+|a\s+bit\s+)?(?P<o>lactose|gluten|fructose|histamine|caffeine)[- ]intolerant\b", _h_allergy),
    _rule(rf"^{_BE}\s+(?:severely\s+|very\s+|mildly\s+|slightly\s+|a\s+bit\s+)?intolerant\s+(?:to|of)\s+(?P<o>.+)", _h_allergic),
    _rule(rf"^{_HAVE}\s+(?:an?\s+)?(?:severe\s+|mild\s+|bad\s+|serious\s+|terrible\s+|deadly\s+|life-threatening\s+)?(?P<o>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s+allerg(?:y|ies)\b", _h_allergy),
    _rule(rf"^(?:{_BE}|{_HAVE}\s+been)\s+(?:an?\s+)?(?:strict\s+|committed\s+|lifelong\s+|full-time\s+|proud\s+|now\s+|fully\s+|mostly\s+)?(?P<o>{_DIET_RE})(?=\s*(?:$|[,;!.|]|(?:and|but|now|since|for|too|myself|these)\b))", _h_diet),
    _rule(rf"^(?:{_BE}\s+(?:on|following|doing)|follow|follows|eat|eats)\s+(?:an?\s+|the\s+)?(?:strict\s+)?(?P<o>{_DIET_RE})(?:\s+diet)?\b", _h_diet),
    _rule(rf"^(?:went|{_HAVE}\s+gone|turned|became|{_HAVE}\s+become|switched\s+to\s+being)\s+(?:an?\s+)?(?:full\s+)?(?P<o>{_DIET_RE})\b", _h_diet),
    _rule(rf"^(?:eat|eats|{_BE}\s+eating)\s+(?P<o>.+)", _h_eats),
    _rule(r"^(?:hate|hates|dislike|dislikes|detest|detests|loathe|loathes|despise|despises|can\s+not\s+stand|cannot\s+stand|can\s+not\s+bear|cannot\s+bear|do\s+not\s+(?:really\s+)?care\s+(?:much\s+)?for|does\s+not\s+(?:really\s+)?care\s+(?:much\s+)?for|am\s+not\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of)\s+(?P<o>.+)", _h_dislikes),
    _rule(rf"^(?:love|loves|like|likes|enjoy|enjoys|adore|adores|dig|digs|{_BE}\s+(?:really\s+|so\s+|very\s+|totally\s+|super\s+)?(?:into|obsessed\s+with|passionate\s+about|crazy\s+about|fond\s+of|a\s+sucker\s+for|keen\s+on|hooked\s+on|addicted\s+to)|{_BE}\s+(?:an?\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+|total\s+|die-?hard\s+|avid\s+)?(?:fan|lover)\s+of|{_HAVE}\s+(?:an?\s+)?(?:soft\s+spot|weakness|passion|love)\s+for|{_HAVE}\s+(?:always\s+)?(?:loved|liked|enjoyed))\s+(?P<o>.+)", _h_likes),
    _rule(rf"^{_BE}\s+(?>(?:an?\s+)?(?:(?:big|huge|massive|total|die-?hard|lifelong|long-?time|avid|real|true|serious)\s+)*)(?P<o>[\w'&.-]+(?:\s+[\w'&.-]+){{0,3}}?)\s+(?:fan|lover|enthusiast|nerd|geek|buff|addict)\b(?!\s+of\b)", _h_fan),
    _rule(r"^(?:prefer|prefers)\s+(?P<o>.+)", _h_prefers),
    _rule(r"^would\s+(?:much\s+)?rather\s+(?P<o>.+)", _h_rather),
    _rule(rf"^(?:{_HAVE}\s+)?(?:recently\s+|just\s+)?(?:taken\s+up|took\s+up|picked\s+up|gotten\s+into|got\s+into|started)\s+(?P<o>.+)", _h_took_up),
    # plans, decisions, goals
    _rule(rf"^{_BE}\s+(?:going\s+to|about\s+to|set\s+to|scheduled\s+to|preparing\s+to|intending\s+to|planning\s+to|supposed\s+to)\s+(?P<o>.+)", _h_plan_going),
    _rule(rf"^(?:plan|plans|intend|intends|{_HAVE}\s+(?:plans|a\s+plan)|{_HAVE}\s+planned|{_BE}\s+(?:planning|plotting))\s+(?:to|on)\s+(?P<o>.+)", _h_plan),
    _rule(rf"^(?:{_BE}\s+planning|plan|plans)\s+(?P<o>(?:an?|our|my|the|another)\s+.+)", _h_plan_noun),
    _rule(rf"^{_BE}\s+(?:seriously\s+)?(?:thinking|considering)\s+(?:of\s+|about\s+)?(?P<o>\w+ing\b.*)", _h_thinking_of),
    _rule(r"^(?:will|shall)\s+(?P<o>.+)", _h_will),
    _rule(rf"^(?:{_HAVE}\s+)?(?:finally\s+|just\s+|recently\s+|officially\s+|already\s+|also\s+)*(?:decided|chose|opted|resolved|committed|made\s+(?:the|a|my|our)\s+decision|made\s+up\s+(?:my|our|his|her)\s+mind)\s+to\s+(?P<o>.+)", _h_decided),
    _rule(rf"^(?:{_HAVE}\s+)?(?:finally\s+)?decided\s+(?:that\s+)?(?:I|we|he|she)\s+(?:will|would|am\s+going\s+to|are\s+going\s+to|is\s+going\s+to|should|want\s+to)\s+(?P<o>.+)", _h_decided),
    _rule(rf"^(?:(?:really|badly|desperately|eventually|definitely|also|still)\s+)*(?:want|wants|would\s+(?:really\s+)?(?:like|love)|hope|hopes|aspire|aspires|aim|aims|long|longs|yearn|yearns|{_BE}\s+(?:hoping|aiming|looking|trying|working|striving|dying|eager|determined))\s+to\s+(?P<o>.+)", _h_goal),
    _rule(rf"^(?:dream|dreams|{_BE}\s+dreaming)\s+(?:of|about)\s+(?P<o>.+)", _h_goal),
    _rule(rf"^{_BE}\s+(?P<g>[a-z]+ing)\b\s*(?P<o>.*)", _h_progressive_plan),
    # events
    _rule(r"^(?P<v>attended|participated\s+in|took\s+part\s+in|competed\s+in|went\s+to\s+see|(?:was|were)\s+at|had)\s+(?P<o>.+)", _h_attended),
    _rule(rf"^(?P<v>visited|toured|explored|{_HAVE}\s+(?:been\s+to|visited)|traveled\s+to|travelled\s+to|flew\s+to|drove\s+to|went\s+back\s+to|(?:took|went\s+on|had)\s+(?:an?\s+|our\s+|my\s+)?(?:\w+\s+)?(?:trip|vacation|holiday|honeymoon|getaway|cruise|visit)\s+to|(?:got|came|flew)\s+(?:back|home)\s+from|returned\s+from|spent\s+(?:\S+\s+){{0,4}}?in|stayed\s+in|vacationed\s+in|backpacked\s+(?:through|across|around|in)|(?:was|were)\s+in)\s+(?P<o>.+)", _h_visited),
    _rule(r"^went\s+to\s+(?P<o>.+)", _h_went_to),
    _rule(r"^went\s+(?P<g>[a-z]+ing)\b", _h_went_doing),
    _rule(rf"^(?P<perfect>{_HAVE}\s+)(?:just\s+|finally\s+|recently\s+|already\s+)*{_PARTICIPLE_RE}\b(?P<o>.*)", _h_did),
    _rule(rf"^(?P<perfect>){_ACTION_VERB_RE}\b(?P<o>.*)", _h_did),
)
# fmt: on

#: Clause rules that read the whole clause rather than the text after a subject.
_MY_NAME = re.compile(r"^(?:(?:my|My|[Tt]he)\s+)?(?:name|Name)(?:\s+is|'s)\s+(?P<o>.+)")
_CALL_ME = re.compile(
    r"^(?:you\s+can\s+|just\s+|please\s+|everyone\s+|people\s+|my\s+friends\s+)?calls?\s+me\s+(?P<o>[A-Z].*)",
    re.I,
)
_MY_FAVOURITE = re.compile(
    r"^(?:my|My)\s+(?:all[- ]time\s+|absolute\s+|personal\s+|current\s+)?(?:favou?rite|fave|fav)\s+(?:[\w-]+\s+){0,3}?(?:is|are|has\s+to\s+be|would\s+be)\s+(?P<o>.+)"
)
_IS_MY_FAVOURITE = re.compile(
    r"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s+(?:is|are)\s+(?:definitely\s+|probably\s+|still\s+|totally\s+|easily\s+)?(?:my|one\s+of\s+my)\s+(?:all[- ]time\s+|absolute\s+)?(?:favou?rites?|fave|fav)\b",
    re.I,
)
_MY_HOBBY = re.compile(
    r"^(?:my|My)\s+(?:main\s+|favou?rite\s+|new\s+|biggest\s+|latest\s+|current\s+)?hobb(?:y|ies)\s+(?:is|are|include|includes|would\s+be)\s+(?:to\s+)?(?P<o>.+)"
)
_IS_MY_HOBBY = re.compile(
    r"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s+(?:is|are)\s+(?:definitely\s+|still\s+)?(?:my|one\s+of\s+my)\s+(?:main\s+|favou?rite\s+|new\s+|biggest\s+)?hobb(?:y|ies)\b",
    re.I,
)
_NOT_MY_THING = re.compile(
    r"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s+(?:is|are)\s+(?:just\s+|really\s+|definitely\s+)?(?:not|never)\s+(?:really\s+)?(?:my\s+(?:thing|cup\s+of\s+tea|jam|style)|for\s+me)\b",
    re.I,
)
_IS_GROSS = re.compile(
    r"^(?P<o>[\w'&-]+(?:\s+[\w'&-]+){0,4}?)\s+(?:is|are)\s+(?:so\s+|just\s+|really\s+|absolutely\s+|"
    r"totally\s+|honestly\s+|kind\s+of\s+|pretty\s+)?(?:disgusting|gross|revolting|nasty|overrated|"
    r"the\s+worst|not\s+for\s+me)\b",
    re.I,
)
_MY_GOAL = re.compile(
    r"^(?:my|My)\s+(?:main\s+|big\s+|biggest\s+|ultimate\s+|long-term\s+|life\s+|new\s+year'?s\s+|personal\s+)?(?:goal|dream|ambition|aim|resolution)(?:\s+for\s+\S+(?:\s+\S+)?)?\s+is\s+to\s+(?P<o>.+)"
)
_MY_PLAN = re.compile(
    r"^(?:my|My|the|The)\s+plan(?:\s+for\s+\S+(?:\s+\S+)?)?\s+is\s+to\s+(?P<o>.+)"
)
_MY_BIRTHDAY = re.compile(
    rf"^(?:(?P<me>my|My)|(?P<who>{_NAME_TOKEN})'s)\s+(?:birthday|bday|b-day)\s+(?:is|was|falls)\s+(?:on\s+)?(?P<o>.*)"
)
_BROKE_UP_WITH_ME = re.compile(
    rf"^(?P<n>{_NAME_TOKEN})\s+and\s+I\s+(?:(?:have|had|just|finally|recently)\s+)*(?P<v>broke\s+up|split\s+up|separated|"
    r"got\s+divorced|divorced|are\s+(?:not|no\s+longer)\s+(?:together|a\s+couple|dating|seeing\s+each\s+other)|"
    r"called\s+it\s+quits)\b"
)
_IS_MY_REL_NAME = re.compile(
    rf"^(?:my|My|our|Our)\s+{_REL_MODS}(?P<r>{_REL_RE})\s+is\s+(?P<n>{_NAME_TOKEN})\s*$"
)


_ClauseBuilder = Callable[[re.Match[str], _Message, _Clause], list[_Hit]]


def _c_name(confidence: float) -> _ClauseBuilder:
    def build(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
        found = _leading_name(m.group("o").strip())
        if found is None or not _name_ends(found[1]):
            return []
        return [_Hit("name", found[0], confidence=confidence)]

    return build


def _c_objects(predicate: str, confidence: float) -> _ClauseBuilder:
    def build(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
        return [_Hit(predicate, o, confidence=confidence) for o in _pref_objects(m.group("o"))]

    return build


def _c_intention(predicate: str) -> _ClauseBuilder:
    def build(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
        vp = _vp(m.group("o"))
        timing = "future" if predicate == "plans" else None
        return [_Hit(predicate, vp, confidence=0.9, timing=timing)] if vp else []

    return build


def _c_birthday(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    who = m.group("who")
    if not clause.dates or (who is not None and not _is_name(who)):
        return []
    if who:
        msg.person(who)
    day = _ON_PREFIX.sub("", clause.dates[0])
    return [_Hit("birthday", day, confidence=0.9, subject=who)]


def _c_break_up(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    if not _is_name(m.group("n")):
        return []
    msg.person(m.group("n"))
    predicate = "spouse" if "divorc" in m.group("v") else "partner"
    return [_Hit(predicate, m.group("n"), "person", 0.85, "past", negated=True, entity="person")]


def _c_relative_is(m: re.Match[str], msg: _Message, clause: _Clause) -> list[_Hit]:
    predicate = _RELATIONS.get(" ".join(m.group("r").casefold().split()))
    if predicate is None or not _is_name(m.group("n")):
        return []
    msg.person(m.group("n"))
    return [_Hit(predicate, m.group("n"), "person", 0.9, entity="person")]


#: Rules on a whole clause ("My name is…", "Sushi is my favourite", "My hobbies are…"),
#: tried before the clause's subject is read; the first that gives facts wins.
_CLAUSE_RULES: tuple[tuple[re.Pattern[str], _ClauseBuilder], ...] = (
    (_MY_NAME, _c_name(0.95)),
    (_CALL_ME, _c_name(0.85)),
    (_MY_FAVOURITE, _c_objects("likes", 0.9)),
    (_IS_MY_FAVOURITE, _c_objects("likes", 0.9)),
    (_MY_HOBBY, _c_objects("hobby", 0.9)),
    (_IS_MY_HOBBY, _c_objects("hobby", 0.9)),
    (_NOT_MY_THING, _c_objects("dislikes", 0.85)),
    (_IS_GROSS, _c_objects("dislikes", 0.75)),
    (_MY_GOAL, _c_intention("goal")),
    (_MY_PLAN, _c_intention("plans")),
    (_MY_BIRTHDAY, _c_birthday),
    (_BROKE_UP_WITH_ME, _c_break_up),
    (_IS_MY_REL_NAME, _c_relative_is),
)


def _clause_rules(msg: _Message, clause: _Clause, text: str) -> bool:
    """The first of :data:`_CLAUSE_RULES` that gives facts adds them (about the speaker,
    or about whom the rule names). Returns whether one did."""
    for pattern, build in _CLAUSE_RULES:
        m = pattern.match(text)
        if m is None:
            continue
        hits = build(m, msg, clause)
        for hit in hits:
            msg.add(hit.subject or msg.speaker, hit, clause)
        if hits:
            return True
    return False


# --------------------------------------------------------------------------- negation

_NEGATION = re.compile(
    r"^(?:(?P<retract>no\s+longer|not\s+any\s+longer)\s+"
    r"|(?P<be>am|is|are)\s+(?:(?P<be_retract>no\s+longer)|not)\s+"
    r"|(?:do|does)\s+not\s+"
    r"|(?P<dead>did\s+not|never|(?:have|has|had)\s+(?:not|never)|(?:was|were)\s+not|"
    r"(?:would|will|can|could|should|must|might|may)\s+(?:not|never)|cannot|"
    r"(?:would|could|should|might|may|must)\b)"
    r"|(?P<stop>(?:have\s+|has\s+)?(?:stopped|quit|given\s+up|gave\s+up))\s+(?=[a-z]+ing\b)"
    r"|(?P<start>(?:have\s+|has\s+)?(?:started|began|begun))\s+(?=[a-z]+ing\b)"
    r"|(?P<used>used\s+to)\s+)",
    re.I,
)
_DISLIKE_IDIOM = re.compile(
    r"^(?:can\s+not|cannot)\s+(?:stand|bear|stomach)\b|^(?:do|does)\s+not\s+(?:really\s+)?care\s+(?:much\s+)?for\b"
    r"|^(?:would|'d)\s+(?:much\s+)?rather\b|^would\s+(?:really\s+)?(?:like|love)\s+to\b",
    re.I,
)


def _apply_rules(msg: _Message, clause: _Clause, subj: _Subject, text: str) -> bool:
    """Match ``text`` (what follows the subject) against the rule table, with negation.
    Returns whether a fact was added."""
    text = _ADVERBS.sub("", text.strip())
    mode: str | None = None
    fallback: str | None = None
    if not _DISLIKE_IDIOM.match(text):
        m = _NEGATION.match(text)
        if m:
            if m.group("dead") is not None:
                return False  # "didn't", "never", "would", "might": states nothing
            rest = text[m.end() :]
            if m.group("stop") is not None or m.group("start") is not None:
                # "stopped eating meat" retracts "eat meat"; "started eating chicken"
                # states "eat chicken" (else it is read as it stands: "started painting")
                words = rest.split(maxsplit=1)
                rest = _base(words[0]) + (" " + words[1] if len(words) > 1 else "")
                if m.group("start") is not None:
                    fallback = text
                else:
                    mode = "retract"
            elif (
                m.group("retract") is not None
                or m.group("be_retract") is not None
                or m.group("used") is not None
            ):
                mode = "retract"
            else:
                mode = "retract" if clause.anymore else "not"
            text = (m.group("be") + " " + rest) if m.group("be") else rest
            text = _ADVERBS.sub("", text)
    ctx = _Ctx(msg, clause, subj)
    if _match_rules(ctx, text, mode):
        return True
    if fallback is not None and _match_rules(ctx, fallback, mode):
        return True
    if clause.free_time and mode is None:
        m = _FREE_TIME_VERB.match(text)
        if m:
            hits = _h_free_time(m, ctx)
            for hit in hits:
                msg.add(subj.name, hit, clause, subj.confidence)
            return bool(hits)
    return False


def _match_rules(ctx: _Ctx, text: str, mode: str | None) -> bool:
    """The first rule of :data:`_RULES` whose handler accepts ``text`` adds its facts."""
    for rule in _RULES:
        m = rule.pattern.match(text)
        if m is None:
            continue
        hits = rule.handler(m, ctx)
        if not hits:
            continue
        fired = False
        for hit in hits:
            adjusted = _negate(hit, mode)
            if adjusted is None:
                continue
            subject = adjusted.subject or ctx.subject.name
            ctx.msg.add(subject, adjusted, ctx.clause, ctx.subject.confidence)
            fired = True
        return fired
    return False


_FREE_TIME_VERB = re.compile(r"^(?P<v>[a-z]+)\b\s*(?P<o>.*)$")


def _negate(hit: _Hit, mode: str | None) -> _Hit | None:
    """``hit`` under the clause's negation: unchanged, retracted, turned into its opposite
    ("don't like" → dislikes), or dropped."""
    if mode is None or hit.negated:
        return hit if mode is None else None
    if mode == "retract":
        if hit.predicate in _NOT_RETRACTABLE:
            return None
        return _Hit(
            hit.predicate,
            hit.obj,
            hit.object_type,
            hit.confidence,
            "past",
            True,
            hit.subject,
            hit.entity,
        )
    if hit.predicate == "likes":
        return _Hit(
            "dislikes", hit.obj, hit.object_type, 0.85, None, False, hit.subject, hit.entity
        )
    return None


# ----------------------------------------------------------------------------- the entry


def extract_en(
    text: str, *, speaker: str | None = None, timestamp: datetime | None = None
) -> Extraction:
    """The facts an English chat message states, with their entities and dates.

    Args:
        text: one message, any length (a "sentence" of over 600 characters is no chat
            and is skipped).
        speaker: the speaker's name; first person ("I", "we", "my") resolves to it, or to
            :data:`~.types.SELF` when ``None`` or blank.
        timestamp: when the message was said (aware or naive). Relative dates ("yesterday",
            "next Friday") resolve against it; ``None`` → only dates with their own year
            resolve.

    Returns:
        An :class:`~.types.Extraction`: ``facts`` (predicates from
        :data:`~.predicates.PREDICATES`; events and plans carry the date of their clause),
        ``entities`` (the third parties, places, organisations, projects and pets the facts
        name) and ``dates`` (every date phrase and its ISO date, from
        :func:`~.dates.find_dates`). Questions, hypotheticals, statements about the
        assistant and small talk give no facts.

    Never raises: any failure (including non-string input) yields an empty
    :class:`~.types.Extraction`, logged at DEBUG.
    """
    try:
        return _extract(text, speaker, timestamp)
    except Exception:  # a rule bug must never cost the caller its message
        log.debug("English rule extraction failed", exc_info=True)
        return Extraction()


def _extract(text: str, speaker: str | None, timestamp: datetime | None) -> Extraction:
    if not isinstance(text, str) or not text.strip():
        return Extraction()
    name = speaker.strip() if isinstance(speaker, str) and speaker.strip() else SELF
    msg = _Message(speaker=name, timestamp=timestamp)
    plain = unicodedata.normalize("NFKC", text)
    normalised = _normalise(text)
    for sentence in _sentences(normalised):
        if len(sentence.text) > _MAX_SENTENCE_CHARS or _HYPOTHETICAL.search(sentence.text):
            continue
        _sentence_facts(msg, sentence)
    dates: list[ResolvedDate] = (
        find_dates(plain, timestamp, "en") if find_date_spans(plain, "en") else []
    )
    used = {f.subject for f in msg.facts} | {f.object for f in msg.facts}
    entities = [e for e in msg.entities.values() if e.name in used]
    return Extraction(facts=msg.facts, entities=entities, dates=dates)


def _sentence_facts(msg: _Message, sentence: _Sentence) -> None:
    text = sentence.text
    if _ASKS.match(_strip_lead(text)):
        return  # "Do you like tea?", "Where do you live" (with or without the "?")
    if sentence.question:
        tail = _QUESTION_TAIL.search(text)
        if tail is None:
            return  # "You live in Lisbon?": asked, not stated
        text = text[: tail.start()]  # "I love hiking, do you?" states "I love hiking"
    masked, marks = _mask_times(text.replace("|", "/"))
    info = _SentenceInfo(dates=[phrase for phrase, is_date in marks if is_date])
    clauses = _clauses(masked, marks, info)
    previous: _Subject | None = None
    if clauses:
        clauses[0].first = True
    for clause in clauses:
        if clause.subordinate:
            previous = None
            continue
        previous = _clause_facts(msg, clause, previous)


def _clause_facts(msg: _Message, clause: _Clause, previous: _Subject | None) -> _Subject | None:
    """The facts of one clause; returns its subject (for a next clause without one)."""
    _named_anywhere(msg, clause)
    text = _strip_lead(clause.text)
    if not text:
        return previous
    if _clause_rules(msg, clause, text):
        return None
    found = _subject(msg, clause, text)
    if found is None:
        if clause.inherit and previous is not None:
            if clause.copula:
                text = ("am " if previous.kind == "self" else "is ") + text
            _apply_rules(msg, clause, previous, text)
            return previous
        if clause.first and _PRO_DROP.match(text):
            # chat drops the "I": "Just started at Spotify!", "Finished my first 10k."
            subject = _Subject(msg.speaker, "self", 0.85)
            if _BEEN_START.match(text):
                text = "have " + text  # "Been living in Austin for years"
            _apply_rules(msg, clause, subject, text)
            return subject
        return None
    subj, rest = found
    _apply_rules(msg, clause, subj, rest)
    return subj


_PRO_DROP = re.compile(
    r"^(?:(?:just|finally|recently|officially)\s+)?(?:[a-z]{3,}ed|been\s+[a-z]+ing|got|went|ran|took|made|began|"
    r"joined|quit|left|bought|won|met|broke|found|built|wrote|flew|spent|saw|sold|tried)\b"
    r"(?!\s+(?:to\s+say|you|u|that|it|this)\b)",
    re.I,
)

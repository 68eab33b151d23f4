"""Word lists of the English rule extractor: relations, pets, occupations, places,
nationalities, languages, diets, events, verbs and their forms, hobbies, numbers.

Everything here is data (sets, dicts and regex alternations built from them) plus the
small helpers that build them; the extractor's logic lives in the other modules of
:mod:`mnemolayer.extract.rules.en`. The names keep a leading underscore: they are internal to
the package, shared between its modules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _alt(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first; a space matches any whitespace."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered) + ")"


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


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
#: People one knows who are not family, friends or colleagues ("my neighbor Dana"): the
#: name is a subject, and no relation fact is stated.
_ACQUAINTANCES = (
    "neighbor", "neighbour", "roommate", "flatmate", "housemate", "landlord", "landlady",
    "classmate", "mentor", "therapist", "doctor", "coach", "trainer", "tutor", "teacher",
    "professor", "client", "ex", "babysitter", "nanny", "hairdresser", "dentist", "vet",
    "physio", "counselor", "counsellor", "pastor", "mentee", "student", "tenant", "doctor",
)  # fmt: skip
_ACQ_RE = "(?i:" + _alt(_ACQUAINTANCES) + ")"
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
            "shiba inu", "shiba", "lab", "black lab", "yellow lab", "chocolate lab",
            "australian shepherd", "aussie", "german shorthaired pointer", "pointer", "boxer",
            "cockapoo", "maltipoo", "cavapoo", "bernese", "bernese mountain dog", "heeler",
            "blue heeler", "jack russell", "westie", "sheltie", "springer spaniel",
            "samoyed", "akita", "malamute", "basset hound", "beagle mix", "bloodhound",
            "weimaraner", "vizsla", "cavalier", "havanese", "bichon", "maltese", "papillon",
            "newfoundland", "st bernard", "saint bernard", "boston terrier", "mutt",
        ],
        "dog",
    ),
    **dict.fromkeys(
        [
            "tabby", "siamese cat", "persian cat", "ragdoll", "maine coon", "bengal cat",
            "sphynx", "calico", "tuxedo cat", "british shorthair", "scottish fold",
            "russian blue", "abyssinian",
        ],
        "cat",
    ),
    **{a: a for a in [
        "rabbit", "hamster", "gerbil", "guinea pig", "ferret", "parrot", "parakeet", "budgie",
        "cockatiel", "canary", "bird", "fish", "goldfish", "betta", "turtle", "tortoise",
        "snake", "lizard", "gecko", "iguana", "chinchilla", "hedgehog", "rat", "mouse",
        "horse", "pony", "goat", "pig", "chicken", "hen", "duck", "axolotl", "frog",
        "bearded dragon", "cockatoo", "macaw", "lovebird", "tarantula", "hermit crab",
        "sugar glider", "degu", "alpaca", "donkey",
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
    congratulations cheers bye goodbye morning night must would could should can will might
    shall does do has have is are am sounds seems looks feels take make let keep almost family
    nature love themes guys being doing seeing making taking coming""".replace("\n", " ")
)
#: Capitalised "-ing" words that are names, though most such words are gerunds ("Being
#: organised helps", "Hiking opened up…").
_ING_NAMES = _set("sterling channing irving fleming manning harding browning")


def _common_word(token: str) -> bool:
    """Whether a capitalised ``token`` is a common word rather than a person's name."""
    low = token.casefold()
    if low in _NOT_NAMES or token in _DEMONYMS or token in _LANGUAGES:
        return True
    return len(low) >= 6 and low.endswith("ing") and low not in _ING_NAMES


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
#: Verbs that make a plan or a goal on their own ("I want to retire"); any other verb
#: needs an object to say what is planned ("I'm going to see" says nothing).
_LONE_PLAN_VERBS = _set(
    """retire graduate travel relocate emigrate propose elope volunteer exercise meditate
    hike camp ski surf swim dance paint draw cook bake write sing knit run cycle marry move
    quit resign backpack vote fish garden sail skate snowboard climb jog train remarry
    divorce settle downsize""".replace("\n", " ")
)
#: Common verbs in their base form: after "to" in the middle of a plan they start a
#: purpose clause that the plan drops ("visit Vermont to see the leaves" → "visit
#: Vermont").
_BASE_VERBS = _set(
    """accept achieve add adopt apply ask attend avoid bake be become begin borrow bring
    build buy calm care carry catch celebrate change chat check cheer clean clear climb
    collect come compete complete connect cook cool cover create cut dance deal decide
    decorate deliver design develop discover discuss do donate draw dress drink drive earn
    eat enjoy enter escape explore express feed feel fight fill find finish fix fly focus
    follow forget get give go grab grow hang have heal hear help hike hire hold host hunt
    improve inspire install invite join keep kill kiss know land launch learn leave let lift
    listen live look lose make manage marry meet mend move organize organise paint party pay
    pick plan plant play practice practise prepare present prove pursue put raise reach read
    recharge reconnect recover reduce relax remember rent repair rest return ride run save
    say see sell send serve set share shop show sing sit sleep spend start stay stop study
    support surprise swim take talk teach tell test thank think train travel treat try turn
    understand unwind update use visit vote wait walk watch wear welcome win work write""".replace(
        "\n", " "
    )
)
#: Nouns after which "to" + verb says what the noun is for, not why ("find a way to…").
_TO_NOUNS = _set("way chance time place opportunity reason excuse plan need ability right")

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
    "visiting": "visit", "quoting": "quote", "rating": "rate", "cancelling": "cancel",
    "canceling": "cancel", "labelling": "label", "modelling": "model", "fuelling": "fuel",
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

_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
#: A number from one to a hundred in words ("five", "twenty-nine", "a hundred").
_NUMBER_WORDS = (
    rf"(?:(?:{'|'.join(_TENS)})(?:[- ](?:{'|'.join(_UNITS[1:10])}))?|{'|'.join(reversed(_UNITS[1:]))}"
    r"|(?:a|one)\s+hundred)"
)


def _number(text: str) -> int | None:
    """``text`` as a whole number: digits ("34") or words ("five", "twenty-nine", "a
    hundred"); ``None`` when it is neither."""
    text = text.strip().casefold()
    if text.isdigit():
        return int(text)
    words = text.replace("-", " ").split()
    if words[-1:] == ["hundred"]:
        return 100
    total = 0
    for word in words:
        if word in _TENS:
            total += 10 * (_TENS.index(word) + 2)
        elif word in _UNITS:
            total += _UNITS.index(word)
        else:
            return None
    return total or None


#: Relation and animal words that are also common (pet) names: "our dog Buddy".
_ALSO_NAMES = _set("buddy pal kitty bunny pepper")

"""The English rule extractor: what it reads from chat messages, and what it refuses to.

Every sentence here is written for these tests. Dates resolve against a fixed message time
(2023-05-08 13:56 UTC, a Monday), so "yesterday" is 2023-05-07 whatever day the tests run.
"""

from __future__ import annotations

import itertools
import random
import statistics
import threading
import time
from datetime import UTC, date, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemolayer.extract.base import SELF, ExtractedFact, Extraction
from mnemolayer.extract.predicates import PREDICATES
from mnemolayer.extract.rules.en import extract_en

TS = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
U = SELF

Triple = tuple[str, str, str]


def triples(text: str, *, speaker: str | None = None) -> set[Triple]:
    """The stated (non-negated) facts of ``text`` as (subject, predicate, object)."""
    result = extract_en(text, speaker=speaker, timestamp=TS)
    return {(f.subject, f.predicate, f.object) for f in result.facts if not f.negated}


def negations(text: str) -> set[Triple]:
    result = extract_en(text, timestamp=TS)
    return {(f.subject, f.predicate, f.object) for f in result.facts if f.negated}


def dated(text: str, timestamp: datetime | None = TS) -> set[tuple[str, str, date | None]]:
    result = extract_en(text, timestamp=timestamp)
    return {(f.predicate, f.object, f.date) for f in result.facts}


def only_fact(text: str) -> ExtractedFact:
    facts = extract_en(text, timestamp=TS).facts
    assert len(facts) == 1, facts
    return facts[0]


# ----------------------------------------------------------------------------- identity

IDENTITY = [
    ("My name is Anna.", {(U, "name", "Anna")}),
    ("Hi, I'm Anna!", {(U, "name", "Anna")}),
    ("Hey there, I am Jonas Weber, nice to meet you.", {(U, "name", "Jonas Weber")}),
    ("You can call me Liz.", {(U, "name", "Liz")}),
    ("I go by Sam.", {(U, "name", "Sam")}),
    ("I'm 28.", {(U, "age", "28")}),
    ("I am 28 years old.", {(U, "age", "28")}),
    ("I just turned 40!", {(U, "age", "40")}),
    ("I'm 30 and live in Denver.", {(U, "age", "30"), (U, "lives_in", "Denver")}),
    ("I live in Lisbon.", {(U, "lives_in", "Lisbon")}),
    ("I currently live in New York City.", {(U, "lives_in", "New York City")}),
    ("I live in a small town in Ohio.", {(U, "lives_in", "Ohio")}),
    ("I've lived in Oslo for six years.", {(U, "lives_in", "Oslo")}),
    ("I just moved to Porto.", {(U, "lives_in", "Porto")}),
    ("We moved from Chicago to Seattle.", {(U, "lives_in", "Seattle")}),
    ("I'm from Sweden.", {(U, "from", "Sweden")}),
    ("I'm originally from Kenya but I live in London now.", {(U, "from", "Kenya"), (U, "lives_in", "London")}),
    ("I was born in Mumbai.", {(U, "from", "Mumbai")}),
    ("I'm Canadian.", {(U, "nationality", "Canadian")}),
    ("I work as a nurse.", {(U, "job", "nurse")}),
    ("I'm a teacher.", {(U, "job", "teacher")}),
    ("I'm a software engineer at Microsoft.", {(U, "job", "software engineer"), (U, "works_at", "Microsoft")}),
    ("I've been a nurse for ten years.", {(U, "job", "nurse")}),
    ("I'm a stay-at-home mom.", {(U, "job", "stay-at-home mom")}),
    ("I'm a 34-year-old accountant from Texas.", {(U, "age", "34"), (U, "job", "accountant"), (U, "from", "Texas")}),
    ("I work at Google.", {(U, "works_at", "Google")}),
    ("i live in lisbon", {(U, "lives_in", "Lisbon")}),
    ("i moved to new york last year", {(U, "lives_in", "New York")}),
    ("I started as a librarian at the university library.", {(U, "job", "librarian"), (U, "works_at", "university library")}),
    ("I got a job at the bakery.", {(U, "works_at", "bakery")}),
    ("I just landed a new position with Acme Corp.", {(U, "works_at", "Acme Corp")}),
    ("I work for the University of Lisbon.", {(U, "works_at", "University of Lisbon")}),
    ("I just joined Spotify as a designer.", {(U, "works_at", "Spotify")}),
    ("I work on project Orca.", {(U, "works_on", "Orca")}),
    ("I'm working on the Falcon project.", {(U, "works_on", "Falcon")}),
    ("I manage the data team.", {(U, "role", "data team")}),
    ("I lead the design team at Spotify.", {(U, "role", "design team"), (U, "works_at", "Spotify")}),
    ("I'm in charge of the marketing budget.", {(U, "role", "marketing budget")}),
    ("I study biology at Stanford.", {(U, "studies", "biology"), (U, "studies_at", "Stanford")}),
    ("I'm majoring in computer science.", {(U, "studies", "computer science")}),
    ("I'm a biology student.", {(U, "studies", "biology")}),
    ("I'm a student at Columbia University.", {(U, "studies_at", "Columbia University")}),
    ("I speak Portuguese and French.", {(U, "speaks", "Portuguese"), (U, "speaks", "French")}),
    ("I'm single.", {(U, "relationship_status", "single")}),
    ("I'm married to Tom.", {(U, "spouse", "Tom")}),
    ("I'm engaged to Chris.", {(U, "partner", "Chris")}),
    ("My birthday is on May 7.", {(U, "birthday", "May 7")}),
    ("I'm a trans woman.", {(U, "gender", "trans woman")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), IDENTITY)
def test_identity(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_first_person_resolves_to_the_speaker_name() -> None:
    assert triples("I live in Boston and I love jazz.", speaker="Caroline") == {
        ("Caroline", "lives_in", "Boston"),
        ("Caroline", "likes", "jazz"),
    }
    assert triples("We adopted a cat named Mochi.", speaker="  ") == {(U, "has_pet", "Mochi")}


def test_one_subject_carries_over_to_a_verb_after_and() -> None:
    assert triples("I live in Lisbon and work at Google.") == {
        (U, "lives_in", "Lisbon"),
        (U, "works_at", "Google"),
    }
    assert triples("Anna lives in Berlin and works as a designer.") == {
        ("Anna", "lives_in", "Berlin"),
        ("Anna", "job", "designer"),
    }


def test_only_real_names_are_names() -> None:
    for text in ["I'm tired.", "I'm Sorry.", "I'm good, thanks!", "I'm Jewish.", "I'm here."]:
        assert triples(text) == set(), text


def test_being_a_fan_or_a_kind_of_person_is_not_a_job() -> None:
    for text in [
        "I'm a big fan of your work.",
        "I'm a big believer in hard work.",
        "I'm a morning person.",
        "I'm a mess.",
        "I'm a huge introvert.",
    ]:
        assert all(p != "job" for _s, p, _o in triples(text)), text


def test_numbers_that_are_not_ages() -> None:
    for text in ["I'm 5 minutes away.", "I'm 100% sure.", "I am 2 hours late."]:
        assert triples(text) == set(), text


def test_a_city_is_not_an_employer() -> None:
    assert triples("I left Berlin.") == set()
    assert negations("I left Acme.") == {(U, "works_at", "Acme")}


def test_places_orgs_and_projects_are_typed() -> None:
    result = extract_en(
        "I live in Lisbon, work at Acme Corp and work on project Orca.", timestamp=TS
    )
    kinds = {f.object: f.object_type for f in result.facts}
    assert kinds == {"Lisbon": "place", "Acme Corp": "organization", "Orca": "project"}
    assert {(e.name, e.type) for e in result.entities} == {
        ("Lisbon", "place"),
        ("Acme Corp", "organization"),
        ("Orca", "project"),
    }


def test_past_homes_and_jobs_are_not_current() -> None:
    for text in ["I used to live in Berlin.", "I used to work at Acme.", "I lived in Paris."]:
        assert triples(text) == set(), text


# ------------------------------------------------------------------- relationships, pets

RELATIONSHIPS = [
    ("My sister Maria lives in Rome.", {(U, "sister", "Maria"), ("Maria", "lives_in", "Rome")}),
    ("Maria is my sister.", {(U, "sister", "Maria")}),
    ("My wife, Sarah, is a doctor.", {(U, "spouse", "Sarah"), ("Sarah", "job", "doctor")}),
    ("Sarah, my wife, is a doctor.", {(U, "spouse", "Sarah"), ("Sarah", "job", "doctor")}),
    ("My boyfriend's name is Daniel.", {(U, "partner", "Daniel")}),
    ("My mom's name is Linda.", {(U, "mother", "Linda")}),
    ("My dad Ahmed is a retired pilot.", {(U, "father", "Ahmed"), ("Ahmed", "job", "retired pilot")}),
    ("My brother Tom works at Tesla.", {(U, "brother", "Tom"), ("Tom", "works_at", "Tesla")}),
    ("My son Leo loves dinosaurs.", {(U, "child", "Leo"), ("Leo", "likes", "dinosaurs")}),
    ("I have two kids, Leo and Mia.", {(U, "child", "Leo"), (U, "child", "Mia")}),
    ("I have a sister named Maria who lives in Rome.", {(U, "sister", "Maria"), ("Maria", "lives_in", "Rome")}),
    ("I went hiking with my best friend Anna.", {(U, "friend", "Anna"), (U, "did", "went hiking")}),
    ("A friend of mine, Jonas, is a chef.", {(U, "friend", "Jonas"), ("Jonas", "job", "chef")}),
    ("My coworker Priya is vegetarian.", {(U, "colleague", "Priya"), ("Priya", "diet", "vegetarian")}),
    ("My boss Karen manages the sales team.", {(U, "boss", "Karen"), ("Karen", "role", "sales team")}),
    ("My cousin Ines moved to Madrid.", {(U, "relative", "Ines"), ("Ines", "lives_in", "Madrid")}),
    ("Tom's wife Jane is a lawyer.", {("Tom", "spouse", "Jane"), ("Jane", "job", "lawyer")}),
    ("My husband and I moved to Denver.", {(U, "lives_in", "Denver")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), RELATIONSHIPS)
def test_relationships_and_third_parties(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_a_relative_without_a_name_gives_nothing() -> None:
    for text in ["My mom is a teacher.", "My sister lives in Rome.", "My parents live in Ohio."]:
        assert triples(text) == set(), text


def test_relation_facts_are_typed_person_and_named_as_entities() -> None:
    result = extract_en("My sister Maria lives in Rome.", timestamp=TS)
    relation = next(f for f in result.facts if f.predicate == "sister")
    assert relation.object_type == "person"
    assert {(e.name, e.type) for e in result.entities} == {("Maria", "person"), ("Rome", "place")}


def test_he_and_she_point_at_the_last_person_named() -> None:
    facts = extract_en("My sister Maria lives in Rome. She works at Acme Corp.", timestamp=TS).facts
    work = next(f for f in facts if f.predicate == "works_at")
    assert (work.subject, work.object) == ("Maria", "Acme Corp")
    assert work.confidence < 0.9  # a resolved pronoun is less certain than a name
    assert triples("She works at Acme Corp.") == set()  # nobody named before


PETS = [
    ("I have a dog named Max.", {(U, "has_pet", "Max")}, "dog"),
    ("My cat Luna sleeps all day.", {(U, "has_pet", "Luna")}, "cat"),
    ("We have two cats, Luna and Milo.", {(U, "has_pet", "Luna"), (U, "has_pet", "Milo")}, "cat"),
    ("I have a golden retriever.", {(U, "has_pet", "golden retriever")}, "dog"),
    ("Our puppy is called Biscuit.", {(U, "has_pet", "Biscuit")}, "dog"),
    ("Max is my dog.", {(U, "has_pet", "Max")}, "dog"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected", "kind"), PETS)
def test_pets_are_named_with_their_kind(text: str, expected: set[Triple], kind: str) -> None:
    result = extract_en(text, timestamp=TS)
    pets = {(f.subject, f.predicate, f.object) for f in result.facts if f.predicate == "has_pet"}
    assert pets == expected
    assert {f.object_type for f in result.facts if f.predicate == "has_pet"} == {kind}


def test_two_named_pets_in_one_clause() -> None:
    assert triples("I have a cat named Whiskers and a dog named Rex.") == {
        (U, "has_pet", "Whiskers"),
        (U, "has_pet", "Rex"),
    }


def test_a_named_pet_has_its_own_facts() -> None:
    assert triples("Our dog Biscuit is 3 years old.") == {
        (U, "has_pet", "Biscuit"),
        ("Biscuit", "age", "3"),
    }


def test_animals_that_are_not_pets() -> None:
    for text in [
        "I have a picture of a dog named Max.",
        "I have a dog walker.",
        "I have a cat allergy.",
    ]:
        assert all(p != "has_pet" for _s, p, _o in triples(text)), text


# ---------------------------------------------------------------------------- preferences

PREFERENCES = [
    ("I love hiking.", {(U, "likes", "hiking")}),
    ("I really enjoy jazz.", {(U, "likes", "jazz")}),
    ("I'm a big fan of sushi.", {(U, "likes", "sushi")}),
    ("I'm really into photography these days.", {(U, "likes", "photography")}),
    ("I love hiking, jazz and sushi.", {(U, "likes", "hiking"), (U, "likes", "jazz"), (U, "likes", "sushi")}),
    ("I love mac and cheese.", {(U, "likes", "mac and cheese")}),
    ("My favorite band is Radiohead.", {(U, "likes", "Radiohead")}),
    ("Pizza is my favorite food.", {(U, "likes", "Pizza")}),
    ("I hate olives.", {(U, "dislikes", "olives")}),
    ("I can't stand cilantro.", {(U, "dislikes", "cilantro")}),
    ("I don't like coffee.", {(U, "dislikes", "coffee")}),
    ("I'm not a fan of horror movies.", {(U, "dislikes", "horror movies")}),
    ("I don't really care for musicals.", {(U, "dislikes", "musicals")}),
    ("Jazz is not my thing.", {(U, "dislikes", "Jazz")}),
    ("I prefer tea over coffee.", {(U, "prefers", "tea")}),
    ("I'd rather have tea than coffee.", {(U, "prefers", "tea")}),
    ("I'm allergic to peanuts.", {(U, "allergic_to", "peanuts")}),
    ("I'm allergic to peanuts and shellfish.", {(U, "allergic_to", "peanuts"), (U, "allergic_to", "shellfish")}),
    ("I have a severe allergy to penicillin.", {(U, "allergic_to", "penicillin")}),
    ("I'm vegetarian.", {(U, "diet", "vegetarian")}),
    ("I've been vegan for two years.", {(U, "diet", "vegan")}),
    ("I'm on a keto diet.", {(U, "diet", "keto")}),
    ("I eat meat every day.", {(U, "eats", "meat")}),
    ("My hobby is painting.", {(U, "hobby", "painting")}),
    ("My hobbies are knitting, chess and baking.", {(U, "hobby", "knitting"), (U, "hobby", "chess"), (U, "hobby", "baking")}),
    ("I paint in my free time.", {(U, "hobby", "painting")}),
    ("In my spare time I play guitar.", {(U, "hobby", "playing guitar")}),
    ("I recently took up pottery.", {(U, "hobby", "pottery")}),
    ("Jake hates spiders.", {("Jake", "dislikes", "spiders")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), PREFERENCES)
def test_preferences(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_liking_a_person_pronoun_or_clause_is_no_preference() -> None:
    for text in [
        "I love it!",
        "I love that idea.",
        "I love how you explained that.",
        "I hate when that happens.",
        "I love you.",
        "I love my wife.",
        "I like to think so.",
    ]:
        assert triples(text) == set(), text


def test_a_list_stops_where_the_clause_goes_on() -> None:
    assert triples("I love jazz, which my dad played all the time.") == {(U, "likes", "jazz")}


def test_dislike_is_a_fact_not_a_negation() -> None:
    fact = only_fact("I don't like olives.")
    assert (fact.predicate, fact.object, fact.negated) == ("dislikes", "olives", False)


# ---------------------------------------------------------------------------- negations

NEGATIONS = [
    ("I no longer eat meat.", {(U, "eats", "meat")}),
    ("I don't live in Berlin anymore.", {(U, "lives_in", "Berlin")}),
    ("I quit my job at Acme.", {(U, "works_at", "Acme")}),
    ("I left Acme last month.", {(U, "works_at", "Acme")}),
    ("I got laid off from Meta.", {(U, "works_at", "Meta")}),
    ("I'm not vegetarian anymore.", {(U, "diet", "vegetarian")}),
    ("I'm no longer a vegan.", {(U, "diet", "vegan")}),
    ("I no longer work at Google.", {(U, "works_at", "Google")}),
    ("I stopped eating sugar.", {(U, "eats", "sugar")}),
    ("I don't like coffee anymore.", {(U, "likes", "coffee")}),
    ("I moved out of New York.", {(U, "lives_in", "New York")}),
    ("I broke up with Jake.", {(U, "partner", "Jake")}),
    ("I'm no longer with Jake.", {(U, "partner", "Jake")}),
    ("Lena doesn't live in Lisbon anymore.", {("Lena", "lives_in", "Lisbon")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), NEGATIONS)
def test_negations_retract_the_fact(text: str, expected: set[Triple]) -> None:
    assert negations(text) == expected
    assert triples(text) == set()


def test_plain_negatives_state_nothing() -> None:
    for text in [
        "I didn't go to the party.",
        "I never liked him.",
        "I'm not a nurse.",
        "I haven't been to Japan.",
        "I won't move to Paris.",
    ]:
        assert extract_en(text, timestamp=TS).facts == [], text


# ------------------------------------------------------------------ plans, events, dates

DATED = [
    ("I went to a LGBTQ support group yesterday.", {("attended", "LGBTQ support group", date(2023, 5, 7))}),
    ("I visited Paris last week.", {("visited", "Paris", date(2023, 5, 1))}),
    ("I ran a charity race last Saturday.", {("did", "ran a charity race", date(2023, 5, 6))}),
    ("Yesterday I went to the Taylor Swift concert.", {("attended", "Taylor Swift concert", date(2023, 5, 7))}),
    ("I volunteered at an animal shelter 3 days ago.", {("did", "volunteered at an animal shelter", date(2023, 5, 5))}),
    ("On May 2 I painted a sunset.", {("did", "painted a sunset", date(2023, 5, 2))}),
    ("I'm going to visit Japan next month.", {("plans", "visit Japan", date(2023, 6, 8))}),
    ("I'm flying to Tokyo next Friday.", {("plans", "fly to Tokyo", date(2023, 5, 12))}),
    ("We're moving to Austin in two weeks.", {("plans", "move to Austin", date(2023, 5, 22))}),
    ("I'll start my new job tomorrow.", {("plans", "start my new job", date(2023, 5, 9))}),
    ("I just moved to Porto on 2023-05-01.", {("lives_in", "Porto", date(2023, 5, 1))}),
    ("I got a new puppy last week!", {("has_pet", "puppy", date(2023, 5, 1))}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), DATED)
def test_events_and_plans_carry_the_date_resolved_against_the_message(
    text: str, expected: set[tuple[str, str, date | None]]
) -> None:
    assert dated(text) == expected


PLANS_AND_EVENTS = [
    ("I'm planning to learn Spanish.", {(U, "plans", "learn Spanish")}),
    ("I plan to open a bakery.", {(U, "plans", "open a bakery")}),
    ("My plan is to open a bakery.", {(U, "plans", "open a bakery")}),
    ("I'm thinking of moving to Berlin.", {(U, "plans", "move to Berlin")}),
    ("I decided to quit my job.", {(U, "decided", "quit my job")}),
    ("We've decided to get a dog.", {(U, "decided", "get a dog")}),
    ("I want to run a marathon.", {(U, "goal", "run a marathon")}),
    ("I'd love to visit Iceland one day.", {(U, "goal", "visit Iceland")}),
    ("My goal is to run a marathon this year.", {(U, "goal", "run a marathon")}),
    ("I dream of opening a restaurant.", {(U, "goal", "open a restaurant")}),
    ("We adopted a puppy.", {(U, "has_pet", "puppy"), (U, "did", "adopted a puppy")}),
    ("I finished my first marathon.", {(U, "did", "finished my first marathon")}),
    ("I've run three marathons.", {(U, "did", "run three marathons")}),
    ("I signed up for a pottery class.", {(U, "did", "signed up for a pottery class")}),
    ("I've been to Japan twice.", {(U, "visited", "Japan")}),
    ("I got back from Lisbon.", {(U, "visited", "Lisbon")}),
    ("I attended a workshop on design.", {(U, "attended", "workshop")}),
    ("Mark ran the Boston Marathon.", {("Mark", "did", "ran the Boston Marathon")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), PLANS_AND_EVENTS)
def test_plans_decisions_goals_and_events(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_dates_follow_the_message_time_not_the_clock() -> None:
    assert dated("I visited Rome yesterday.", datetime(1999, 12, 1, 9, 0, tzinfo=UTC)) == {
        ("visited", "Rome", date(1999, 11, 30))
    }
    assert dated("I visited Rome yesterday.", datetime(2023, 5, 8, 23, 30)) == {  # naive is fine
        ("visited", "Rome", date(2023, 5, 7))
    }


def test_an_event_takes_the_date_of_its_sentence_when_its_clause_has_none() -> None:
    facts = extract_en(
        "Yesterday we went to the beach and I met my friend Anna.", timestamp=TS
    ).facts
    assert {(f.predicate, f.date) for f in facts if f.predicate != "friend"} == {
        ("visited", date(2023, 5, 7)),
        ("did", date(2023, 5, 7)),
    }


def test_a_bare_weekday_points_back_for_events_and_ahead_for_plans() -> None:
    assert dated("I ran a 5k on Friday.") == {("did", "ran a 5k", date(2023, 5, 5))}
    assert dated("I'm flying to Rome on Friday.") == {("plans", "fly to Rome", date(2023, 5, 12))}


def test_without_a_timestamp_facts_stay_undated() -> None:
    assert dated("I visited Paris last week.", timestamp=None) == {("visited", "Paris", None)}
    assert dated("I visited Paris on 7 May 2023.", timestamp=None) == {
        ("visited", "Paris", date(2023, 5, 7))
    }


def test_extraction_lists_the_resolved_dates() -> None:
    result = extract_en("Yesterday was fun, and next Friday I fly out.", timestamp=TS)
    assert [(d.text, d.value) for d in result.dates] == [
        ("Yesterday", date(2023, 5, 7)),
        ("next Friday", date(2023, 5, 12)),
    ]


def test_habits_and_routines_are_not_events() -> None:
    for text in ["I read books every night.", "I go to the gym every day.", "I work out a lot."]:
        assert triples(text) == set(), text


def test_will_without_a_date_is_no_plan() -> None:
    assert triples("I'll think about it.") == set()
    assert triples("I will call you later.") == set()


# ------------------------------------------------------------------------- third parties

THIRD_PARTY = [
    ("Lena lives in Lisbon.", {("Lena", "lives_in", "Lisbon")}),
    ("Lena moved to Porto.", {("Lena", "lives_in", "Porto")}),
    ("Lena works on project Orca.", {("Lena", "works_on", "Orca")}),
    ("Lena was reassigned from Orca to Kestrel.", {("Lena", "works_on", "Kestrel")}),
    ("Lena administers the team Git org.", {("Lena", "role", "team Git org")}),
    ("Lena is from Brazil.", {("Lena", "from", "Brazil")}),
    ("Mark is a software engineer at Google.", {("Mark", "job", "software engineer"), ("Mark", "works_at", "Google")}),
    ("Jake is allergic to cats.", {("Jake", "allergic_to", "cats")}),
    ("Carlos speaks Spanish.", {("Carlos", "speaks", "Spanish")}),
    ("Priya is vegetarian.", {("Priya", "diet", "vegetarian")}),
    ("Lena's a nurse.", {("Lena", "job", "nurse")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), THIRD_PARTY)
def test_statements_about_named_people(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_what_someone_else_said_is_not_the_speakers() -> None:
    for text in [
        "My friend said she loves jazz.",
        "He told me he moved to Paris.",
        "Anna said that I should move to Berlin.",
        "I heard you like jazz.",
    ]:
        assert triples(text) == set(), text


def test_common_words_at_the_start_are_not_people() -> None:
    for text in ["People love pizza.", "Everyone likes Tom.", "Nobody lives in Antarctica."]:
        assert triples(text) == set(), text


# ------------------------------------------------------------------------- nothing at all

NOTHING = [
    "Do you like tea?",
    "Where do you live?",
    "Do you have any pets?",
    "Have you ever been to Japan?",
    "What's your name?",
    "Can you call me Anna from now on?",
    "Are you from Sweden",
    "If I lived in Paris, I would be happy.",
    "I wish I lived in Paris.",
    "If I had a dog, I would name it Max.",
    "Imagine living in Tokyo.",
    "Maybe I'll go to Spain someday.",
    "I might move to Berlin.",
    "I would move to Lisbon in a heartbeat.",
    "You live in the cloud.",
    "You should visit Japan.",
    "You are so helpful.",
    "Hello! How are you?",
    "Good morning!",
    "Thanks for the recommendation!",
    "Lol that's hilarious.",
    "That sounds great.",
    "I'm so tired today.",
    "I think I'm going to take a nap.",
    "I was thinking about you.",
    "I felt sad yesterday.",
    "I said no.",
    "I was at home all day.",
    "I want to ask you something.",
    "I'm going to be honest with you.",
    "I'm sorry to hear that.",
    "I have a question.",
    "I have to go.",
    "I made it!",
    "I had a great time.",
    "I ran out of milk.",
    "When I lived in Paris, I loved croissants.",
    "The weather is nice in Lisbon.",
    "Paris is beautiful.",
    "",
]


@pytest.mark.parametrize("text", NOTHING)
def test_no_facts(text: str) -> None:
    assert extract_en(text, timestamp=TS).facts == []


def test_a_question_does_not_hide_the_statement_before_it() -> None:
    assert triples("I love hiking, do you?") == {(U, "likes", "hiking")}
    assert triples("I live in Lisbon, what about you?") == {(U, "lives_in", "Lisbon")}


# ---------------------------------------------------------------------- shape and safety

CORPUS = [text for text, _ in IDENTITY + RELATIONSHIPS + PREFERENCES + NEGATIONS + THIRD_PARTY]


def test_every_fact_uses_a_known_predicate_and_keeps_its_evidence() -> None:
    for text in CORPUS:
        for fact in extract_en(text, timestamp=TS).facts:
            assert fact.predicate in PREDICATES
            assert fact.subject and fact.object and fact.evidence
            assert len(fact.evidence) <= len(text) + 10  # a clause of the text, not more
            assert 0.0 < fact.confidence <= 1.0


def test_evidence_is_the_clause_as_written() -> None:
    facts = extract_en("Yesterday I went to the zoo, and I love jazz.", timestamp=TS).facts
    evidence = {f.predicate: f.evidence for f in facts}
    assert evidence == {"visited": "Yesterday I went to the zoo", "likes": "I love jazz"}


def test_objects_are_trimmed_of_articles_and_possessives() -> None:
    for text in CORPUS:
        for fact in extract_en(text, timestamp=TS).facts:
            if fact.predicate in ("did", "plans", "goal", "decided"):
                continue  # verb phrases keep their words ("finished my first marathon")
            first = fact.object.split()[0].casefold()
            assert first not in {"a", "an", "the", "my", "our", "his", "her", "their"}, fact


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "   \n\t",
        "...???!!!",
        "\x00\x01\x02",
        "\ud800",
        "🙂🙃" * 200,
        "a" * 100_000,
        "I live in " + "New " * 20_000,
        "I love " + ", ".join(["cats"] * 5_000),
        "(((((([[[[{{{{",
        "I'm allergic to " + "peanuts and " * 8_000,
        "I " * 50_000,
        "My My My My sister sister Maria Maria",
    ],
)
def test_junk_input_never_raises(junk: str) -> None:
    result = extract_en(junk, timestamp=TS)
    assert isinstance(result, Extraction)
    assert all(f.predicate in PREDICATES for f in result.facts)


@pytest.mark.parametrize("bad", [None, 42, b"I live in Lisbon", ["I live in Lisbon"]])
def test_non_text_input_gives_an_empty_extraction(bad: object) -> None:
    assert extract_en(bad, timestamp=TS) == Extraction()  # type: ignore[arg-type]


def test_a_hundred_thousand_characters_of_chat_still_extract() -> None:
    text = "Nice weather today, let's chat. " * 3_200 + "I live in Lisbon."
    assert len(text) > 100_000
    assert triples(text) == {(U, "lives_in", "Lisbon")}


CHAT_WORDS = [
    "I", "my", "am", "is", "live", "in", "love", "hate", "Lisbon", "Maria", "sister", "dog",
    "named", "to", "yesterday", "not", "Max", "no", "longer", ",", ".", "?", "!", "'",
]  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(CHAT_WORDS), max_size=25).map(" ".join))
def test_fuzzed_chat_never_raises(text: str) -> None:
    result = extract_en(text, timestamp=TS)
    for fact in result.facts:
        assert fact.predicate in PREDICATES
        assert fact.subject and fact.object


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_unicode_never_raises(text: str) -> None:
    assert isinstance(extract_en(text, timestamp=TS), Extraction)


def test_concurrent_calls_agree() -> None:
    texts = CORPUS[:40]
    expected = [extract_en(t, timestamp=TS) for t in texts]
    results: list[list[Extraction]] = [[] for _ in range(4)]

    def run(slot: int) -> None:
        results[slot] = [extract_en(t, timestamp=TS) for t in texts]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(r == expected for r in results)


def varied_messages(count: int) -> list[str]:
    """``count`` different chat messages: subjects × statements × endings."""
    subjects = ["I", "My sister Maria", "Lena", "We", "My friend Tom", "She", "Carlos"]
    statements = [
        " live in {p}", " moved to {p} {d}", " work at {o}", " love {t}", " can't stand {t}",
        " am allergic to {t}", " went to a {e} {d}", " visited {p} {d}", " am going to visit {p} {d}",
        " want to learn {l}", " decided to quit {t}", " have a dog named {m}", " no longer eat {t}",
        " think {p} is lovely", " said hi to everyone", " ran a {e} {d}",
    ]  # fmt: skip
    fill = {
        "p": ["Lisbon", "Porto", "Berlin", "Austin", "Tokyo", "Cape Town"],
        "o": ["Google", "Acme Corp", "the University of Lisbon", "Tesla"],
        "t": ["hiking", "olives", "peanuts", "jazz", "spicy food", "board games"],
        "e": ["concert", "support group", "charity race", "wedding"],
        "d": ["yesterday", "last week", "next Friday", "3 days ago", "on May 7", ""],
        "l": ["Spanish", "Japanese", "the guitar"],
        "m": ["Max", "Luna", "Biscuit"],
    }
    endings = ["", ".", "!", ", what about you?", " lol", ", it was great.", "?"]
    rng = random.Random(8)
    out: set[str] = set()
    for subject, statement, ending in itertools.cycle(
        itertools.product(subjects, statements, endings)
    ):
        sentence = subject + statement.format(**{k: rng.choice(v) for k, v in fill.items()})
        out.add(" ".join(sentence.split()) + ending)
        if len(out) >= count:
            return sorted(out)
    raise AssertionError("unreachable")


def test_a_chat_message_costs_well_under_the_budget() -> None:
    """The budget is 2 ms per typical message after warm-up; measured ≈0.3 ms here with a
    different message time for every message (so date resolution is not cached)."""
    messages = varied_messages(1000) + CORPUS + NOTHING
    rng = random.Random(3)
    stamps = [datetime(2023, 1, 1, tzinfo=UTC).replace(day=1 + rng.randrange(28)) for _ in messages]
    extract_en("I went to Rome yesterday and I'm going to Oslo next month.", timestamp=TS)
    times = []
    for text, stamp in zip(messages, stamps, strict=True):
        start = time.perf_counter()
        extract_en(text, timestamp=stamp)
        times.append(time.perf_counter() - start)
    assert len(messages) >= 1000
    assert statistics.mean(times) < 0.002


# ------------------------------------------------------------------------- chat phrasing

CHAT = [
    ("Just started at Spotify last month, still learning!", {(U, "works_at", "Spotify")}),
    ("Finished my first pottery bowl.", {(U, "did", "Finished my first pottery bowl")}),
    ("Been living in Austin for 5 years now.", {(U, "lives_in", "Austin")}),
    ("My son Leo is 5 and obsessed with dinosaurs.", {(U, "child", "Leo"), ("Leo", "age", "5"), ("Leo", "likes", "dinosaurs")}),
    ("Oliver is 8 and Emma just turned 5.", {("Oliver", "age", "8"), ("Emma", "age", "5")}),
    ("My dad, Robert, still lives in Glasgow.", {(U, "father", "Robert"), ("Robert", "lives_in", "Glasgow")}),
    ("My boss, Mr. Hendricks, is on vacation.", {(U, "boss", "Mr. Hendricks")}),
    ("We got a puppy, we named him Waffles.", {(U, "has_pet", "Waffles")}),
    ("We adopted a kitten on Saturday, her name is Luna.", {(U, "has_pet", "Luna")}),
    ("I love jazz, especially Coltrane.", {(U, "likes", "jazz"), (U, "likes", "Coltrane")}),
    ("Pineapple on pizza is disgusting.", {(U, "dislikes", "Pineapple on pizza")}),
    ("I'm Sophie, a nurse from Dublin.", {(U, "name", "Sophie"), (U, "job", "nurse"), (U, "from", "Dublin")}),
    ("Name's Priya. Nice to meet you!", {(U, "name", "Priya")}),
    ("I'm married, if that matters.", {(U, "relationship_status", "married")}),
    ("I grew up in Porto but I live in Lisbon.", {(U, "from", "Porto"), (U, "lives_in", "Lisbon")}),
    ("Lena works at Siemens as an electrical engineer.", {("Lena", "works_at", "Siemens"), ("Lena", "job", "electrical engineer")}),
    ("I work for a small startup called Brightloop.", {(U, "works_at", "Brightloop")}),
    ("My daughter Chloe just started college at NYU.", {(U, "child", "Chloe"), ("Chloe", "studies_at", "NYU")}),
    ("Priya's birthday is on October 2nd.", {("Priya", "birthday", "October 2nd")}),
    ("Claire just had a baby girl named Isla.", {("Claire", "child", "Isla")}),
    ("I got promoted yesterday!!", {(U, "did", "got promoted")}),
    ("I took the kids to the science museum.", {(U, "visited", "science museum")}),
    ("I took my dog to the vet.", {(U, "did", "took my dog to the vet")}),
    ("I speak three languages: English, Hindi and Tamil.", {(U, "speaks", "English"), (U, "speaks", "Hindi"), (U, "speaks", "Tamil")}),
    ("I adore old black and white movies.", {(U, "likes", "old black and white movies")}),
    ("I really love spicy food, the spicier the better.", {(U, "likes", "spicy food")}),
    ("Me and my partner Chris just bought a house!", {(U, "partner", "Chris"), (U, "did", "bought a house")}),
    ("I'm going to ask my boss for a raise tomorrow.", {(U, "plans", "ask my boss for a raise")}),
    ("I'm planning to move in with my girlfriend next month.", {(U, "plans", "move in with my girlfriend")}),
    ("Next week I'm giving a talk at my school.", {(U, "plans", "give a talk at my school")}),
    ("I'm gluten intolerant.", {(U, "allergic_to", "gluten")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), CHAT)
def test_chat_phrasing(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


CHAT_NEGATIONS = [
    ("Tom and I aren't together anymore.", {(U, "partner", "Tom")}),
    ("I used to have a dog named Buster.", {(U, "has_pet", "Buster")}),
    ("I lost my job at the bank last month.", {(U, "works_at", "bank")}),
    ("Turns out I'm not allergic to penicillin anymore, the doctor retested me.", {(U, "allergic_to", "penicillin")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), CHAT_NEGATIONS)
def test_chat_negations(text: str, expected: set[Triple]) -> None:
    assert negations(text) == expected


def test_starting_to_do_something_states_it() -> None:
    assert triples("I'm no longer vegetarian, I started eating chicken again.") == {
        (U, "eats", "chicken")
    }
    assert negations("I'm no longer vegetarian, I started eating chicken again.") == {
        (U, "diet", "vegetarian")
    }
    assert triples("I started painting.") == {(U, "hobby", "painting")}


def test_a_retraction_keeps_its_date() -> None:
    fact = only_fact("I stopped eating sugar last month.")
    assert (fact.predicate, fact.negated, fact.date) == ("eats", True, date(2023, 4, 8))


def test_a_dated_event_with_any_past_verb_is_something_done() -> None:
    facts = extract_en("My cat Mochi knocked my coffee over this morning.", timestamp=TS).facts
    assert {(f.subject, f.predicate, f.object, f.date) for f in facts} == {
        (U, "has_pet", "Mochi", None),
        ("Mochi", "did", "knocked my coffee", date(2023, 5, 8)),
    }
    # without a date, or with a verb of thinking or talking, it is not
    assert triples("Mochi knocked my coffee over.") == set()
    assert triples("I mentioned my idea yesterday.") == set()


def test_more_things_that_are_not_facts() -> None:
    for text in [
        "I've always wanted a dog.",
        "I'm going to bed.",
        "I'm trying to figure out what to do.",
        "I want to know more about investing.",
        "I'm thinking about you.",
        "Been there, done that.",
    ]:
        assert triples(text) == set(), text


def test_being_a_fan_of_something_is_liking_it() -> None:
    assert triples("I'm a huge Arsenal fan.") == {(U, "likes", "Arsenal")}
    assert triples("I'm a coffee lover.") == {(U, "likes", "coffee")}
    assert triples("I'm not a big jazz fan.") == {(U, "dislikes", "jazz")}
    assert triples("I'm a big fan.") == set()


# ------------------------------------------------------------------------------ decisions

DECISIONS = [
    ("I've made up my mind, I'm selling my motorbike.", {(U, "decided", "sell my motorbike")}),
    ("Made up my mind: we're repainting the living room.", {(U, "decided", "repaint the living room")}),
    ("Decision made - I'm enrolling in night classes.", {(U, "decided", "enroll in night classes")}),
    ("I've made my decision. I'm staying in Leeds.", {(U, "decided", "stay in Leeds")}),
    ("I decided I'm switching to night shifts.", {(U, "decided", "switch to night shifts")}),
    ("I finally decided to accept the offer in Portland.", {(U, "decided", "accept the offer in Portland")}),
    ("We decided not to buy the cabin.", {(U, "decided", "not to buy the cabin")}),
    ("I decided against adopting a second dog.", {(U, "decided", "not to adopt a second dog")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), DECISIONS)
def test_decisions_in_their_chat_forms(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_a_decision_marker_alone_states_nothing() -> None:
    assert triples("I've made up my mind.") == set()
    assert triples("I made my decision.") == set()
    # and a decision is no state: "I'm staying in Leeds" alone is where one lives
    assert triples("I'm staying in Leeds.") == {(U, "lives_in", "Leeds")}


# -------------------------------------------------------------------------------- hobbies

HOBBIES = [
    ("In my spare time I usually go mountain biking or bake bread.", {(U, "hobby", "mountain biking"), (U, "hobby", "baking bread")}),
    ("When I'm not working I knit and play chess.", {(U, "hobby", "knitting"), (U, "hobby", "playing chess")}),
    ("On weekends I go kayaking.", {(U, "hobby", "kayaking")}),
    ("I do woodworking in my free time.", {(U, "hobby", "woodworking")}),
    ("Birdwatching is my new hobby.", {(U, "hobby", "Birdwatching")}),
    ("Calligraphy has become my favorite hobby.", {(U, "hobby", "Calligraphy")}),
    ("My hobby lately is restoring old radios.", {(U, "hobby", "restoring old radios")}),
    ("I started painting again.", {(U, "hobby", "painting")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), HOBBIES)
def test_hobbies(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_what_is_no_hobby() -> None:
    for text in [
        "I work on weekends.",
        "I started looking into therapists.",
        "I started going to the gym.",
        "In my free time I love it.",
    ]:
        assert all(p != "hobby" for _s, p, _o in triples(text)), text


# ---------------------------------------------------------------------- plans and their day

APPOINTMENTS = [
    ("I have a vet appointment on Thursday.", {("plans", "vet appointment", date(2023, 5, 11))}),
    ("I've got an interview at Shopify tomorrow.", {("plans", "interview at Shopify", date(2023, 5, 9))}),
    ("My dentist appointment is on Friday.", {("plans", "dentist appointment", date(2023, 5, 12))}),
    ("My flight to Boston is on Sunday.", {("plans", "flight to Boston", date(2023, 5, 14))}),
    ("I have a checkup with Dr. Patel tomorrow.", {("plans", "checkup with Dr. Patel", date(2023, 5, 9))}),
    ("My checkup was on Friday.", {("attended", "checkup", date(2023, 5, 5))}),
    ("I'm going to drive to Maine next week to see my grandparents.", {("plans", "drive to Maine", date(2023, 5, 15))}),
    ("We're going to Lisbon next month to celebrate our anniversary.", {("plans", "go to Lisbon", date(2023, 6, 8))}),
    ("I'm also hosting a quiz night on Friday.", {("plans", "host a quiz night", date(2023, 5, 12))}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), APPOINTMENTS)
def test_appointments_and_plans_keep_their_day_and_a_short_object(
    text: str, expected: set[tuple[str, str, date | None]]
) -> None:
    assert dated(text) == expected


def test_plan_objects_drop_purpose_and_beneficiary() -> None:
    assert triples("I plan to bake a pie for my neighbors.") == {(U, "plans", "bake a pie")}
    assert triples("I want to learn Italian to talk with my in-laws.") == {
        (U, "goal", "learn Italian")
    }
    # what follows the verb itself stays
    assert triples("I want to learn to play the cello.") == {(U, "goal", "learn to play the cello")}
    assert triples("I'm planning to go back to work next month.") == {
        (U, "plans", "go back to work")
    }


def test_an_appointment_without_a_day_is_no_plan() -> None:
    assert triples("I have a meeting.") == set()
    assert triples("I have class on Mondays.") == set()


def test_a_cancelled_or_dropped_plan_is_a_retracted_plan() -> None:
    for text, expected in [
        ("I'm cancelling my trip to Oslo.", {(U, "plans", "trip to Oslo")}),
        ("We had to cancel our vacation to Crete.", {(U, "plans", "vacation to Crete")}),
        ("I cancelled my plans to visit Rome.", {(U, "plans", "visit Rome")}),
        ("I'm not going to Oslo anymore.", {(U, "plans", "go to Oslo")}),
    ]:
        assert negations(text) == expected, text
        assert triples(text) == set(), text
    assert extract_en("I cancelled my gym membership.", timestamp=TS).facts == []


# ----------------------------------------------------------- ages, birthdays, third parties

PEOPLE = [
    ("My nephew Sam is seven.", {(U, "relative", "Sam"), ("Sam", "age", "7")}),
    ("Ivy just turned twenty-one.", {("Ivy", "age", "21")}),
    ("My uncle Ed turns 85 on Sunday.", {(U, "relative", "Ed"), ("Ed", "age", "85")}),
    ("My neighbour Ruth came over. She's eighty-two.", {("Ruth", "age", "82")}),
    ("My 6-year-old daughter Mia loves drawing.", {(U, "child", "Mia"), ("Mia", "age", "6"), ("Mia", "likes", "drawing")}),
    ("My birthday is March 30th.", {(U, "birthday", "March 30th")}),
    ("My birthday's on the 2nd of May.", {(U, "birthday", "the 2nd of May")}),
    ("I was born on July 4th.", {(U, "birthday", "July 4th")}),
    ("Today is my birthday!", {(U, "birthday", "May 8")}),
    ("My sister Emma is great. Her birthday is on March 3rd.", {(U, "sister", "Emma"), ("Emma", "birthday", "March 3rd")}),
    ("I'm a student at Rice, studying linguistics.", {(U, "studies_at", "Rice"), (U, "studies", "linguistics")}),
    ("My roommate Dev is an electrician.", {("Dev", "job", "electrician")}),
    ("Noor, who I met at the gym, is a pharmacist.", {("Noor", "job", "pharmacist")}),
    ("Ravi from my choir is a paramedic.", {("Ravi", "job", "paramedic")}),
    ("Sarah, a nurse from Leeds, lives in York.", {("Sarah", "job", "nurse"), ("Sarah", "from", "Leeds"), ("Sarah", "lives_in", "York")}),
    ("My sister Ana is a nurse and her husband Leo is a chef.", {(U, "sister", "Ana"), ("Ana", "job", "nurse"), ("Ana", "spouse", "Leo"), ("Leo", "job", "chef")}),
    ("Lucia got a kitten named Pip.", {("Lucia", "has_pet", "Pip")}),
    ("Marco and his wife got a puppy named Olive.", {("Marco", "has_pet", "Olive")}),
    ("Tom's cat Ziggy is nine.", {("Tom", "has_pet", "Ziggy"), ("Ziggy", "age", "9")}),
    ("I'm an analyst at a fintech startup called Ledgerly.", {(U, "job", "analyst"), (U, "works_at", "Ledgerly")}),
    ("I joined a small studio called Inkwell.", {(U, "works_at", "Inkwell")}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), PEOPLE)
def test_ages_birthdays_and_third_parties(text: str, expected: set[Triple]) -> None:
    assert triples(text) == expected


def test_numbers_in_words_that_are_not_ages() -> None:
    for text in ["We are three.", "I'm one of five kids.", "I'm ten minutes late, sorry."]:
        assert all(p != "age" for _s, p, _o in triples(text)), text


def test_a_club_introduced_by_name_is_no_employer() -> None:
    assert triples("I joined a choir called Voices.") == set()


def test_a_plain_allergy_denial_is_a_negated_allergy() -> None:
    assert negations("I'm not allergic to dogs.") == {(U, "allergic_to", "dogs")}
    assert negations("Ben isn't allergic to nuts.") == {("Ben", "allergic_to", "nuts")}
    assert triples("I'm not allergic to dogs.") == set()


# ----------------------------------------------------------- places, outcomes and pet names

OUTINGS = [
    ("I took my nephew to the aquarium yesterday.", {("visited", "aquarium", date(2023, 5, 7))}),
    ("We took the kids to Disneyland last week.", {("visited", "Disneyland", date(2023, 5, 1))}),
    ("We brought the kids to a puppet show on Sunday.", {("attended", "puppet show", date(2023, 5, 7))}),
    ("I got promoted to lead engineer yesterday!", {("did", "got promoted to lead engineer", date(2023, 5, 7))}),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), OUTINGS)
def test_outings_are_visits_and_promotions_keep_their_title(
    text: str, expected: set[tuple[str, str, date | None]]
) -> None:
    assert dated(text) == expected


def test_a_pet_is_named_when_its_name_is_given_anywhere_in_the_message() -> None:
    assert triples("We got a kitten. Her name is Clover.") == {(U, "has_pet", "Clover")}
    assert triples("Meet Biscuit, my new puppy!") == {(U, "has_pet", "Biscuit")}
    assert triples("I adopted a puppy! We named him Rolo.") == {
        (U, "has_pet", "Rolo"),
        (U, "did", "adopted a puppy"),
    }
    assert triples("My sister has a baby. Her name is Ava.") == set()  # no pet to name


# ------------------------------------------------------- opinions of others, chat clutter

NOT_THE_SPEAKERS = [
    "Plenty of people say Rome is overrated, do you agree?",
    "Everyone thinks kale is gross.",
    "Sushi is overrated, don't you think?",
    "Sounds like a great plan!",
    "Looks like fun!",
    "Feels like forever since we talked.",
    "Being organized helps a lot.",
    "Hiking opened up a whole new world for me.",
    "Unconditional support is so important.",
    "I'm planning a few.",
    "I'd love to check them out.",
    "I'd love to see another photo of yours!",
    "I want to keep going and make it happen.",
    "I love the colors in this one!",
    "I love it when they are happy.",
    "I learned a lot.",
    "I'm off to bake some cookies, talk soon!",
]


@pytest.mark.parametrize("text", NOT_THE_SPEAKERS)
def test_reported_opinions_reactions_and_idioms_give_nothing(text: str) -> None:
    assert extract_en(text, timestamp=TS).facts == []


CLUTTERED = [
    "Painting portraits and still life is my favorite!",
    "I started playing the cello about three years ago.",
    "I made some cookies recently.",
    "I love hiking in the mountains and exploring forests.",
    "I'm a big fan of classical composers like Bach and Handel.",
    "We went camping a few weeks ago and had a blast exploring the woods.",
    "I want to find a good spot and take the dogs there sometime.",
    "I'm going to order some pizza for tonight.",
    "I'm relaxing and recharging this weekend with a long walk.",
    "I tried my hand at pottery and learned a ton.",
    "I love the outdoors and all the fresh air.",
]
#: Words a clean object neither ends with (it was cut mid-way) nor contains (it refers
#: back to something, or it is a clause).
DANGLING = {"and", "or", "to", "for", "of", "with", "at", "in", "on", "about", "a", "an", "the"}
REFERRING = {"it", "them", "this", "that", "these", "those", "they", "you", "we", "I"}


def test_objects_from_chat_are_clean_phrases() -> None:
    for text in CLUTTERED:
        for fact in extract_en(text, timestamp=TS).facts:
            words = fact.object.split()
            assert words[-1].casefold() not in DANGLING, (text, fact)
            assert not REFERRING & set(words), (text, fact)
            assert not {"recently", "sometime", "there"} & set(words), (text, fact)


def test_cluttered_chat_still_gives_its_facts() -> None:
    assert triples("I started playing the cello about three years ago.") == {
        (U, "hobby", "playing the cello")
    }
    assert triples("I made some cookies recently.") == {(U, "did", "made some cookies")}
    assert triples("I'm relaxing and recharging this weekend with a long walk.") == {
        (U, "plans", "relax and recharge")
    }
    assert triples("I love the outdoors.") == {(U, "likes", "outdoors")}


def test_a_lower_case_place_must_be_a_known_one() -> None:
    for text in ["i live in fear", "i live in a small town", "i live in the paris of the south"]:
        assert triples(text) == set(), text

"""The prompt of the LLM fact extractor: the predicate vocabulary the model may use,
the near misses it produces mapped back onto it, and the chat messages that ask for one
message's facts as JSON (:func:`build_messages`). :mod:`mnemolayer.extract.llm` sends them
and reads the answer.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

from mnemolayer.extract.base import SELF
from mnemolayer.extract.predicates import PREDICATES

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = ["EXTRACTABLE", "build_messages", "normalize_predicate", "speaker_name"]

#: Predicates the model may use: all but ``feedback``, which only
#: ``Memory.learn_from_feedback`` records.
EXTRACTABLE = tuple(name for name in PREDICATES if name != "feedback")

# Near misses models produce, mapped onto the vocabulary. Only same-direction synonyms:
# "sister_of" (the reverse relation) is not mapped and gets dropped.
_PREDICATE_ALIASES: dict[str, str] = {
    "named": "name",
    "called": "name",
    "is_named": "name",
    "birthdate": "birthday",
    "born_on": "birthday",
    "date_of_birth": "birthday",
    "live_in": "lives_in",
    "lives_at": "lives_in",
    "resides_in": "lives_in",
    "location": "lives_in",
    "home": "lives_in",
    "moved_to": "lives_in",
    "comes_from": "from",
    "hometown": "from",
    "born_in": "from",
    "occupation": "job",
    "profession": "job",
    "works_as": "job",
    "work_at": "works_at",
    "works_for": "works_at",
    "employer": "works_at",
    "employed_by": "works_at",
    "employed_at": "works_at",
    "work_on": "works_on",
    "working_on": "works_on",
    "study_at": "studies_at",
    "school": "studies_at",
    "attends": "studies_at",
    "major": "studies",
    "speak": "speaks",
    "language": "speaks",
    "married_to": "spouse",
    "wife": "spouse",
    "husband": "spouse",
    "girlfriend": "partner",
    "boyfriend": "partner",
    "mom": "mother",
    "dad": "father",
    "children": "child",
    "son": "child",
    "daughter": "child",
    "manager": "boss",
    "pet": "has_pet",
    "owns_pet": "has_pet",
    "owns": "has_pet",
    "like": "likes",
    "loves": "likes",
    "love": "likes",
    "enjoys": "likes",
    "dislike": "dislikes",
    "hates": "dislikes",
    "hate": "dislikes",
    "prefer": "prefers",
    "allergy": "allergic_to",
    "allergic": "allergic_to",
    "hobbies": "hobby",
    "eat": "eats",
    "visit": "visited",
    "visits": "visited",
    "went_to": "visited",
    "traveled_to": "visited",
    "travelled_to": "visited",
    "attend": "attended",
    "plan": "plans",
    "plans_to": "plans",
    "planning": "plans",
    "will": "plans",
    "decide": "decided",
    "decided_to": "decided",
    "wants": "goal",
    "wants_to": "goal",
    "want": "goal",
}


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def normalize_predicate(raw: str) -> str | None:
    """The vocabulary predicate a model's ``raw`` predicate means, or ``None``.

    Case, spaces and hyphens are normalised (``"Lives In"`` → ``lives_in``); known near
    misses map (``works_for`` → ``works_at``, ``is_allergic_to`` → ``allergic_to``,
    ``like`` → ``likes``, ``has_sister`` → ``sister``); ``feedback`` and anything else
    outside :data:`EXTRACTABLE` give ``None``.
    """
    key = re.sub(r"[\s\-]+", "_", raw.strip().casefold())
    key = re.sub(r"\W", "", key).strip("_")
    candidates = [key]
    for prefix in ("is_", "has_", "was_"):
        if key.startswith(prefix):
            candidates.append(key[len(prefix) :])
    candidates += [f"{c}s" for c in list(candidates)]
    candidates += [c[:-1] for c in list(candidates) if c.endswith("s") and not c.endswith("ss")]
    for candidate in candidates:
        if candidate in EXTRACTABLE:
            return candidate
        alias = _PREDICATE_ALIASES.get(candidate)
        if alias is not None:
            return alias
    return None


def build_messages(
    text: str, *, speaker: str | None = None, timestamp: datetime | None = None
) -> list[ChatCompletionMessageParam]:
    """The chat messages asking for ``text``'s facts as JSON.

    A system message with the answer's shape, the predicate vocabulary and the
    conventions of :mod:`.types` (the speaker's name, or :data:`SELF`, for first person;
    the message's date, when known, for resolving relative dates to ``YYYY-MM-DD``),
    then the message itself as the user turn.
    """
    me = speaker_name(speaker)
    vocabulary = "\n".join(f"   - {name}: {_describe(name)}" for name in EXTRACTABLE)
    if timestamp is not None:
        day = timestamp.date()
        date_rule = (
            f"The message was sent on {day.isoformat()} ({_WEEKDAYS[day.weekday()]}). "
            'Resolve relative dates ("yesterday", "next Friday", "上周", "下个月") against '
            "that day and write every date as YYYY-MM-DD. A fact's date is the day its "
            'event happens or happened, else null. List each date expression in "dates".'
        )
    else:
        date_rule = (
            "The message's date is unknown: give a date only when the message states a "
            'full calendar date, as YYYY-MM-DD; leave relative dates ("yesterday", '
            '"next Friday") out, and date null.'
        )
    system = f"""You extract lasting facts about people from one chat message, for a personal memory.
Reply with a single JSON object and nothing else, of this shape:
{{"facts": [{{"subject": "...", "predicate": "...", "object": "...", "object_type": null, "negated": false, "date": null, "evidence": "..."}}],
 "entities": [{{"name": "...", "type": "person", "aliases": []}}],
 "dates": [{{"text": "...", "value": "YYYY-MM-DD"}}]}}

Rules:
1. predicate is exactly one of these names (X is the subject, Y the object):
{vocabulary}
   Leave out anything that fits none of them.
2. The speaker is "{me}". Write "{me}" for I, me, my, mine, 我, 我的. Anyone else is their own subject, by name: "my sister Maria lives in Rome" gives ("Maria", "lives_in", "Rome") and ("{me}", "sister", "Maria").
3. object: the message's own words, in its language, without articles or possessives: "a dog named Max" gives object "Max" with object_type "dog".
4. negated is true only when the message takes a fact back ("I no longer eat meat", "我不再喜欢咖啡"). "I don't like coriander" is a dislikes fact with negated false.
5. {date_rule}
6. evidence: the part of the message the fact comes from.
7. entity type: person, place, organization, pet or thing.
With no facts, reply {{"facts": [], "entities": [], "dates": []}}."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": text},
    ]


def _describe(name: str) -> str:
    """``name``'s meaning for the prompt: its English template with X and Y, made
    specific where the template alone is ambiguous ("X is Y")."""
    text = PREDICATES[name].en.format(s="X", o="Y")
    if text == "X is Y":
        return f"X is Y, Y being X's {name.replace('_', ' ')}"
    if text == "X Y":
        return "X did Y (an activity or event)"
    return text


def speaker_name(speaker: str | None) -> str:
    return speaker.strip() if speaker and speaker.strip() else SELF

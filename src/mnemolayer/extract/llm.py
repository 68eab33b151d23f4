"""The optional LLM fact extractor, over any OpenAI-compatible chat endpoint.

:class:`LLMExtractor` sends one message to a chat model (a hosted API, or a local
llama.cpp / vLLM / Ollama server) with instructions to answer with a JSON object of
facts, entities and dates; repairs near-JSON answers (:mod:`.jsonrepair`); validates
them against a schema; and turns them into the same :class:`~.types.Extraction` the
rules return: predicates only from :data:`~.predicates.PREDICATES` (near misses such as
``"lives in"`` or ``"works_for"`` mapped, unknown ones dropped), first person resolved to
the speaker (or :data:`~.types.SELF`), objects trimmed of articles and possessives, and
dates checked to be ISO calendar dates. The message's own date is in the prompt, so the
model resolves "yesterday" against the message time, not the processing time.

Failures never reach the caller: a timeout, a refused connection, an HTTP error after
the bounded retries, or an answer that is still not valid after a re-ask all make
:meth:`LLMExtractor.extract` log a warning and return the ``fallback`` extractor's result
(by default the offline rules). :attr:`LLMExtractor.last_source` tells which one
answered.

Needs the ``llm`` extra (the ``openai`` SDK and ``json-repair``).
"""

from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mnemolayer.config import LLMSettings
from mnemolayer.extract.base import (
    SELF,
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    Extractor,
    ResolvedDate,
)
from mnemolayer.extract.predicates import PREDICATES

try:
    import openai

    from mnemolayer.llm.client import Deadline, LLMBacked
    from mnemolayer.llm.jsonrepair import extract_json
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "LLM extraction needs the optional dependencies: pip install -e '.[llm]' in the mnemolayer checkout"
    ) from exc

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

__all__ = [
    "EXTRACTABLE",
    "InvalidAnswerError",
    "LLMExtractor",
    "build_messages",
    "normalize_predicate",
]

log = logging.getLogger(__name__)

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

# Subjects/objects that mean the speaker. Compared case-folded.
_FIRST_PERSON = frozenset(
    {
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "speaker",
        "the speaker",
        "the user",
        "self",
        "我",
        "我的",
        "我自己",
        "自己",
        "本人",
    }
    | {SELF.casefold()}
)

# Leading words trimmed from objects: articles and possessives. "the" only in lower
# case, so names such as "The Hague" keep theirs.
_LEADING_FILLER = re.compile(r"^(?:(?:a|an|the|my|our|your|his|her|their|its)\s+)+")
_LEADING_FILLER_ZH = re.compile(r"^(?:我的|我们的)")
_EDGE_PUNCTUATION = " \t\r\n\"'`“”‘’「」『』.,;:!?。，；：！？、"
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.+\-Z]*)?$")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EVIDENCE_CHARS = 300


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
    me = _speaker_name(speaker)
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


# -- the answer's schema ----------------------------------------------------------------


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True, coerce_numbers_to_str=True)


class _AnswerFact(_Item):
    subject: str = Field(min_length=1)
    predicate: str = Field(min_length=1)
    object: str = Field(min_length=1)
    object_type: str | None = None
    negated: bool | None = None
    date: str | None = None
    confidence: float | None = None
    evidence: str | None = None


class _AnswerEntity(_Item):
    name: str = Field(min_length=1)
    type: str | None = None
    aliases: list[str] = Field(default_factory=list)


class _AnswerDate(_Item):
    text: str = ""
    value: str


class _Answer(BaseModel):
    """The top level: ``facts`` is required; items are validated one by one."""

    model_config = ConfigDict(extra="ignore")

    facts: list[Any]
    entities: list[Any] = Field(default_factory=list)
    dates: list[Any] = Field(default_factory=list)


@dataclass(slots=True)
class _Parsed:
    facts: list[_AnswerFact]
    entities: list[_AnswerEntity]
    dates: list[_AnswerDate]


class InvalidAnswerError(ValueError):
    """The model's answer is not JSON, or not of the asked shape."""


def _parse_answer(content: str) -> _Parsed:
    """Validate a model's answer; items that do not fit are dropped one by one.

    Raises:
        InvalidAnswerError: no JSON, no ``facts`` list, or facts none of which fit.
    """
    try:
        data = extract_json(content)
    except ValueError as exc:
        raise InvalidAnswerError(str(exc)) from None
    if isinstance(data, list):  # a bare list of facts
        data = {"facts": data}
    try:
        answer = _Answer.model_validate(data)
    except ValidationError as exc:
        raise InvalidAnswerError(_short_error(exc)) from None
    facts, errors = _validate_items(_AnswerFact, answer.facts)
    if answer.facts and not facts:
        raise InvalidAnswerError(f"no fact has the asked fields: {errors[0]}")
    entities, _ = _validate_items(_AnswerEntity, answer.entities)
    dates, _ = _validate_items(_AnswerDate, answer.dates)
    return _Parsed(facts, entities, dates)


_ItemT = TypeVar("_ItemT", bound=BaseModel)


def _validate_items(model: type[_ItemT], items: list[Any]) -> tuple[list[_ItemT], list[str]]:
    valid: list[_ItemT] = []
    errors: list[str] = []
    for item in items:
        try:
            valid.append(model.model_validate(item))
        except ValidationError as exc:
            errors.append(_short_error(exc))
    if errors:
        log.debug("dropped %d %s item(s): %s", len(errors), model.__name__, errors[0])
    return valid, errors


def _short_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "answer"
    return f"{where}: {first['msg']}"


# -- from the answer to an Extraction ------------------------------------------------------


def _speaker_name(speaker: str | None) -> str:
    return speaker.strip() if speaker and speaker.strip() else SELF


def _trim(value: str) -> str:
    return value.strip(_EDGE_PUNCTUATION)


def _clean_object(value: str) -> str:
    text = _trim(value)
    text = _LEADING_FILLER.sub("", text)
    text = _LEADING_FILLER_ZH.sub("", text)
    return _trim(text)


def _person(name: str, me: str) -> str:
    """``me`` when ``name`` is first person (or the speaker's name), else ``name``."""
    folded = name.casefold()
    return me if folded in _FIRST_PERSON or folded == me.casefold() else name


def _iso_date(value: str | None) -> date | None:
    """The calendar date in an ISO ``YYYY-MM-DD`` string (a time part is ignored), or
    ``None`` for anything else, including impossible dates such as 2024-02-30."""
    if not value:
        return None
    match = _ISO_DATE.match(value.strip())
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def _evidence(span: str | None, text: str) -> str:
    """The model's quoted span when it really is in the message, else the message."""
    if span and span.strip() and span.strip() in text:
        return span.strip()
    whole = " ".join(text.split())
    return whole if len(whole) <= _EVIDENCE_CHARS else whole[: _EVIDENCE_CHARS - 1] + "…"


def _to_extraction(parsed: _Parsed, text: str, speaker: str | None) -> Extraction:
    me = _speaker_name(speaker)
    out = Extraction()
    seen: set[tuple[str, str, str, bool, date | None]] = set()
    for item in parsed.facts:
        predicate = normalize_predicate(item.predicate)
        if predicate is None:
            log.debug("dropped a fact with unknown predicate %r", item.predicate)
            continue
        subject = _person(_trim(item.subject), me)
        obj = _person(_clean_object(item.object), me)
        if not subject or not obj:
            continue
        when = _iso_date(item.date)
        key = (subject, predicate, obj, bool(item.negated), when)
        if key in seen:
            continue
        seen.add(key)
        extra: dict[str, Any] = {}
        if item.confidence is not None and math.isfinite(item.confidence):
            extra["confidence"] = min(1.0, max(0.0, item.confidence))
        object_type = (item.object_type or "").strip().casefold() or None
        out.facts.append(
            ExtractedFact(
                subject=subject,
                predicate=predicate,
                object=obj,
                object_type=object_type,
                negated=bool(item.negated),
                date=when,
                evidence=_evidence(item.evidence, text),
                **extra,
            )
        )

    names: set[str] = set()
    for entity in parsed.entities:
        name = _person(_trim(entity.name), me)
        if not name or name == SELF or name.casefold() in names:
            continue
        names.add(name.casefold())
        aliases = tuple(
            dict.fromkeys(
                a for a in map(_trim, entity.aliases) if a and a.casefold() != name.casefold()
            )
        )
        kind = (entity.type or "").strip().casefold() or "thing"
        out.entities.append(ExtractedEntity(name=name, type=kind, aliases=aliases))
    # People named as relations are entities even when the model did not list them.
    for fact in out.facts:
        category = PREDICATES[fact.predicate].category
        if category != "relationship" or fact.object == me or fact.object.casefold() in names:
            continue
        names.add(fact.object.casefold())
        kind = "pet" if fact.predicate == "has_pet" else "person"
        out.entities.append(ExtractedEntity(name=fact.object, type=kind))

    for resolved in parsed.dates:
        value = _iso_date(resolved.value)
        if value is not None and resolved.text:
            out.dates.append(ResolvedDate(text=resolved.text, value=value))
    return out


# -- the extractor ----------------------------------------------------------------------


class LLMExtractor(LLMBacked):
    """Extracts facts with a chat model behind any OpenAI-compatible endpoint.

    Implements :class:`~.types.Extractor`. Each :meth:`extract` makes one chat request
    (asking for a JSON object, with ``response_format={"type": "json_object"}`` until
    the server refuses that parameter, then without it), retries transport failures,
    re-asks once when the answer is not valid, and otherwise falls back.

    Time is bounded per message: each HTTP attempt may take ``settings.timeout_s``;
    timeouts, connection errors and HTTP 408/409/429/5xx are retried up to
    ``settings.max_retries`` times with backoff (a server's ``Retry-After`` is honoured
    when it fits); and the whole call, re-asks included, stops after ``budget_s``
    seconds, by default ``(max_retries + 1) * timeout_s``.

    Thread-safe: the HTTP client is shared; :attr:`last_source` and
    :attr:`last_error` are per thread.

    Args:
        settings: the endpoint, model, key, timeout, retries and temperature.
        fallback: the extractor used when the model fails; ``None`` → the offline rules
            (:class:`mnemolayer.extract.rules.extractor.RuleExtractor`), built on first use.
        reasks: how many times to ask again after an answer that is not valid JSON of
            the asked shape (0 = never).
        max_tokens: cap on the answer's length in tokens; ``None`` leaves it to the
            server.
        budget_s: seconds one :meth:`extract` may spend on the model before falling
            back; ``None`` → ``(max_retries + 1) * timeout_s``.

    Raises:
        ValueError: ``reasks`` < 0, ``max_tokens`` < 1 or ``budget_s`` <= 0.
    """

    def __init__(
        self,
        settings: LLMSettings,
        *,
        fallback: Extractor | None = None,
        reasks: int = 1,
        max_tokens: int | None = 1024,
        budget_s: float | None = None,
    ) -> None:
        if reasks < 0:
            raise ValueError(f"reasks must be >= 0, got {reasks}")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if budget_s is not None and not budget_s > 0:
            raise ValueError(f"budget_s must be > 0, got {budget_s}")
        super().__init__(settings, budget_s)
        self.reasks = reasks
        self.max_tokens = max_tokens
        self._json_mode = True
        self._fallback = fallback
        self._fallback_lock = threading.Lock()

    # -- public ---------------------------------------------------------------------------

    @property
    def json_mode(self) -> bool:
        """Whether requests still carry ``response_format={"type": "json_object"}``
        (turned off for good once the server rejects it)."""
        return self._json_mode

    def extract(
        self, text: str, *, speaker: str | None = None, timestamp: datetime | None = None
    ) -> Extraction:
        """Extract facts from ``text`` said by ``speaker`` (``None`` → :data:`SELF`) at
        ``timestamp`` (its date goes into the prompt; ``None`` → relative dates stay
        unresolved).

        Never raises: on any failure of the model it logs a warning and returns the
        fallback's extraction (an empty one if the fallback fails too). Blank text
        returns an empty extraction without a request.
        """
        if not text or not text.strip():
            self._answered()
            return Extraction()
        try:
            extraction = self._extract_with_model(text, speaker, timestamp)
        except Exception as exc:  # the contract: extract never raises
            self._fell_back(exc, "the fallback extractor")
            return self._extract_with_fallback(text, speaker, timestamp)
        self._answered()
        return extraction

    # -- internals --------------------------------------------------------------------------

    def _extract_with_model(
        self, text: str, speaker: str | None, timestamp: datetime | None
    ) -> Extraction:
        deadline = Deadline.after(self.budget_s)
        messages = build_messages(text, speaker=speaker, timestamp=timestamp)
        for ask in range(self.reasks + 1):
            content = self._complete(messages, deadline)
            try:
                parsed = _parse_answer(content)
            except InvalidAnswerError as exc:
                if ask == self.reasks:
                    raise
                log.info("invalid answer from %s (%s); asking again", self.name, exc)
                messages = [
                    *messages,
                    {"role": "assistant", "content": content[:4000]},
                    {
                        "role": "user",
                        "content": f"That answer was not valid ({exc}). Reply again with "
                        "only the JSON object of the asked shape.",
                    },
                ]
                continue
            return _to_extraction(parsed, text, speaker)
        raise AssertionError("unreachable: the last ask returns or raises")

    def _complete(self, messages: list[ChatCompletionMessageParam], deadline: Deadline) -> str:
        """One answer's text (:meth:`ChatClient.complete`), asked as a JSON object while
        the server takes ``response_format``; once it rejects that, asked again without.

        Raises:
            TimeoutError: the time budget ran out (or a server's Retry-After exceeds it).
            openai.APIError: a failure that is not retried, or the last retry's failure.
        """
        json_mode = self._json_mode
        try:
            return self._chat.complete(
                messages,
                deadline,
                max_tokens=self.max_tokens,
                response_format={"type": "json_object"} if json_mode else None,
            )
        except (openai.BadRequestError, openai.UnprocessableEntityError):
            if not json_mode:
                raise
        # Many local servers reject response_format: ask again without it.
        log.info("%s rejected response_format; retrying without it", self.name)
        self._json_mode = False
        try:
            return self._chat.complete(messages, deadline, max_tokens=self.max_tokens)
        except (openai.BadRequestError, openai.UnprocessableEntityError):
            self._json_mode = True  # the rejection was not about response_format
            raise

    def _extract_with_fallback(
        self, text: str, speaker: str | None, timestamp: datetime | None
    ) -> Extraction:
        try:
            return self._fallback_extractor().extract(text, speaker=speaker, timestamp=timestamp)
        except Exception:  # the contract: extract never raises
            log.exception("the fallback extractor failed too; returning no facts")
            return Extraction()

    def _fallback_extractor(self) -> Extractor:
        with self._fallback_lock:
            if self._fallback is None:
                from mnemolayer.extract.rules.extractor import (
                    RuleExtractor,  # the rules load their models on demand
                )

                self._fallback = RuleExtractor()
            return self._fallback

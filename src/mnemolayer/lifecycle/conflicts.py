"""Bi-temporal conflict resolution: fold newly extracted facts into a user's graph.

Every fact has two time axes, after the classic split of temporal databases into
*valid time* and *transaction time* (Snodgrass and Ahn, "A Taxonomy of Time in
Databases", SIGMOD 1985): ``valid_from`` / ``valid_to`` say when
the fact held in the user's world, ``created_at`` / ``expired_at`` say when mnemolayer
learnt it and when it stopped treating it as current. Keeping both lets memory answer
"what was true on date D" (valid time) and "what did we believe then" (transaction time)
without ever rewriting a fact's content. The idea of resolving contradictions by closing
the validity of the older edge and linking its replacement, rather than deleting it,
follows the temporal knowledge graph of Zep / Graphiti ("Zep: A Temporal Knowledge
Graph Architecture for Agent Memory", Rasmussen et al., 2025, arXiv:2501.13956); the
rules below are mnemolayer's own. Every source of a fact also keeps the time it said the
fact held from (``GraphStore.statements``), which is what lets facts that arrive out of
order be placed correctly.

Rules, applied to the extracted facts of one message in order (each sees the ones
before it):

1. **Vocabulary.** A predicate outside :data:`~.predicates.PREDICATES`, an empty subject
   or object, or a confidence that is not a number is ignored, with the reason.
2. **Entities.** The subject is resolved to an entity (by normalised name or alias) and
   created when new; :data:`~.types.SELF` is the user's own entity. The object becomes an
   entity too (the fact's ``object_id``, an edge of the graph) when its type is a person,
   pet, place, organisation, project or the like, when the predicate is a relationship
   (``sister``, ``friend``, ``has_pet``…), or when the predicate implies it (``lives_in``
   and ``from`` a place, ``works_at`` and ``studies_at`` an organisation, ``works_on`` a
   project). A ``name`` fact also makes its object an alias of the subject, so later
   facts about "Lena" land on the user who said "my name is Lena" (an alias already owned
   by another entity is left with it).
3. **Time.** ``valid_from`` is the fact's own date when it has one in the past (midnight
   UTC of that day; "I moved to Porto last week"), else the message time
   ``observed_at``. Plans keep the message time even when dated: the plan exists from
   when it was said, its date is when it is meant to happen. ``created_at`` is ``now``.
4. **Same fact again.** A statement of a fact that already holds at that time (same
   subject, predicate and object) adds the message to its ``source_ids`` and keeps the
   higher confidence; no duplicate is stored. A statement that the same fact held from an
   earlier time moves its ``valid_from`` back.
5. **Single-valued predicates** (``cardinality == "single"``: lives in, works at, age…).
   A new object closes the current one at the new ``valid_from``: ``valid_to`` set,
   ``superseded_by`` the new fact, ``expired_at`` now. Facts that arrive out of order are
   placed into the timeline rather than on top of it: a fact dated before the current
   one is stored already closed (``valid_to`` = the next fact's ``valid_from``,
   ``superseded_by`` that fact) and the current one stays; a fact that falls inside an
   older, closed interval shortens that interval; a fact that falls inside an interval
   that some message restated for a later time cuts it in two (``ResolveResult.split``):
   the old value holds until the late fact, the late fact until the restatement, and the
   old value again from there. A late-arriving old fact never overrides a newer
   statement. At equal times the later-recorded statement wins.
6. **Multi-valued predicates** (likes, visited, sister…) accumulate. The exception is a
   pair of :data:`~.predicates.OPPOSITES` (``likes`` ↔ ``dislikes``) on the same object:
   the one that starts later closes the other, with the same timeline rules as 5.
7. **Negation** ("I no longer eat meat", "我不再喜欢咖啡") closes the matching facts
   that hold at the negation's time (normally the current ones) — same subject and
   predicate, an object equal to the negated one (normalised, or the same entity) or
   containing it / contained in it (by words in space-separated scripts, by characters
   in Chinese and Japanese) — at that time, with ``superseded_by`` left empty. A fact
   that a message restated for a later time is cut in two instead: it holds again from
   that statement. Nothing matching → ignored, "nothing to retract"; a retraction older
   than the current fact it would close → ignored, "the retraction is older than the
   fact". Retractions themselves are not stored, so a fact that arrives after its own
   retraction but is dated before it is not retracted. A message that retracts one value
   of a single-valued predicate and states another ("I left Google and joined Meta")
   has its statement applied first, so the new value supersedes the old one (rule 5:
   the chain of versions is linked) and the retraction then finds nothing left to close.
8. **Nothing else retires a fact.** Facts about another subject or with another
   predicate (a Git-org ``role`` next to ``works_on``) never close each other; a
   contradiction closes only the older side, never both; nothing is deleted.
9. **Trust** (:mod:`mnemolayer.trust`). A fact from an untrusted source (a tool, a web
   page, an import, another agent) never ends a fact that holds: one that contradicts
   it is kept as a *candidate*, stored closed at the instant it began (so it holds at no
   time) and superseded by the fact it contradicted (``ResolveResult.candidates``), and
   an untrusted negation retracts nothing. What holds stays current until a trusted
   source (the user, the assistant) says otherwise; untrusted facts that contradict
   nothing are stored as usual.

The caller (the write path) runs :func:`resolve` inside the transaction that stores the
message, so a message and the facts drawn from it are committed together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemolayer.protocols import Txn

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mnemolayer.extract.base import SELF, ExtractedEntity, ExtractedFact
from mnemolayer.extract.predicates import OPPOSITES, PREDICATES, Predicate
from mnemolayer.models import Entity, Fact, to_utc
from mnemolayer.models import new_id as _new_id
from mnemolayer.store.graph import GraphStore, normalize_name
from mnemolayer.text.terms import contains_cjk

__all__ = ["ENTITY_TYPES", "ResolveResult", "object_matches", "resolve", "valid_from_of"]

#: Object types that make an object an entity of the graph (an ``object_id``).
ENTITY_TYPES = frozenset(
    {
        "person", "pet", "animal", "dog", "cat", "organization", "organisation", "company",
        "team", "group", "school", "university", "place", "location", "city", "country",
        "region", "project", "product",
    }
)  # fmt: skip

# Predicates whose object is an entity of a known type even when the extractor gave none.
_OBJECT_TYPE_OF: dict[str, str] = {
    "lives_in": "place",
    "from": "place",
    "works_at": "organization",
    "studies_at": "organization",
    "works_on": "project",
    "has_pet": "pet",
}

# Predicate categories whose subject is a person.
_PERSON_CATEGORIES = frozenset({"identity", "relationship"})


@dataclass(slots=True)
class ResolveResult:
    """What :func:`resolve` did with one message's facts.

    Attributes:
        added: facts stored (a late-arriving old one may already be closed).
        closed: ``(fact after closing, the fact that closed it)`` for every fact whose
            validity was ended or shortened; the second is ``None`` for a negation.
        reinforced: existing facts stated again, as updated (more provenance, maybe an
            earlier ``valid_from``).
        ignored: ``(extracted fact, reason)`` for what was not stored.
        entities: the entities the stored facts are about or point to, once each.
        split: ``(earlier part, the fact as updated)`` for each fact cut in two because
            a late-arriving fact or retraction fell between its statements: the earlier
            part is a new closed fact without a sentence record (``None`` if no statement
            preceded the cut), the fact keeps its id and record and now starts later.
        candidates: facts of an untrusted source kept as candidates (rule 9); each is
            in ``added`` too.
    """

    added: list[Fact] = field(default_factory=list)
    closed: list[tuple[Fact, Fact | None]] = field(default_factory=list)
    reinforced: list[Fact] = field(default_factory=list)
    ignored: list[tuple[ExtractedFact, str]] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    split: list[tuple[Fact | None, Fact]] = field(default_factory=list)
    candidates: list[Fact] = field(default_factory=list)


def valid_from_of(fact: ExtractedFact, observed_at: datetime) -> datetime:
    """When ``fact`` starts to hold: its date (midnight UTC) when it has one before the
    message's day and it is not a plan, else the message time ``observed_at``."""
    pred = PREDICATES.get(fact.predicate)
    if fact.date is not None and (pred is None or pred.category != "plan"):
        start = datetime(fact.date.year, fact.date.month, fact.date.day, tzinfo=UTC)
        if fact.date < observed_at.astimezone(UTC).date():
            return start
    return observed_at


def _words_within(short: str, long: str) -> bool:
    a, b = short.split(), long.split()
    return any(b[i : i + len(a)] == a for i in range(len(b) - len(a) + 1))


def object_matches(stored: str, said: str) -> bool:
    """Whether a negation of object ``said`` retracts a fact with object ``stored``: equal
    once normalised, or one contains the other (whole words in space-separated text,
    characters where either is Chinese, Japanese or Korean). ``"meat"`` matches ``"red
    meat"``, ``"咖啡"`` matches ``"喝咖啡"``; ``"tea"`` does not match ``"steak"``."""
    a, b = normalize_name(stored), normalize_name(said)
    if not a or not b:
        return False
    if a == b:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    if contains_cjk(short) or contains_cjk(long):
        return short in long
    return _words_within(short, long)


class _Resolver:
    def __init__(
        self,
        graph: GraphStore,
        c: Txn,
        user_id: str,
        *,
        source_id: str,
        speaker: str | None,
        observed_at: datetime,
        now: datetime,
        new_id: Callable[[], str],
        entities: Sequence[ExtractedEntity],
        trusted: bool = True,
    ) -> None:
        self.graph = graph
        self.trusted = trusted
        self.c = c
        self.user_id = user_id
        self.source_id = source_id
        self.speaker = speaker
        self.observed_at = observed_at
        self.now = now
        self.new_id = new_id
        # Each message entity by its name and by each of its aliases.
        self.known: dict[str, ExtractedEntity] = {}
        for e in entities:
            for label in (e.name, *e.aliases):
                if normalize_name(label):
                    self.known.setdefault(normalize_name(label), e)
        self.result = ResolveResult()
        self._entity_ids: set[str] = set()

    # -- entities --------------------------------------------------------------------

    def _note(self, entity: Entity) -> None:
        if entity.id not in self._entity_ids:
            self._entity_ids.add(entity.id)
            self.result.entities.append(entity)

    def _entity(self, name: str, given: str | None, default: str | None = None) -> Entity:
        """Resolve (or create) the entity ``name``; its type is ``given`` (said with the
        fact), else the type the message's entity list gives it, else ``default``. A
        name listed as an alias of a message entity resolves to that entity's name."""
        norm = normalize_name(name)
        hint = self.known.get(norm)
        hinted = hint.type if hint is not None and hint.type not in ("", "thing") else None
        type_ = given or hinted or default
        target = name
        if hint is not None and normalize_name(hint.name) != norm:
            existing = self.graph.resolve_entity(
                self.c, self.user_id, name, create=False, now=self.now
            )
            if existing is None:
                target = hint.name  # "Maxie", listed as an alias of "Max": Max
        entity = self.graph.resolve_entity(self.c, self.user_id, target, type=type_, now=self.now)
        assert entity is not None  # create=True
        if hint is not None:
            added = [
                self.graph.add_alias(self.c, self.user_id, entity.id, alias, self.now)
                for alias in (hint.name, *hint.aliases)
            ]
            if any(added):  # show the new aliases on the entity returned
                entity = self.graph.entity_by_id(self.c, self.user_id, entity.id) or entity
        self._note(entity)
        return entity

    def _object_types(self, ef: ExtractedFact, pred: Predicate) -> tuple[str | None, str] | None:
        """``(type said with the fact, default type)`` when the object is an entity,
        ``None`` when it is a value."""
        if pred.name == "name":
            return None  # a name is the subject's alias, never an entity of its own
        given = (ef.object_type or "").strip().casefold() or None
        hint = self.known.get(normalize_name(ef.object))
        hinted = hint.type.casefold() if hint is not None else None
        if given in ENTITY_TYPES or hinted in ENTITY_TYPES:
            return given, str(given or hinted)
        if pred.name in _OBJECT_TYPE_OF:
            return given, _OBJECT_TYPE_OF[pred.name]
        if pred.category == "relationship":
            return given, "person"
        return None

    # -- one fact --------------------------------------------------------------------

    def add(self, ef: ExtractedFact) -> None:
        pred = PREDICATES.get(ef.predicate)
        if pred is None:
            self.result.ignored.append((ef, f"unknown predicate {ef.predicate!r}"))
            return
        if not normalize_name(ef.subject):
            self.result.ignored.append((ef, "empty subject"))
            return
        if not normalize_name(ef.object):
            self.result.ignored.append((ef, "empty object"))
            return
        if not math.isfinite(ef.confidence):
            self.result.ignored.append((ef, "confidence is not a number"))
            return
        start = valid_from_of(ef, self.observed_at)
        if ef.negated:
            self._retract(ef, pred, start)
        else:
            self._assert(ef, pred, start)

    def _retract(self, ef: ExtractedFact, pred: Predicate, start: datetime) -> None:
        """Rule 7: end the matching facts that hold at ``start``."""
        if not self.trusted:
            self.result.ignored.append((ef, "an untrusted source retracts nothing"))
            return
        subject = self.graph.resolve_entity(
            self.c, self.user_id, ef.subject, create=False, now=self.now
        )
        if subject is None:
            self.result.ignored.append((ef, "nothing to retract"))
            return
        said = self.graph.resolve_entity(
            self.c, self.user_id, ef.object, create=False, now=self.now
        )
        matches = [
            f
            for f in self.graph.subject_facts(self.c, self.user_id, subject.id, [pred.name])
            if (f.valid_to is None or f.valid_to > f.valid_from)
            and (
                (said is not None and f.object_id == said.id) or object_matches(f.object, ef.object)
            )
        ]
        holding = [
            f
            for f in matches
            if f.valid_from <= start and (f.valid_to is None or f.valid_to > start)
        ]
        if not holding:
            starts_later = any(f.current and f.valid_from > start for f in matches)
            reason = (
                "the retraction is older than the fact" if starts_later else "nothing to retract"
            )
            self.result.ignored.append((ef, reason))
            return
        for f in holding:
            if any(t > start for _, t in self.graph.statements(self.c, self.user_id, f.id)):
                self._split(f, start, None)  # restated after the retraction: holds again
            else:
                self._close(f, start, None, f.expired_at or self.now)
        self._note(subject)

    def _assert(self, ef: ExtractedFact, pred: Predicate, start: datetime) -> None:
        c = self.c
        # Whoever has a sister, a job or an age is a person (a generic type only is
        # upgraded, so a pet typed by has_pet stays a pet).
        is_self = normalize_name(ef.subject) == normalize_name(SELF)
        subject_type = "person" if is_self or pred.category in _PERSON_CATEGORIES else None
        subject = self._entity(ef.subject, None, subject_type)
        types = self._object_types(ef, pred)
        obj = self._entity(ef.object, *types) if types is not None else None
        if obj is not None and obj.id == subject.id:
            obj = None  # "Lena's name is Lena": a value, not a self-loop
        if pred.name == "name":
            self.graph.add_alias(c, self.user_id, subject.id, ef.object, self.now)

        object_norm = normalize_name(ef.object)
        object_id = obj.id if obj is not None else None
        opposite = OPPOSITES.get(pred.name)
        if pred.cardinality == "single":
            timeline = self.graph.subject_facts(c, self.user_id, subject.id, [pred.name])

            def same(f: Fact) -> bool:
                if object_id is not None and f.object_id == object_id:
                    return True
                return normalize_name(f.object) == object_norm

        else:
            preds = [pred.name, opposite] if opposite else [pred.name]
            timeline = self.graph.subject_facts(
                c,
                self.user_id,
                subject.id,
                preds,
                object_norm=object_norm,
                object_id=object_id,
            )

            def same(f: Fact) -> bool:
                return f.predicate == pred.name

        new = Fact(
            id=self.new_id(),
            user_id=self.user_id,
            subject=subject.name,
            subject_id=subject.id,
            predicate=pred.name,
            object=" ".join(ef.object.split()),
            object_id=object_id,
            object_type=ef.object_type or (obj.type if obj is not None else None),
            date=ef.date,
            valid_from=start,
            created_at=self.now,
            confidence=min(max(float(ef.confidence), 0.0), 1.0),
            source_ids=[self.source_id],
            speaker=self.speaker,
        )
        self._place(ef, new, timeline, same)

    def _place(
        self,
        ef: ExtractedFact,
        new: Fact,
        timeline: list[Fact],
        same: Callable[[Fact], bool],
    ) -> None:
        """Put ``new`` into ``timeline`` (the facts it can conflict with), rules 4-6."""
        start = new.valid_from
        # Zero-length intervals (replaced at the instant they began) hold at no time.
        live = [f for f in timeline if f.valid_to is None or f.valid_to > f.valid_from]
        holding = [
            f for f in live if f.valid_from <= start and (f.valid_to is None or f.valid_to > start)
        ]
        agreeing = [f for f in holding if same(f)]
        if agreeing:
            target = next((f for f in agreeing if f.current), agreeing[0])
            self._reinforce(ef, target, new)
            return
        conflicting = [f for f in holding if not same(f)]
        if conflicting and not self.trusted:  # rule 9: a candidate, never a successor
            new = new.model_copy(
                update={"valid_to": start, "superseded_by": conflicting[0].id,
                        "expired_at": self.now}
            )  # fmt: skip
            self.graph.insert_fact(self.c, new)
            self.result.added.append(new)
            self.result.candidates.append(new)
            return
        # What holds next: the first fact starting after `start`, or a conflicting fact
        # that some message restated for a time after `start` (it resumes then).
        nxt = min(
            (f for f in live if f.valid_from > start),
            key=lambda f: (f.valid_from, f.created_at),
            default=None,
        )
        next_start = nxt.valid_from if nxt is not None else None
        restated: dict[str, datetime] = {}
        for f in conflicting:
            again = [t for _, t in self.graph.statements(self.c, self.user_id, f.id) if t > start]
            if again:
                restated[f.id] = again[0]
                if next_start is None or again[0] < next_start:
                    nxt, next_start = f, again[0]

        if nxt is not None and nxt.id not in restated and same(nxt):
            # The same fact is known from a later time: it held from this earlier one.
            self.graph.set_valid_from(self.c, nxt.id, start)
            self._reinforce(ef, nxt.model_copy(update={"valid_from": start}), new)
            successor: Fact = nxt
        else:
            if nxt is not None:
                new = new.model_copy(
                    update={"valid_to": next_start, "superseded_by": nxt.id, "expired_at": self.now}
                )
            self.graph.insert_fact(self.c, new)
            self.result.added.append(new)
            successor = new
        for f in conflicting:
            if f.id in restated:
                self._split(f, start, successor)
            elif f.current and successor.valid_to is not None:
                continue  # never close both sides of a contradiction
            else:
                self._close(f, start, successor, f.expired_at or self.now)

    def _split(self, fact: Fact, at: datetime, by: Fact | None) -> None:
        """Cut ``fact`` at ``at``: it was interrupted then (by ``by``, or retracted when
        ``None``) and stated again later."""
        parts = self.graph.split_fact(
            self.c,
            fact.id,
            at=at,
            early_id=self.new_id(),
            superseded_by=by.id if by is not None else None,
            expired_at=self.now,
        )
        if parts is not None:
            self.result.split.append(parts)

    def _reinforce(self, ef: ExtractedFact, target: Fact, new: Fact) -> None:
        if self.source_id in target.source_ids:
            self.result.ignored.append((ef, "already recorded from this message"))
            return
        updated = self.graph.reinforce(
            self.c, target.id, self.source_id, new.confidence, stated_at=new.valid_from
        )
        if updated is not None:
            self.result.reinforced.append(updated)

    def _close(self, fact: Fact, valid_to: datetime, by: Fact | None, expired_at: datetime) -> None:
        self.graph.close_fact(
            self.c,
            fact.id,
            valid_to=valid_to,
            superseded_by=by.id if by is not None else None,
            expired_at=expired_at,
        )
        closed = fact.model_copy(
            update={
                "valid_to": valid_to,
                "superseded_by": by.id if by is not None else None,
                "expired_at": expired_at,
            }
        )
        self.result.closed.append((closed, by))


def resolve(
    graph: GraphStore,
    c: Txn,
    user_id: str,
    extracted: Sequence[ExtractedFact],
    *,
    source_id: str,
    speaker: str | None,
    observed_at: datetime,
    now: datetime,
    new_id: Callable[[], str] = _new_id,
    entities: Sequence[ExtractedEntity] = (),
    trusted: bool = True,
) -> ResolveResult:
    """Fold the facts extracted from one message into ``user_id``'s graph (module rules).

    Args:
        graph: the graph store.
        c: the open write transaction (``Txn`` inside ``store.transact``).
        extracted: the message's facts, in the order they were found.
        source_id: the id of the (episodic) memory the facts came from; their provenance.
        speaker: who said the message (stored on each fact).
        observed_at: when the message was said: the facts' ``valid_from`` unless they
            carry their own date (naive times are taken as UTC, as everywhere).
        now: the transaction time (``created_at``, ``expired_at``).
        new_id: makes fact ids (tests pass a deterministic one).
        entities: the message's entities, to type and alias the ones its facts mention
            (entities no fact mentions are not stored).
        trusted: whether the message's source is trusted (rule 9).

    Returns:
        :class:`ResolveResult`.

    Raises:
        ValidationError: ``observed_at`` or ``now`` is not a time (names it).
    """
    observed_at = to_utc(observed_at, "observed_at") or observed_at
    now = to_utc(now, "now") or now
    resolver = _Resolver(
        graph, c, user_id, source_id=source_id, speaker=speaker, observed_at=observed_at,
        now=now, new_id=new_id, entities=entities, trusted=trusted,
    )  # fmt: skip
    _separate_namesakes(graph, c, user_id, extracted, now)
    for ef in _statements_first(extracted):
        resolver.add(ef)
    return resolver.result


def _statements_first(extracted: Sequence[ExtractedFact]) -> list[ExtractedFact]:
    """``extracted`` with each negation of a single-valued predicate moved after the
    message's statements of another value for the same subject and predicate (rule 7);
    the rest keep their order."""

    def key(ef: ExtractedFact) -> tuple[str, str]:
        return normalize_name(ef.subject), ef.predicate

    stated = {
        key(ef): normalize_name(ef.object)
        for ef in extracted
        if not ef.negated and getattr(PREDICATES.get(ef.predicate), "cardinality", "") == "single"
    }
    later = [
        ef
        for ef in extracted
        if ef.negated and key(ef) in stated and stated[key(ef)] != normalize_name(ef.object)
    ]
    return [ef for ef in extracted if ef not in later] + later


def _separate_namesakes(
    graph: GraphStore,
    c: Txn,
    user_id: str,
    extracted: Sequence[ExtractedFact],
    now: datetime,
) -> None:
    """ "My friend Tom", said by a user whose own name is Tom, is someone else: when a
    relationship's other person resolves to the subject itself (through an alias), give
    that name its own entity first, so that the message's other facts about "Tom" land
    on the friend, not on the user."""
    for ef in extracted:
        pred = PREDICATES.get(ef.predicate)
        if pred is None or pred.category != "relationship" or ef.negated:
            continue
        subject = graph.resolve_entity(c, user_id, ef.subject, create=False, now=now)
        other = graph.resolve_entity(c, user_id, ef.object, create=False, now=now)
        if subject is not None and other is not None and other.id == subject.id:
            kind = "pet" if pred.name == "has_pet" else "person"
            graph.create_entity(c, user_id, ef.object, type=kind, now=now)

"""Semantic memory as :class:`mnemolayer.Memory` serves it: facts, entities, graph,
profile, and preferences learned from feedback (:class:`SemanticMemory`)."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.extract import predicates
from mnemolayer.extract.base import SELF, ExtractedFact
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import Entity, Fact

if TYPE_CHECKING:
    from mnemolayer.layers.episodic.write import EpisodicWriter
    from mnemolayer.layers.semantic.apply import SemanticLayer

__all__ = ["SemanticMemory"]


def _name(value: Any, field: str) -> str:
    """An entity name argument: a non-blank string without control characters."""
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    return v.content(value, field)


_POSITIVE = {"positive", "good", "like", "liked", "yes", "+1", "up", "thumbs_up", "👍"}
_THIS = {"it", "this", "that", "these", "those", "them"}
_NEGATIVE = {"negative", "bad", "dislike", "disliked", "no", "-1", "down", "thumbs_down", "👎"}


class SemanticMemory:
    """Semantic memory as the facade serves it: the facts of a user's knowledge graph,
    its entities and their neighbourhoods, the profile, and preferences learned from
    feedback.

    Args:
        semantic: the semantic layer (the graph and the extractor).
        writer: the write path feedback is stored through.
        clock: returns "now" (aware UTC).
        lifecycle: the kinds' default TTLs: a fact stated only by memories that have
            expired (own ``expires_at`` or the kind's TTL) is left out of :meth:`facts`
            and :meth:`profile` at once, before maintenance deletes it.
    """

    def __init__(
        self,
        semantic: SemanticLayer,
        writer: EpisodicWriter,
        clock: Callable[[], datetime],
        lifecycle: LifecycleConfig | None = None,
    ) -> None:
        self.semantic = semantic
        self.writer = writer
        self.clock = clock
        self.lifecycle = lifecycle or LifecycleConfig()

    def _unexpired(self, user_id: str, facts: builtins.list[Fact]) -> builtins.list[Fact]:
        """``facts`` without those every source of which has expired."""
        if not facts:
            return facts
        expired = set(
            self.semantic.store.expired_records(
                user_id, now=self.clock(), lifecycle=self.lifecycle
            ).values()
        )
        if not expired:
            return facts
        return [f for f in facts if not (f.source_ids and set(f.source_ids) <= expired)]

    def facts(
        self,
        *,
        user_id: str,
        subject: str | None = None,
        predicate: str | None = None,
        as_of: datetime | str | None = None,
        include_history: bool = False,
        trusted_only: bool = False,
    ) -> builtins.list[Fact]:
        """Facts of a user's knowledge graph.

        Args:
            user_id: required.
            subject: an entity name or alias (``"user"`` is the user themself); ``None``
                for every subject.
            predicate: one of :data:`mnemolayer.extract.predicates.PREDICATES`.
            as_of: what was true at that time: facts with ``valid_from ≤ as_of <
                valid_to`` (naive → UTC). ``None``: what is true now.
            include_history: every fact ever recorded, closed ones too (with ``as_of``:
                every fact that had started by then).
            trusted_only: leave out facts that only untrusted sources stated (tools, web
                pages, imports, other agents: :mod:`mnemolayer.trust`); a fact that the
                user or the assistant stated too stays.

        Returns:
            Facts ordered by ``valid_from`` (then recording time); a fact stated only by
            memories that have expired is left out (whether or not maintenance ran).

        Raises:
            ValidationError: bad user id, unknown predicate, bad time.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        if predicate is not None and (
            not isinstance(predicate, str) or predicate not in predicates.PREDICATES
        ):
            raise ValidationError("predicate", f"unknown predicate {predicate!r}")
        if subject is not None:
            subject = _name(subject, "subject")
        when = v.time(as_of, "as_of")
        if subject is not None and self.semantic.graph.entity(user_id, subject) is None:
            return []
        found = self.semantic.graph.facts(
            user_id, subject=subject, predicate=predicate, as_of=when,
            include_history=include_history,
        )  # fmt: skip
        if trusted_only and found:
            sources = [i for f in found for i in f.source_ids]
            bad = self.semantic.store.untrusted_ids(user_id, sources)
            found = [f for f in found if not (f.source_ids and set(f.source_ids) <= bad)]
        return self._unexpired(user_id, found)

    def entities(self, *, user_id: str) -> builtins.list[Entity]:
        """Every entity of a user's graph (people, places, organisations, pets, things)."""
        return self.semantic.graph.entities(v.scope_id(user_id, "user_id", required=True))

    def neighbors(
        self, name: str, *, user_id: str, depth: int = 1, include_history: bool = False
    ) -> dict[str, Any]:
        """Entities within ``depth`` hops (1–5) of ``name`` and the facts that link them.

        Returns:
            ``{"entity": Entity, "neighbors": [{"entity": Entity, "hops": int}],
            "facts": [Fact]}``; facts stated only by expired memories are left out, and
            so are the entities only they reached (whether or not maintenance ran).

        Raises:
            NotFoundError: no entity ``name`` (or alias) for this user.
            ValidationError: ``depth`` outside 1–5.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        name = _name(name, "name")
        entity = self.semantic.graph.entity(user_id, name)
        if entity is None:
            raise NotFoundError(f"name: no entity {name!r} for user {user_id!r}")
        reached, found = self.semantic.graph.neighbors(
            user_id, name, depth=depth, include_history=include_history
        )
        facts = self._unexpired(user_id, found)
        if len(facts) < len(found):  # hops again over the facts that hold
            hops = _hops(entity.id, facts, depth)
            reached = [(e, hops[e.id]) for e, _ in reached if e.id in hops]
        return {
            "entity": entity,
            "neighbors": [{"entity": e, "hops": hops} for e, hops in reached],
            "facts": facts,
        }

    def profile(self, *, user_id: str, subject: str = SELF) -> dict[str, Any]:
        """What is currently known about a person (default: the user), grouped.

        Returns:
            JSON-ready ``{"subject", "name", "aliases", "identity", "relationships",
            "preferences", "plans", "events", "updated_at"}``: single-valued predicates
            map to one value, multi-valued ones to a list, in the order learned.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        subject = _name(subject, "subject")
        entity = self.semantic.graph.entity(user_id, subject)
        groups: dict[str, dict[str, Any]] = {
            "identity": {}, "relationship": {}, "preference": {}, "plan": {}, "event": {},
        }  # fmt: skip
        latest: datetime | None = None
        facts = self.semantic.graph.facts(user_id, subject=subject) if entity is not None else []
        facts = self._unexpired(user_id, facts)
        for f in facts:
            p = predicates.PREDICATES.get(f.predicate)
            if p is None:
                continue
            group = groups.setdefault(p.category, {})
            if p.cardinality == "single":
                group[f.predicate] = f.object
            else:
                values = group.setdefault(f.predicate, [])
                if f.object not in values:
                    values.append(f.object)
            latest = max(latest, f.created_at) if latest else f.created_at
        name = None
        if entity is not None:
            name = groups["identity"].get("name") or (entity.name if entity.name != SELF else None)
        return {
            "subject": subject,
            "name": name,
            "aliases": entity.aliases if entity is not None else [],
            "identity": groups["identity"],
            "relationships": groups["relationship"],
            "preferences": groups["preference"],
            "plans": groups["plan"],
            "events": groups["event"],
            "updated_at": latest.isoformat() if latest else None,
        }

    def learn_from_feedback(
        self,
        *,
        user_id: str,
        action: str,
        feedback: str,
        session_id: str | None = None,
        timestamp: datetime | str | None = None,
    ) -> builtins.list[Fact]:
        """Record a preference learned from how the user reacted to something the agent did.

        ``feedback`` is either a polarity (``"positive"``/``"negative"``, ``"+1"``/``"-1"``,
        ``"👍"``/``"👎"``…) — the user then ``likes``/``dislikes`` ``action`` — or the
        user's own words ("too spicy, I don't like spicy food"), from which preferences
        are extracted; if none are found the feedback is kept verbatim as a ``feedback``
        fact about ``action``. The exchange is stored as an episodic memory (kind
        ``episodic``, metadata ``{"feedback_on": action}``) that is the facts' provenance.

        Returns:
            The facts that are now current because of this feedback.

        Raises:
            ValidationError: blank ``action`` or ``feedback``, bad ids or time.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        action = v.content(action, "action")
        feedback = v.content(feedback, "feedback")
        token = feedback.strip().casefold()
        stated: builtins.list[ExtractedFact] = []
        if token in _POSITIVE or token in _NEGATIVE:
            pred = "likes" if token in _POSITIVE else "dislikes"
            stated.append(ExtractedFact(SELF, pred, action, confidence=0.8, evidence=feedback))
            text = f"Feedback on {action}: {feedback}"
        else:
            text = feedback
            extractor = self.semantic.extractor
            if extractor is not None:
                when = v.time(timestamp, "timestamp") or self.clock()
                found = extractor.extract(feedback, speaker=None, timestamp=when).facts
                # The user's own preferences only; "it"/"this" is the action itself.
                stated.extend(
                    replace(f, object=action) if f.object.casefold() in _THIS else f
                    for f in found
                    if f.subject == SELF
                    and predicates.PREDICATES[f.predicate].category == "preference"
                )
            if not stated:
                stated.append(
                    ExtractedFact(SELF, "feedback", f"{action}: {feedback}", confidence=0.7)
                )
        records = self.writer.records(
            [{"role": "user", "content": text, "metadata": {"feedback_on": action}}],
            user_id=user_id, session_id=session_id, timestamp=timestamp,
        )  # fmt: skip
        turn = self.writer.insert(records, facts={records[0].id: stated})[0]
        return [
            f
            for f in self.semantic.graph.facts(user_id, include_history=False)
            if turn.id in f.source_ids
        ]


def _hops(start: str, facts: builtins.list[Fact], depth: int) -> dict[str, int]:
    """Entity id → hops from ``start`` over ``facts`` (edges subject ↔ object entity),
    up to ``depth``; ``start`` itself is left out."""
    edges: dict[str, set[str]] = {}
    for f in facts:
        if f.object_id is not None:
            edges.setdefault(f.subject_id, set()).add(f.object_id)
            edges.setdefault(f.object_id, set()).add(f.subject_id)
    out: dict[str, int] = {}
    frontier, seen = {start}, {start}
    for hop in range(1, depth + 1):
        frontier = {n for e in frontier for n in edges.get(e, ()) if n not in seen}
        seen |= frontier
        out.update(dict.fromkeys(frontier, hop))
    return out

"""Token-budgeted context assembly: what the next model call should see about a user.

:func:`build_context` gathers candidates for up to five sections, in priority order:

1. ``profile``: the user's current identity, relationship, preference and plan facts
   (those :meth:`~mnemolayer.Memory.profile` groups, with the time each became true);
2. ``facts``: semantic memories relevant to the query (``search(kinds=["semantic"])``),
   without profile facts and without facts whose source messages are all packed as
   episodes (the message says what the fact says, in its own words; search already
   ranks a message by its facts' sentences, so a fact is mostly worth its tokens as a
   short stand-in for a message that did not fit);
3. ``episodes``: past messages relevant to the query (``search(kinds=["episodic"])``,
   enough hits to fill the budget with short lines); texts near-identical to an earlier
   item or to a recent turn are left out (character-trigram Jaccard similarity ≥ 0.85);
4. ``strategies``: what worked or failed on similar tasks (:meth:`strategies`), when any;
5. ``recent``: the caller's latest conversation turns (``recent=``), newest kept first
   but shown in order.

Packing: each section gets a share of the budget (:data:`DEFAULT_SHARES`); what a
section leaves unused flows to the sections after it, and a second pass offers whatever
is still left to every section in priority order. Within a section, items are taken in
order of relevance (score, then fewer tokens first) while they fit; one that does not
fit is skipped for smaller ones after it. Recalled episodes are shown whole while the
section has spent less than half of its first share (:data:`VERBATIM_SHARE`); after
that, and whenever the whole message does not fit, a message is shown *condensed* to its
sentences that share a word with the query (:func:`mnemolayer.context.condense.condense`, left-
out runs marked ``…``), as a search result page shows snippets below its best results.
Every count and every truncation uses a :class:`~mnemolayer.text.tokens.TokenCounter`; the
final text is counted once more and, should joining lines have cost more than their
parts, the least relevant items are dropped until ``count(text) <= budget_tokens``. That
bound always holds.

Each item cites its time: ``(8 May 2023)`` after the item, or, for recalled episodes in
Markdown, one ``### 8 May 2023`` line over each day's episodes, shown in time order (the
JSON form gives every item its own ``time``). Output is Markdown (headings, one bullet
per item) or JSON with the same structure; headings, the bullet layout, the day header
and the date format are configurable through :class:`ContextTemplate`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from mnemolayer import _validate as v
from mnemolayer.context.items import (
    SECTIONS,
    Context,
    ContextItem,
    ContextSection,
    ContextSource,
    ContextTemplate,
    SectionName,
    cut,
    episode_items,
    fact_items,
    profile_items,
    recent_items,
    strategy_items,
)
from mnemolayer.context.pack import (
    DEFAULT_SHARES,
    EPISODE_FLOOR,
    SESSION_SPREAD,
    VERBATIM_SHARE,
    Costs,
    above_floor,
    condensed_forms,
    dedupe,
    display_order,
    fit,
    pack,
    session_priority,
)
from mnemolayer.errors import ValidationError
from mnemolayer.models import to_utc, validate_content
from mnemolayer.registry import get_token_counter
from mnemolayer.text.tokens import TokenCounter

if TYPE_CHECKING:
    from mnemolayer.layers.procedural.strategies import StrategyStats
    from mnemolayer.layers.working.window import SessionStore
    from mnemolayer.models import Fact, Hit

__all__ = [
    "DEFAULT_SHARES",
    "SECTIONS",
    "VERBATIM_SHARE",
    "Context",
    "ContextBuilder",
    "ContextItem",
    "ContextSection",
    "ContextSource",
    "ContextTemplate",
    "SectionName",
    "build_context",
]

MAX_BUDGET_TOKENS = 1_000_000
#: One recent turn: ``(role, content, time)`` or ``{"role", "content", "time"}``.
RecentTurn = tuple[str, str, datetime | str | None] | Mapping[str, Any]

# -- validation --------------------------------------------------------------------------


def _budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("budget_tokens", f"must be an int, got {type(value).__name__}")
    if not 1 <= value <= MAX_BUDGET_TOKENS:
        raise ValidationError("budget_tokens", f"must be in 1..{MAX_BUDGET_TOKENS}, got {value}")
    return value


def _fraction(value: Any, field: str, *, below_one: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(field, f"must be a number, got {type(value).__name__}")
    top_ok = value < 1.0 if below_one else value <= 1.0
    if not (value >= 0.0 and top_ok):
        bound = "[0, 1)" if below_one else "[0, 1]"
        raise ValidationError(field, f"must be in {bound}, got {value!r}")
    return float(value)


def _sections(value: Any) -> list[SectionName]:
    if value is None:
        return list(SECTIONS)
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValidationError("sections", "must be a list of section names")
    out: list[SectionName] = []
    for i, name in enumerate(value):
        if name not in SECTIONS:
            raise ValidationError(
                f"sections[{i}]", f"unknown section {name!r}; valid: {', '.join(SECTIONS)}"
            )
        if name in out:
            raise ValidationError(f"sections[{i}]", f"section {name!r} given twice")
        out.append(name)
    if not out:
        raise ValidationError("sections", "must name at least one section")
    return sorted(out, key=SECTIONS.index)


def _recent(value: Any) -> list[tuple[str, str, datetime | None]]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValidationError("recent", "must be a list of (role, content, time) tuples")
    out = []
    for i, turn in enumerate(value):
        if isinstance(turn, Mapping):  # a window message: {"role", "content", "time"}
            unknown = set(turn) - {"role", "content", "time", "created_at"}
            if unknown or "role" not in turn or "content" not in turn:
                raise ValidationError(
                    f"recent[{i}]", "a dict needs 'role' and 'content' (and optionally 'time')"
                )
            turn = (turn["role"], turn["content"], turn.get("time", turn.get("created_at")))
        if not isinstance(turn, Sequence) or isinstance(turn, str) or len(turn) != 3:
            raise ValidationError(
                f"recent[{i}]",
                "must be a (role, content, time) tuple or a dict with role and content",
            )
        role, content, when = turn
        if not isinstance(role, str) or not role.strip():
            raise ValidationError(f"recent[{i}].role", "must be a non-blank string")
        text = validate_content(content, f"recent[{i}].content")
        out.append((role.strip(), " ".join(text.split()), to_utc(when, f"recent[{i}].time")))
    return out


def build_context(
    mem: ContextSource,
    query: str,
    *,
    user_id: str,
    session_id: str | None = None,
    budget_tokens: int = 1500,
    format: Literal["markdown", "json"] = "markdown",
    sections: Sequence[str] | None = None,
    template: ContextTemplate | None = None,
    recent: Sequence[RecentTurn] | None = None,
    counter: TokenCounter | str | None = None,
    shares: Mapping[str, float] | None = None,
    session_spread: float | None = None,
    episode_floor: float | None = None,
    include_untrusted: bool = False,
) -> Context:
    """Assemble what a model should know about ``user_id`` to answer ``query``.

    Args:
        mem: what to read from: a :class:`mnemolayer.Memory` (or a :class:`ContextBuilder`).
        query: the user's message or task (non-blank, at most 10,000 characters); it
            drives the searches.
        user_id: required; nothing of other users is read.
        session_id: the conversation this context is for (recorded on the result).
        budget_tokens: the most tokens ``text`` may cost, 1..1,000,000.
        format: ``"markdown"`` (default) or ``"json"``.
        sections: which of :data:`SECTIONS` to include (always packed and rendered in
            priority order); default all.
        template: headings, item layout, day lines, date format, item length cap,
            condensing.
        recent: the latest conversation turns, oldest first, as ``(role, content, time)``
            tuples or ``{"role", "content", "time"}`` dicts (time: datetime, ISO string,
            epoch seconds or ``None``; a dict may omit it or give ``created_at``, as a
            working-memory window's messages do); the newest are kept when they do not
            all fit.
        counter: a token counter or a name (anything
            :func:`mnemolayer.registry.get_token_counter` accepts; default ``"o200k_base"``).
        shares: section → share of the budget (non-negative, any scale; normalised over
            the requested sections); default :data:`DEFAULT_SHARES`.
        session_spread: in [0, 1): recalled episodes are packed in order of their score
            times ``(1 - session_spread) ** j`` for the ``j``-th best of their session
            (:func:`~mnemolayer.context.pack.session_priority`), so the budget spreads
            across sessions; default :data:`~mnemolayer.context.pack.SESSION_SPREAD`.
        episode_floor: in [0, 1]: episodes scoring under this fraction of the best
            episode's score are left out (:func:`~mnemolayer.context.pack.above_floor`);
            default :data:`~mnemolayer.context.pack.EPISODE_FLOOR`.
        include_untrusted: also recall memories of untrusted sources (tools, web pages,
            imports, other agents; :mod:`mnemolayer.trust`) and the facts only they
            stated. By default (``False``) the profile, facts and episodes hold only
            what the user or the assistant said, so text a tool or a web page brought
            in ("ignore previous instructions…") never reaches the prompt unasked.

    Returns:
        A :class:`Context` with ``tokens == counter.count(text) <= budget_tokens``.

    Raises:
        ValidationError: names the bad field: ``query``, ``user_id``, ``session_id``,
            ``budget_tokens``, ``format``, ``sections[i]``, ``template``, ``recent[i]...``,
            ``shares``, ``session_spread``, ``episode_floor``, ``encoding``,
            ``include_untrusted``.
    """
    query = v.query(query)
    user_id = v.scope_id(user_id, "user_id", required=True)
    session_id = v.scope_id(session_id, "session_id")
    budget = _budget(budget_tokens)
    if format not in ("markdown", "json"):
        raise ValidationError("format", f"must be 'markdown' or 'json', got {format!r}")
    order = _sections(sections)
    if template is None:
        template = ContextTemplate()
    elif not isinstance(template, ContextTemplate):
        raise ValidationError(
            "template", f"must be a ContextTemplate, got {type(template).__name__}"
        )
    turns = _recent(recent)
    share_map = dict(DEFAULT_SHARES)
    if shares is not None:
        if not isinstance(shares, Mapping):
            raise ValidationError("shares", "must map section names to numbers")
        for key, value in shares.items():
            if key not in SECTIONS:
                raise ValidationError(f"shares.{key}", f"unknown section {key!r}")
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ValidationError(f"shares.{key}", f"must be a number >= 0, got {value!r}")
            share_map[key] = float(value)
    tok = get_token_counter(counter)
    spread = _fraction(SESSION_SPREAD if session_spread is None else session_spread,
                       "session_spread", below_one=True)  # fmt: skip
    floor = _fraction(EPISODE_FLOOR if episode_floor is None else episode_floor, "episode_floor")
    if not isinstance(include_untrusted, bool):
        raise ValidationError(
            "include_untrusted", f"must be True or False, got {type(include_untrusted).__name__}"
        )
    trusted = not include_untrusted

    # Candidates, each section deduplicated against what comes before it.
    cands: dict[str, list[ContextItem]] = {}
    if "profile" in order:
        cands["profile"] = profile_items(mem, user_id, trusted)
    if "facts" in order:
        in_profile = {i.memory_id for i in cands.get("profile", []) if i.memory_id}
        cands["facts"] = fact_items(mem, query, user_id, in_profile, trusted)
    if "episodes" in order:
        episodes = episode_items(mem, query, user_id, budget, trusted)
        cands["episodes"] = above_floor(episodes, floor)
    if "strategies" in order:
        cands["strategies"] = strategy_items(mem, query, user_id)
    if "recent" in order:
        cands["recent"] = recent_items(turns)
    for items in cands.values():
        for item in items:
            item.text = cut(item.text, tok, template)
    dedupe(cands, order)

    costs = Costs(tok, template, format)
    condensed = condensed_forms(cands.get("episodes", []), query) if template.condense else {}
    for section_name, items in cands.items():
        shorts = [condensed[id(i)] for i in items if id(i) in condensed]
        forms = [*items, *shorts]
        lines = [costs.line(section_name, i) for i in forms]
        for item, n in zip(forms, tok.count_many(lines), strict=True):
            item.tokens = n

    wrapper = tok.count(json.dumps({"sections": []})) if format == "json" else 0
    priority = session_priority(cands.get("episodes", []), spread) if spread > 0 else None
    # A relevant fact whose source messages are all packed as episodes repeats them: it
    # goes, and its tokens go to other items (pack again until no packed fact repeats
    # packed episodes; each round removes candidates, so it ends).
    while True:
        packed = pack(cands, condensed, order, max(budget - wrapper, 0), share_map, costs, priority)
        shown = {e.memory_id for e in packed.get("episodes", [])}
        repeats = {
            id(f)
            for f in packed.get("facts", [])
            if f.source_ids and all(src in shown for src in f.source_ids)
        }
        if not repeats:
            break
        cands["facts"] = [f for f in cands["facts"] if id(f) not in repeats]

    display_order(packed, order, format, template)
    text, tokens = fit(packed, order, format, template, tok, budget)

    dropped = {n: len(cands[n]) - len(packed[n]) for n in order}
    return Context(
        query=query,
        user_id=user_id,
        session_id=session_id,
        budget_tokens=budget,
        format=format,
        encoding=tok.name,
        text=text,
        tokens=tokens,
        sections=[
            ContextSection(name=n, title=template.headings.get(n, n), items=packed[n])
            for n in order
        ],
        dropped=dropped,
    )


class ContextBuilder:
    """``Memory.context``: a context from the facade's reads, and the saved window of the
    session as its recent turns.

    Args:
        search: hybrid recall (:meth:`mnemolayer.Memory.search`).
        facts: the knowledge graph's facts (:meth:`mnemolayer.Memory.facts`).
        strategies: procedural memory's track records (:meth:`mnemolayer.Memory.strategies`).
        windows: the session store a session's saved window is read from.
    """

    def __init__(
        self,
        search: Callable[..., list[Hit]],
        facts: Callable[..., list[Fact]],
        strategies: Callable[..., list[StrategyStats]],
        windows: SessionStore,
    ) -> None:
        self.search = search
        self.facts = facts
        self.strategies = strategies
        self.windows = windows

    def context(
        self,
        query: str,
        *,
        user_id: str,
        session_id: str | None = None,
        budget_tokens: int = 1500,
        format: Literal["markdown", "json"] = "markdown",
        sections: Sequence[str] | None = None,
        template: ContextTemplate | None = None,
        recent: Sequence[RecentTurn] | None = None,
        counter: TokenCounter | str | None = None,
        include_untrusted: bool = False,
    ) -> Context:
        """Assemble a token-budgeted context for ``query``; see :func:`build_context`
        (``include_untrusted``: also memories of tools, web pages, imports and other
        agents, left out by default).

        With a ``session_id`` and no ``recent``, the session's saved working-memory window
        (:meth:`Memory.working`) is the recent-window section, when it has one.
        """
        if recent is None and session_id is not None:
            recent = _saved_window(self.windows, user_id, session_id)
        return build_context(
            self,
            query,
            user_id=user_id,
            session_id=session_id,
            budget_tokens=budget_tokens,
            format=format,
            sections=sections,
            template=template,
            recent=recent,
            counter=counter,
            include_untrusted=include_untrusted,
        )


def _saved_window(
    windows: SessionStore, user_id: str, session_id: str
) -> list[tuple[str, str, datetime | str | None]] | None:
    """The turns of a session's saved working-memory window, oldest first (``None`` when
    the session has no window); the running summary comes first as a system turn."""
    state = windows.load(
        v.scope_id(user_id, "user_id", required=True),
        v.scope_id(session_id, "session_id", required=True),
        None,
    )
    if state is None or not state.messages:
        return None
    turns: list[tuple[str, str, datetime | str | None]] = []
    if state.summary:
        turns.append(("system", state.summary, None))
    turns.extend((m.role, m.content, m.created_at) for m in state.messages)
    return turns

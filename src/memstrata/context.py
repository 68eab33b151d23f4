"""Token-budgeted context assembly: what the next model call should see about a user.

:func:`build_context` gathers candidates for up to five sections, in priority order:

1. ``profile``: the user's current identity, relationship, preference and plan facts
   (those :meth:`~memstrata.Memory.profile` groups, with the time each became true);
2. ``facts``: semantic memories relevant to the query (``search(kinds=["semantic"])``),
   without profile facts and without facts whose source messages are all packed as
   episodes (the verbatim message says everything the fact says);
3. ``episodes``: past messages relevant to the query (``search(kinds=["episodic"])``);
   texts near-identical to an earlier item or to a recent turn are left out
   (character-trigram Jaccard similarity ≥ 0.85);
4. ``strategies``: what worked or failed on similar tasks (:meth:`strategies`), when any;
5. ``recent``: the caller's latest conversation turns (``recent=``), newest kept first
   but shown in order.

Packing: each section gets a share of the budget (:data:`DEFAULT_SHARES`); what a
section leaves unused flows to the sections after it, and a second pass offers whatever
is still left to every section in priority order. Within a section, items are taken
greedily by value per token, ``score**4 / tokens`` (the sharpened score keeps a long
relevant message ahead of a short irrelevant one), while they fit. Every count and every
truncation uses a :class:`~memstrata.tokens.TokenCounter`; the final text is counted
once more and, should joining lines have cost more than their parts, the items of least
value are dropped until ``count(text) <= budget_tokens``. That bound always holds.

Each item cites its time: ``(8 May 2023)``. Output is Markdown (headings, one bullet per
item) or JSON with the same structure; headings, the bullet layout and the date format
are configurable through :class:`ContextTemplate`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from . import _validate as v
from .errors import ValidationError
from .models import to_utc, validate_content
from .semantic import predicates
from .semantic.types import SELF
from .tokens import TokenCounter, get_token_counter

if TYPE_CHECKING:
    from .memory import Memory

__all__ = [
    "DEFAULT_SHARES",
    "SECTIONS",
    "Context",
    "ContextAPI",
    "ContextItem",
    "ContextSection",
    "ContextTemplate",
    "build_context",
]

SectionName = Literal["profile", "facts", "episodes", "strategies", "recent"]
#: Section names in priority order (the order they are packed and rendered).
SECTIONS: tuple[SectionName, ...] = ("profile", "facts", "episodes", "strategies", "recent")
#: Each section's share of the budget before unused shares flow on (sums to 1).
DEFAULT_SHARES: dict[str, float] = {
    "profile": 0.10,
    "facts": 0.20,
    "episodes": 0.45,
    "strategies": 0.10,
    "recent": 0.15,
}
#: Largest accepted budget, in tokens.
MAX_BUDGET_TOKENS = 1_000_000
#: Candidates fetched per search-backed section.
_FACT_HITS = 10
_EPISODE_HITS = 40
#: Character-trigram Jaccard similarity at which two texts count as the same.
_NEAR_DUPLICATE = 0.85
#: Exponent on scores when ranking by value per token (see :func:`_value`).
_SHARPNESS = 4.0
_PROFILE_CATEGORIES = ("identity", "relationship", "preference", "plan")


class ContextTemplate(BaseModel):
    """How a context renders.

    Attributes:
        headings: section name → heading text (Markdown ``## <heading>``; the JSON
            ``title``).
        item: the Markdown line of one item: a ``str.format`` pattern over ``{text}`` and
            ``{time}`` (the formatted time; items without a time drop ``time_suffix``).
        time_suffix: appended to ``{text}``'s line when the item has a time; a pattern
            over ``{time}``.
        recent_item: the Markdown line of a recent-window turn, over ``{role}``,
            ``{text}`` and ``{time_suffix}``.
        episode_item: the Markdown line of a recalled message with a known speaker, over
            ``{role}`` (the speaker's name, else the role), ``{text}`` and ``{time_suffix}``.
        date_format: ``strftime`` pattern of cited times, plus ``{day}`` for the day of
            the month without a leading zero (default ``"{day} %B %Y"`` → ``8 May 2023``).
        max_item_tokens: longer item texts are cut to this many tokens and end in ``…``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    headings: dict[str, str] = Field(
        default_factory=lambda: {
            "profile": "Profile",
            "facts": "Relevant facts",
            "episodes": "Recalled episodes",
            "strategies": "Strategies",
            "recent": "Recent conversation",
        }
    )
    item: str = "- {text}{time_suffix}"
    time_suffix: str = " ({time})"
    recent_item: str = "- {role}{time_suffix}: {text}"
    episode_item: str = "- {role}: {text}{time_suffix}"
    date_format: str = "{day} %B %Y"
    max_item_tokens: int = Field(200, ge=1)

    def format_time(self, when: datetime | None) -> str | None:
        """``when`` in :attr:`date_format`, or ``None``."""
        if when is None:
            return None
        return when.strftime(self.date_format.replace("{day}", str(when.day)))


class ContextItem(BaseModel):
    """One packed memory.

    Attributes:
        text: the text shown (cut to ``max_item_tokens`` when longer).
        time: when it happened or became true (UTC), cited in the rendering.
        score: its value for this query, in [0, 1] (search score, strategy success rate,
            1 for profile facts, recency for the recent window).
        tokens: what its rendered line costs, in the counter's tokens.
        memory_id: the memory it came from (``None`` for recent turns and strategies).
        source_ids: provenance: for facts the episodic memories they were extracted from,
            for strategies the outcome ids, for episodes their own id.
        role: the speaker's role or name (episodes and recent turns).
    """

    model_config = ConfigDict(extra="forbid")

    text: str
    time: datetime | None = None
    score: float = 0.0
    tokens: int = 0
    memory_id: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    role: str | None = None


class ContextSection(BaseModel):
    """One section of a context: its name, heading and packed items (display order)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    title: str
    items: list[ContextItem] = Field(default_factory=list)


class Context(BaseModel):
    """An assembled context.

    Attributes:
        query: what it was assembled for.
        user_id, session_id: the scope.
        budget_tokens: the limit; ``tokens`` (the exact count of ``text``) never exceeds it.
        format: ``"markdown"`` or ``"json"``: the form of ``text``.
        encoding: the token counter's name.
        text: the rendered context, ready for a prompt.
        sections: every requested section in priority order (empty ones included).
        dropped: candidates left out for lack of budget, per section.
    """

    model_config = ConfigDict(extra="forbid")

    query: str
    user_id: str
    session_id: str | None = None
    budget_tokens: int
    format: Literal["markdown", "json"]
    encoding: str
    text: str
    tokens: int
    sections: list[ContextSection]
    dropped: dict[str, int] = Field(default_factory=dict)

    def section(self, name: str) -> ContextSection | None:
        """The section called ``name``, or ``None`` when it was not requested."""
        return next((s for s in self.sections if s.name == name), None)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (times as ISO-8601 strings)."""
        return self.model_dump(mode="json")


# -- rendering ---------------------------------------------------------------------------


def _line(item: ContextItem, section: str, template: ContextTemplate) -> str:
    when = template.format_time(item.time)
    # A fact's sentence may already say its date ("went hiking (6 May 2023)").
    suffix = template.time_suffix.format(time=when) if when and when not in item.text else ""
    if section == "recent":
        return template.recent_item.format(role=item.role or "", text=item.text, time_suffix=suffix)
    if section == "episodes" and item.role:
        return template.episode_item.format(role=item.role, text=item.text, time_suffix=suffix)
    return template.item.format(text=item.text, time=when or "", time_suffix=suffix)


def _json_item(item: ContextItem, template: ContextTemplate) -> dict[str, Any]:
    out: dict[str, Any] = {"text": item.text, "time": template.format_time(item.time)}
    if item.role is not None:
        out["role"] = item.role
    return out


def _render(
    packed: Mapping[str, list[ContextItem]],
    order: Sequence[str],
    fmt: str,
    template: ContextTemplate,
) -> str:
    """The text of the non-empty sections, in ``order``."""
    names = [n for n in order if packed.get(n)]
    if fmt == "json":
        if not names:
            return ""
        doc = [
            {
                "section": n,
                "title": template.headings.get(n, n),
                "items": [_json_item(i, template) for i in packed[n]],
            }
            for n in names
        ]
        return json.dumps({"sections": doc}, ensure_ascii=False)
    blocks = []
    for n in names:
        lines = [f"## {template.headings.get(n, n)}"]
        lines.extend(_line(i, n, template) for i in packed[n])
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# -- candidates --------------------------------------------------------------------------


def _shingles(text: str) -> set[str]:
    norm = " ".join(re.sub(r"[^\w]+", " ", unicodedata.normalize("NFKC", text).casefold()).split())
    if len(norm) < 3:
        return {norm}
    return {norm[i : i + 3] for i in range(len(norm) - 2)}


def _near(a: set[str], b: set[str]) -> bool:
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= _NEAR_DUPLICATE


def _cut(text: str, counter: TokenCounter, template: ContextTemplate) -> str:
    text = " ".join(text.split())
    if counter.count(text) <= template.max_item_tokens:
        return text
    return counter.truncate(text, max(template.max_item_tokens - 1, 0)).rstrip() + "…"


def _profile_items(mem: Memory, user_id: str) -> list[ContextItem]:
    items = []
    for f in mem.facts(user_id=user_id, subject=SELF):
        p = predicates.PREDICATES.get(f.predicate)
        if p is None or p.category not in _PROFILE_CATEGORIES:
            continue
        label = f.predicate.replace("_", " ")
        items.append(
            ContextItem(
                text=f"{label}: {f.object}",
                time=f.valid_from,
                score=1.0,
                memory_id=f.memory_id,
                source_ids=list(f.source_ids),
            )
        )
    return items


def _fact_items(mem: Memory, query: str, user_id: str, skip: set[str]) -> list[ContextItem]:
    items = []
    for h in mem.search(query, user_id=user_id, kinds=["semantic"], limit=_FACT_HITS):
        r = h.memory
        if r.id in skip:
            continue
        items.append(
            ContextItem(
                text=r.content,
                time=r.valid_from or r.occurred_at or r.created_at,
                score=h.score,
                memory_id=r.id,
                source_ids=list(r.source_ids),
            )
        )
    return items


def _episode_items(mem: Memory, query: str, user_id: str) -> list[ContextItem]:
    items = []
    for h in mem.search(query, user_id=user_id, kinds=["episodic"], limit=_EPISODE_HITS):
        r = h.memory
        items.append(
            ContextItem(
                text=r.content,
                time=r.occurred_at or r.created_at,
                score=h.score,
                memory_id=r.id,
                source_ids=[r.id],
                role=r.speaker or r.role,
            )
        )
    return items


def _strategy_items(mem: Memory, query: str, user_id: str) -> list[ContextItem]:
    items = []
    for s in mem.strategies(query, user_id=user_id, limit=5):
        verdict = f"{s.successes} succeeded, {s.failures} failed"
        items.append(
            ContextItem(
                text=f"{s.strategy}: {verdict} on tasks like “{s.tasks[0]}”"
                if s.tasks
                else f"{s.strategy}: {verdict}",
                time=s.last_outcome_at,
                score=s.success_rate * s.similarity,
                source_ids=list(s.evidence_ids),
            )
        )
    return items


def _recent_items(recent: Sequence[tuple[str, str, Any]]) -> list[ContextItem]:
    n = len(recent)
    return [
        ContextItem(text=content, time=when, score=(i + 1) / n, role=role)
        for i, (role, content, when) in enumerate(recent)
    ]


# -- validation --------------------------------------------------------------------------


def _budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("budget_tokens", f"must be an int, got {type(value).__name__}")
    if not 1 <= value <= MAX_BUDGET_TOKENS:
        raise ValidationError("budget_tokens", f"must be in 1..{MAX_BUDGET_TOKENS}, got {value}")
    return value


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
        if not isinstance(turn, Sequence) or isinstance(turn, str) or len(turn) != 3:
            raise ValidationError(f"recent[{i}]", "must be a (role, content, time) tuple")
        role, content, when = turn
        if not isinstance(role, str) or not role.strip():
            raise ValidationError(f"recent[{i}].role", "must be a non-blank string")
        text = validate_content(content, f"recent[{i}].content")
        out.append((role.strip(), " ".join(text.split()), to_utc(when, f"recent[{i}].time")))
    return out


# -- packing -----------------------------------------------------------------------------


def _value(item: ContextItem) -> float:
    """Score per token, with the score sharpened so that relevance dominates length."""
    return item.score**_SHARPNESS / max(item.tokens, 1)


def _pack(
    candidates: Mapping[str, list[ContextItem]],
    order: Sequence[str],
    budget: int,
    shares: Mapping[str, float],
    cost_of_header: Callable[[str], int],
) -> dict[str, list[ContextItem]]:
    """Greedy packing by score per token: shares first (unused flowing on), then the rest."""
    packed: dict[str, list[ContextItem]] = {n: [] for n in order}
    used = 0
    total_share = sum(shares[n] for n in order) or 1.0

    def by_value(items: list[ContextItem]) -> list[ContextItem]:
        return sorted(items, key=lambda i: (-_value(i), -i.score))

    def fill(name: str, allowance: int) -> int:
        spent = 0
        taken = {id(i) for i in packed[name]}
        for item in by_value([i for i in candidates[name] if id(i) not in taken]):
            cost = item.tokens + (0 if packed[name] else cost_of_header(name))
            if spent + cost <= allowance:
                packed[name].append(item)
                spent += cost
        return spent

    carry = 0
    for name in order:
        allowance = min(int(budget * shares[name] / total_share) + carry, budget - used)
        spent = fill(name, allowance)
        used += spent
        carry = allowance - spent
    for name in order:
        used += fill(name, budget - used)
    return packed


def build_context(
    mem: Memory,
    query: str,
    *,
    user_id: str,
    session_id: str | None = None,
    budget_tokens: int = 1500,
    format: Literal["markdown", "json"] = "markdown",
    sections: Sequence[str] | None = None,
    template: ContextTemplate | None = None,
    recent: Sequence[tuple[str, str, datetime | str | None]] | None = None,
    counter: TokenCounter | str | None = None,
    shares: Mapping[str, float] | None = None,
) -> Context:
    """Assemble what a model should know about ``user_id`` to answer ``query``.

    Args:
        mem: the store.
        query: the user's message or task (non-blank); it drives the searches.
        user_id: required; nothing of other users is read.
        session_id: the conversation this context is for (recorded on the result).
        budget_tokens: the most tokens ``text`` may cost, 1..1,000,000.
        format: ``"markdown"`` (default) or ``"json"``.
        sections: which of :data:`SECTIONS` to include (always packed and rendered in
            priority order); default all.
        template: headings, item layout, date format, item length cap.
        recent: the latest conversation turns, oldest first, as ``(role, content, time)``
            (time: datetime, ISO string, epoch seconds or ``None``); the newest are kept
            when they do not all fit.
        counter: token counter or encoding name (default ``"o200k_base"``).
        shares: section → share of the budget (non-negative, any scale; normalised over
            the requested sections); default :data:`DEFAULT_SHARES`.

    Returns:
        A :class:`Context` with ``tokens == counter.count(text) <= budget_tokens``.

    Raises:
        ValidationError: names the bad field: ``query``, ``user_id``, ``session_id``,
            ``budget_tokens``, ``format``, ``sections[i]``, ``template``, ``recent[i]...``,
            ``shares``, ``encoding``.
    """
    query = v.content(query, "query")
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

    # Candidates, each section deduplicated against what comes before it.
    cands: dict[str, list[ContextItem]] = {}
    if "profile" in order:
        cands["profile"] = _profile_items(mem, user_id)
    if "facts" in order:
        in_profile = {i.memory_id for i in cands.get("profile", []) if i.memory_id}
        cands["facts"] = _fact_items(mem, query, user_id, in_profile)
    if "episodes" in order:
        cands["episodes"] = _episode_items(mem, query, user_id)
    if "strategies" in order:
        cands["strategies"] = _strategy_items(mem, query, user_id)
    if "recent" in order:
        cands["recent"] = _recent_items(turns)
    for items in cands.values():
        for item in items:
            item.text = _cut(item.text, tok, template)

    # Near-identical texts: the later section's copy goes (the recent window is kept
    # whole, and episodes it already shows go instead).
    recent_marks = [_shingles(i.text) for i in cands.get("recent", [])]
    seen: list[set[str]] = list(recent_marks)
    for name in order:
        if name == "recent":
            continue
        kept = []
        for item in cands[name]:
            mark = _shingles(item.text)
            if any(_near(mark, other) for other in seen):
                continue
            seen.append(mark)
            kept.append(item)
        cands[name] = kept

    def cost_of_header(name: str) -> int:
        title = template.headings.get(name, name)
        if format == "json":
            return tok.count(json.dumps({"section": name, "title": title, "items": []})) + 1
        return tok.count(f"## {title}\n") + 1

    for section_name, items in cands.items():
        lines = [
            json.dumps(_json_item(i, template), ensure_ascii=False) + ","
            if format == "json"
            else _line(i, section_name, template) + "\n"
            for i in items
        ]
        for item, n in zip(items, tok.count_many(lines), strict=True):
            item.tokens = n

    wrapper = tok.count(json.dumps({"sections": []})) if format == "json" else 0
    # A relevant fact whose source messages are all packed as episodes says nothing they
    # do not say verbatim: it goes, and its tokens go to other items (pack again until
    # no packed fact repeats packed episodes; each round removes candidates, so it ends).
    while True:
        packed = _pack(cands, order, max(budget - wrapper, 0), share_map, cost_of_header)
        shown = {e.memory_id for e in packed.get("episodes", [])}
        repeats = {
            id(f)
            for f in packed.get("facts", [])
            if f.source_ids and all(src in shown for src in f.source_ids)
        }
        if not repeats:
            break
        cands["facts"] = [f for f in cands["facts"] if id(f) not in repeats]

    # Display order: facts and episodes by score, the recent window in time order.
    for name in order:
        if name == "recent":
            packed[name].sort(key=lambda i: i.score)
        elif name != "profile":
            packed[name].sort(key=lambda i: -i.score)

    text = _render(packed, order, format, template)
    tokens = tok.count(text)
    while tokens > budget:
        # Joined lines can cost more than their parts: drop the least valuable item.
        name, item = min(
            ((n, i) for n in order for i in packed[n]),
            key=lambda pair: _value(pair[1]),
        )
        packed[name].remove(item)
        text = _render(packed, order, format, template)
        tokens = tok.count(text)

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


class ContextAPI:
    """Mixin for :class:`memstrata.Memory`: ``mem.context(...)``."""

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
        recent: Sequence[tuple[str, str, datetime | str | None]] | None = None,
        counter: TokenCounter | str | None = None,
    ) -> Context:
        """Assemble a token-budgeted context for ``query``; see :func:`build_context`.

        With a ``session_id`` and no ``recent``, the session's saved working-memory window
        (:meth:`Memory.working`) is the recent-window section, when it has one.
        """
        if recent is None and session_id is not None:
            recent = _saved_window(self, user_id, session_id)
        return build_context(
            self,  # type: ignore[arg-type]
            query,
            user_id=user_id,
            session_id=session_id,
            budget_tokens=budget_tokens,
            format=format,
            sections=sections,
            template=template,
            recent=recent,
            counter=counter,
        )


def _saved_window(
    mem: Any, user_id: str, session_id: str
) -> list[tuple[str, str, datetime | str | None]] | None:
    """The turns of a session's saved working-memory window, oldest first (``None`` when
    the session has no window); the running summary comes first as a system turn."""
    from .working import SQLiteSessionStore

    state = SQLiteSessionStore(mem.store).load(
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

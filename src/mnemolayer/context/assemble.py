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
import re
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer import _validate as v
from mnemolayer.context.condense import condense
from mnemolayer.errors import ValidationError
from mnemolayer.extract import predicates
from mnemolayer.extract.base import SELF
from mnemolayer.models import to_utc, validate_content
from mnemolayer.text.terms import query_terms
from mnemolayer.text.tokens import TokenCounter, get_token_counter

if TYPE_CHECKING:
    from mnemolayer.memory import Memory

__all__ = [
    "DEFAULT_SHARES",
    "SECTIONS",
    "VERBATIM_SHARE",
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
#: Part of the episodes section's first share spent on whole messages before the
#: rest of the recalled messages are condensed to the sentences the query asks about.
VERBATIM_SHARE = 0.5
#: Candidates fetched per search-backed section. Episodes: at least ``_EPISODE_HITS``,
#: and enough to fill the budget with lines of ``_LINE_TOKENS`` (a condensed message
#: costs about that), at most ``_MAX_EPISODE_HITS``.
_FACT_HITS = 10
_EPISODE_HITS = 40
_LINE_TOKENS = 25
_MAX_EPISODE_HITS = 500
#: Character-trigram Jaccard similarity at which two texts count as the same.
_NEAR_DUPLICATE = 0.85
_EARLIEST = datetime.min.replace(tzinfo=UTC)
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
        date_group: the Markdown line over each day's recalled episodes, a pattern over
            ``{time}``; episodes are then shown in time order and their lines leave out
            ``time_suffix`` (one date per day instead of one per line; the JSON form
            still gives each item its time). ``None``: no day lines; episodes are shown
            by relevance, each citing its time.
        date_format: ``strftime`` pattern of cited times, plus ``{day}`` for the day of
            the month without a leading zero (default ``"{day} %B %Y"`` → ``8 May 2023``).
        max_item_tokens: longer item texts are cut to this many tokens and end in ``…``.
        condense: show the less relevant recalled messages condensed to the sentences
            that share a word with the query (see :func:`build_context`); ``False``
            shows every packed message whole.
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
    date_group: str | None = "### {time}"
    date_format: str = "{day} %B %Y"
    max_item_tokens: int = Field(200, ge=1)
    condense: bool = True

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
        condensed: the text keeps only the sentences of a longer message that share a
            word with the query; ``…`` marks each left-out run.
    """

    model_config = ConfigDict(extra="forbid")

    text: str
    time: datetime | None = None
    score: float = 0.0
    tokens: int = 0
    memory_id: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    role: str | None = None
    condensed: bool = False


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


def _grouped(section: str, fmt: str, template: ContextTemplate) -> bool:
    """Whether ``section``'s items sit under one date line per day (Markdown episodes)."""
    return section == "episodes" and fmt == "markdown" and template.date_group is not None


def _line(item: ContextItem, section: str, template: ContextTemplate, dated: bool = True) -> str:
    """The Markdown line of ``item``; ``dated=False`` when a day line above cites its time."""
    when = template.format_time(item.time) if dated else None
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
        group = template.date_group if _grouped(n, fmt, template) else None
        if group is not None:
            lines.extend(_day_lines(packed[n], template, group))
        else:
            lines.extend(_line(i, n, template) for i in packed[n])
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _day_lines(items: Sequence[ContextItem], template: ContextTemplate, group: str) -> list[str]:
    """Episode lines (in time order) with a ``group`` line each time the day changes."""
    lines: list[str] = []
    day: str | None = None
    for item in items:
        when = template.format_time(item.time)
        if when is not None and when != day:
            lines.append(group.format(time=when))
            day = when
        lines.append(_line(item, "episodes", template, dated=when is None))
    return lines


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


def _episode_items(mem: Memory, query: str, user_id: str, budget: int) -> list[ContextItem]:
    limit = min(max(_EPISODE_HITS, budget // _LINE_TOKENS), _MAX_EPISODE_HITS)
    items = []
    for h in mem.search(query, user_id=user_id, kinds=["episodic"], limit=limit):
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


class _Costs:
    """What rendering adds to the item lines: section headings and day lines."""

    def __init__(self, counter: TokenCounter, template: ContextTemplate, fmt: str) -> None:
        self.counter = counter
        self.template = template
        self.fmt = fmt

    def header(self, name: str) -> int:
        title = self.template.headings.get(name, name)
        if self.fmt == "json":
            return (
                self.counter.count(json.dumps({"section": name, "title": title, "items": []})) + 1
            )
        return self.counter.count(f"## {title}\n") + 1

    def day(self, name: str, item: ContextItem) -> str | None:
        """The day line ``item`` sits under in section ``name`` (``None``: none)."""
        group = self.template.date_group
        if group is None or not _grouped(name, self.fmt, self.template):
            return None
        when = self.template.format_time(item.time)
        return group.format(time=when) if when is not None else None

    def line(self, name: str, item: ContextItem) -> str:
        """``item``'s own rendered line (with the joining comma or newline)."""
        if self.fmt == "json":
            return json.dumps(_json_item(item, self.template), ensure_ascii=False) + ","
        return _line(item, name, self.template, dated=self.day(name, item) is None) + "\n"


def _rank(item: ContextItem) -> tuple[float, int]:
    """Sort key: most relevant first, then the cheaper."""
    return (-item.score, item.tokens)


def _pack(
    candidates: Mapping[str, list[ContextItem]],
    condensed: Mapping[int, ContextItem],
    order: Sequence[str],
    budget: int,
    shares: Mapping[str, float],
    costs: _Costs,
) -> dict[str, list[ContextItem]]:
    """Greedy packing by relevance: shares first (unused flowing on), then the rest.

    ``condensed`` maps ``id(candidate)`` to its condensed form, used once the section has
    spent :data:`VERBATIM_SHARE` of its first share, or when the whole does not fit.
    """
    packed: dict[str, list[ContextItem]] = {n: [] for n in order}
    spent = dict.fromkeys(order, 0)
    days: dict[str, set[str]] = {n: set() for n in order}
    verbatim: dict[str, float] = {}
    done: set[int] = set()
    day_cost: dict[str, int] = {}
    total_share = sum(shares[n] for n in order) or 1.0

    def cost(name: str, item: ContextItem) -> int:
        c = item.tokens + (0 if packed[name] else costs.header(name))
        day = costs.day(name, item)
        if day is not None and day not in days[name]:
            if day not in day_cost:
                day_cost[day] = costs.counter.count(day + "\n")
            c += day_cost[day]
        return c

    def fill(name: str, allowance: int) -> int:
        used = 0
        for item in sorted((i for i in candidates[name] if id(i) not in done), key=_rank):
            short = condensed.get(id(item))
            forms = [item] if short is None else [short]
            if short is not None and spent[name] < verbatim[name]:
                forms.insert(0, item)
            for form in forms:
                c = cost(name, form)
                if used + c <= allowance:
                    day = costs.day(name, form)
                    if day is not None:
                        days[name].add(day)
                    packed[name].append(form)
                    done.add(id(item))
                    spent[name] += c
                    used += c
                    break
        return used

    used = carry = 0
    for name in order:
        allowance = min(int(budget * shares[name] / total_share) + carry, budget - used)
        verbatim[name] = VERBATIM_SHARE * allowance
        spent_here = fill(name, allowance)
        used += spent_here
        carry = allowance - spent_here
    for name in order:
        used += fill(name, budget - used)
    return packed


def _dedupe(cands: dict[str, list[ContextItem]], order: Sequence[str]) -> None:
    """Leave out near-identical texts: the later section's copy goes (the recent window
    is kept whole, and episodes it already shows go instead)."""
    seen: list[set[str]] = [_shingles(i.text) for i in cands.get("recent", [])]
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


def _condensed(episodes: Sequence[ContextItem], query: str) -> dict[int, ContextItem]:
    """``id(episode)`` → the episode condensed to the sentences the query asks about, for
    the episodes :func:`~mnemolayer.context.condense.condense` shortens."""
    terms = query_terms(query)
    out: dict[int, ContextItem] = {}
    for item in episodes:
        short = condense(item.text, terms)
        if short is not None:
            out[id(item)] = item.model_copy(update={"text": short, "condensed": True})
    return out


def _display_order(
    packed: dict[str, list[ContextItem]], order: Sequence[str], fmt: str, template: ContextTemplate
) -> None:
    """Facts (and ungrouped episodes) by relevance; day-grouped episodes and the recent
    window in time order (undated first)."""
    for name in order:
        if name == "recent":
            packed[name].sort(key=lambda i: i.score)
        elif _grouped(name, fmt, template):
            packed[name].sort(key=lambda i: (i.time is not None, i.time or _EARLIEST))
        elif name != "profile":
            packed[name].sort(key=lambda i: -i.score)


def _fit(
    packed: dict[str, list[ContextItem]],
    order: Sequence[str],
    fmt: str,
    template: ContextTemplate,
    counter: TokenCounter,
    budget: int,
) -> tuple[str, int]:
    """The rendered text and its count, dropping the least relevant items while joined
    lines cost more than ``budget`` (they can cost more than their parts)."""
    text = _render(packed, order, fmt, template)
    tokens = counter.count(text)
    while tokens > budget:
        name, item = max(
            ((n, i) for n in order for i in packed[n]), key=lambda pair: _rank(pair[1])
        )
        packed[name].remove(item)
        text = _render(packed, order, fmt, template)
        tokens = counter.count(text)
    return text, tokens


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
        template: headings, item layout, day lines, date format, item length cap,
            condensing.
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
        cands["episodes"] = _episode_items(mem, query, user_id, budget)
    if "strategies" in order:
        cands["strategies"] = _strategy_items(mem, query, user_id)
    if "recent" in order:
        cands["recent"] = _recent_items(turns)
    for items in cands.values():
        for item in items:
            item.text = _cut(item.text, tok, template)
    _dedupe(cands, order)

    costs = _Costs(tok, template, format)
    condensed = _condensed(cands.get("episodes", []), query) if template.condense else {}
    for section_name, items in cands.items():
        shorts = [condensed[id(i)] for i in items if id(i) in condensed]
        forms = [*items, *shorts]
        lines = [costs.line(section_name, i) for i in forms]
        for item, n in zip(forms, tok.count_many(lines), strict=True):
            item.tokens = n

    wrapper = tok.count(json.dumps({"sections": []})) if format == "json" else 0
    # A relevant fact whose source messages are all packed as episodes repeats them: it
    # goes, and its tokens go to other items (pack again until no packed fact repeats
    # packed episodes; each round removes candidates, so it ends).
    while True:
        packed = _pack(cands, condensed, order, max(budget - wrapper, 0), share_map, costs)
        shown = {e.memory_id for e in packed.get("episodes", [])}
        repeats = {
            id(f)
            for f in packed.get("facts", [])
            if f.source_ids and all(src in shown for src in f.source_ids)
        }
        if not repeats:
            break
        cands["facts"] = [f for f in cands["facts"] if id(f) not in repeats]

    _display_order(packed, order, format, template)
    text, tokens = _fit(packed, order, format, template, tok, budget)

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
    """Mixin for :class:`mnemolayer.Memory`: ``mem.context(...)``."""

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
    from mnemolayer.layers.working.window import SQLiteSessionStore

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

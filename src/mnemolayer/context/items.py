"""What a context is made of: the result models (:class:`Context`, its sections and
items, the :class:`ContextTemplate` that renders them) and the candidates each section
offers, read from a :class:`ContextSource` (a :class:`mnemolayer.Memory`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer.extract import predicates
from mnemolayer.extract.base import SELF
from mnemolayer.text.speakers import strip_speaker
from mnemolayer.text.tokens import TokenCounter

if TYPE_CHECKING:
    from mnemolayer.layers.procedural.strategies import StrategyStats
    from mnemolayer.models import Fact, Hit, MemoryRecord

__all__ = [
    "SECTIONS",
    "Context",
    "ContextItem",
    "ContextSection",
    "ContextSource",
    "ContextTemplate",
    "SectionName",
]

SectionName = Literal["profile", "facts", "episodes", "strategies", "recent"]
#: Section names in priority order (the order they are packed and rendered).
SECTIONS: tuple[SectionName, ...] = ("profile", "facts", "episodes", "strategies", "recent")
#: Each section's share of the budget before unused shares flow on (sums to 1).
#: Candidates fetched per search-backed section. Episodes: at least ``_EPISODE_HITS``,
#: and enough to fill the budget with lines of ``_LINE_TOKENS`` (a condensed message
#: costs about that), at most ``_MAX_EPISODE_HITS``.
_FACT_HITS = 10
_EPISODE_HITS = 40
_LINE_TOKENS = 25
_MAX_EPISODE_HITS = 500
#: Character-trigram Jaccard similarity at which two texts count as the same.
_NEAR_DUPLICATE = 0.85
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
        outdated_mark: appended to the text of a recalled message that search marked
            outdated for the query (it states a fact that is no longer true: "I live in
            Lisbon." after a move), so the model does not read the history as current;
            ``""`` shows nothing.
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
    outdated_mark: str = " (outdated)"

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
        session_id: the conversation session an episode belongs to (not rendered; the
            packer spreads the episodes' budget across sessions with it).
        outdated: an episode that states a fact no longer true, for this query (search's
            ``outdated`` mark); rendered with :attr:`ContextTemplate.outdated_mark`.
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
    session_id: str | None = None
    outdated: bool = False


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


class ContextSource(Protocol):
    """What a context is assembled from: the recall and knowledge reads of a
    :class:`mnemolayer.Memory` (or of its services, as :class:`ContextBuilder` holds them)."""

    def search(
        self,
        query: str,
        *,
        user_id: str,
        kinds: Sequence[str] | None = None,
        limit: int = 10,
        trusted_only: bool = False,
    ) -> list[Hit]: ...

    def facts(
        self, *, user_id: str, subject: str | None = None, trusted_only: bool = False
    ) -> list[Fact]: ...

    def strategies(self, task: str, *, user_id: str, limit: int = 10) -> list[StrategyStats]: ...


# -- candidates --------------------------------------------------------------------------


def shingles(text: str) -> set[str]:
    norm = " ".join(re.sub(r"[^\w]+", " ", unicodedata.normalize("NFKC", text).casefold()).split())
    if len(norm) < 3:
        return {norm}
    return {norm[i : i + 3] for i in range(len(norm) - 2)}


def near(a: set[str], b: set[str]) -> bool:
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= _NEAR_DUPLICATE


def cut(text: str, counter: TokenCounter, template: ContextTemplate) -> str:
    text = " ".join(text.split())
    if counter.count(text) <= template.max_item_tokens:
        return text
    return counter.truncate(text, max(template.max_item_tokens - 1, 0)).rstrip() + "…"


def profile_items(mem: ContextSource, user_id: str, trusted: bool = True) -> list[ContextItem]:
    items = []
    for f in mem.facts(user_id=user_id, subject=SELF, trusted_only=trusted):
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


def fact_items(
    mem: ContextSource, query: str, user_id: str, skip: set[str], trusted: bool = True
) -> list[ContextItem]:
    items = []
    hits = mem.search(
        query, user_id=user_id, kinds=["semantic"], limit=_FACT_HITS, trusted_only=trusted
    )
    for h in hits:
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


def episode_items(
    mem: ContextSource, query: str, user_id: str, budget: int, trusted: bool = True
) -> list[ContextItem]:
    limit = min(max(_EPISODE_HITS, budget // _LINE_TOKENS), _MAX_EPISODE_HITS)
    items = []
    hits = mem.search(query, user_id=user_id, kinds=["episodic"], limit=limit, trusted_only=trusted)
    for h in hits:
        r = h.memory
        items.append(
            ContextItem(
                # "Caroline: ..." added without a name is not labelled twice.
                text=strip_speaker(r.content, r.speaker),
                time=r.occurred_at or r.created_at,
                score=h.score,
                memory_id=r.id,
                source_ids=[r.id],
                role=_label(r),
                session_id=r.session_id,
                outdated=bool(h.scores.get("outdated")),
            )
        )
    return items


def _label(r: MemoryRecord) -> str | None:
    """Who a recalled message is from, as the context shows it: the speaker (else the
    role); a memory of an untrusted source (only with ``include_untrusted``) says its
    source and flags instead, so a model never reads a web page as the user's words."""
    if r.trusted:
        return r.speaker or r.role
    flags = f", flagged {', '.join(r.flags)}" if r.flags else ""
    return f"{r.source} (untrusted{flags})"


def strategy_items(mem: ContextSource, query: str, user_id: str) -> list[ContextItem]:
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


def recent_items(recent: Sequence[tuple[str, str, Any]]) -> list[ContextItem]:
    n = len(recent)
    return [
        ContextItem(text=content, time=when, score=(i + 1) / n, role=role)
        for i, (role, content, when) in enumerate(recent)
    ]

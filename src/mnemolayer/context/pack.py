"""Packing candidates under the token budget: shares per section (unused share flowing
on), relevance order within a section, condensed forms of the less relevant episodes,
near-duplicates left out, and the final count that enforces the bound."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from mnemolayer.context.condense import condense
from mnemolayer.context.items import ContextItem, ContextTemplate, near, shingles
from mnemolayer.context.render import grouped, json_item, line, render
from mnemolayer.text.terms import query_terms
from mnemolayer.text.tokens import TokenCounter

__all__ = [
    "DEFAULT_SHARES",
    "EPISODE_FLOOR",
    "SESSION_SPREAD",
    "VERBATIM_SHARE",
    "Costs",
    "above_floor",
    "condensed_forms",
    "dedupe",
    "display_order",
    "fit",
    "pack",
    "rank",
    "session_priority",
]

DEFAULT_SHARES: dict[str, float] = {
    "profile": 0.10,
    "facts": 0.20,
    "episodes": 0.45,
    "strategies": 0.10,
    "recent": 0.15,
}
#: Largest accepted budget, in tokens.
#: Part of the episodes section's first share spent on whole messages before the
#: rest of the recalled messages are condensed to the sentences the query asks about.
VERBATIM_SHARE = 0.5
#: Default ``session_spread`` of :func:`~mnemolayer.context.assemble.build_context`
#: (:func:`session_priority`; measured in docs/benchmarks.md).
SESSION_SPREAD = 0.0
#: Default ``episode_floor`` of :func:`~mnemolayer.context.assemble.build_context`
#: (:func:`above_floor`; measured in docs/benchmarks.md).
EPISODE_FLOOR = 0.0
_EARLIEST = datetime.min.replace(tzinfo=UTC)

# -- packing -----------------------------------------------------------------------------


class Costs:
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
        if group is None or not grouped(name, self.fmt, self.template):
            return None
        when = self.template.format_time(item.time)
        return group.format(time=when) if when is not None else None

    def line(self, name: str, item: ContextItem) -> str:
        """``item``'s own rendered line (with the joining comma or newline)."""
        if self.fmt == "json":
            return json.dumps(json_item(item, self.template), ensure_ascii=False) + ","
        return line(item, name, self.template, dated=self.day(name, item) is None) + "\n"


def rank(item: ContextItem) -> tuple[float, int]:
    """Sort key: most relevant first, then the cheaper."""
    return (-item.score, item.tokens)


def session_priority(items: Sequence[ContextItem], spread: float) -> dict[int, float]:
    """``id(item)`` → its packing priority: its score times ``(1 - spread) ** j`` for the
    item that is the ``j``-th best (from 0) of its session among ``items`` (an item with
    no session keeps its score). So the budget reaches the best turn of a second session
    before the fifth turn of the first: an aggregated answer ("camping, pottery,
    painting") has its instances in different sessions.

    Args:
        items: the candidates (scores in [0, 1]).
        spread: in [0, 1); 0 keeps the score order.
    """
    seen: dict[str, int] = {}
    out: dict[int, float] = {}
    for item in sorted(items, key=rank):
        if item.session_id is None or spread <= 0:
            out[id(item)] = item.score
            continue
        j = seen.get(item.session_id, 0)
        seen[item.session_id] = j + 1
        out[id(item)] = item.score * (1.0 - spread) ** j
    return out


def above_floor(items: Sequence[ContextItem], floor: float) -> list[ContextItem]:
    """The items scoring at least ``floor`` times the best one's score (all of them when
    ``floor`` is 0): turns far below the best match are left out rather than spending the
    budget on unrelated text."""
    if floor <= 0 or not items:
        return list(items)
    top = max(i.score for i in items)
    return [i for i in items if i.score >= floor * top]


def pack(
    candidates: Mapping[str, list[ContextItem]],
    condensed: Mapping[int, ContextItem],
    order: Sequence[str],
    budget: int,
    shares: Mapping[str, float],
    costs: Costs,
    priority: Mapping[int, float] | None = None,
) -> dict[str, list[ContextItem]]:
    """Greedy packing by relevance: shares first (unused flowing on), then the rest.

    ``condensed`` maps ``id(candidate)`` to its condensed form, used once the section has
    spent :data:`VERBATIM_SHARE` of its first share, or when the whole does not fit.
    ``priority`` (``id(candidate)`` → value, e.g. :func:`session_priority`) orders the
    candidates it names instead of their score (higher first).
    """
    prio = priority or {}

    def key(item: ContextItem) -> tuple[float, int]:
        return (-prio.get(id(item), item.score), item.tokens)

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
        for item in sorted((i for i in candidates[name] if id(i) not in done), key=key):
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


def dedupe(cands: dict[str, list[ContextItem]], order: Sequence[str]) -> None:
    """Leave out near-identical texts: the later section's copy goes (the recent window
    is kept whole, and episodes it already shows go instead)."""
    seen: list[set[str]] = [shingles(i.text) for i in cands.get("recent", [])]
    for name in order:
        if name == "recent":
            continue
        kept = []
        for item in cands[name]:
            mark = shingles(item.text)
            if any(near(mark, other) for other in seen):
                continue
            seen.append(mark)
            kept.append(item)
        cands[name] = kept


def condensed_forms(episodes: Sequence[ContextItem], query: str) -> dict[int, ContextItem]:
    """``id(episode)`` → the episode condensed to the sentences the query asks about, for
    the episodes :func:`~mnemolayer.context.condense.condense` shortens."""
    terms = query_terms(query)
    out: dict[int, ContextItem] = {}
    for item in episodes:
        short = condense(item.text, terms)
        if short is not None:
            out[id(item)] = item.model_copy(update={"text": short, "condensed": True})
    return out


def display_order(
    packed: dict[str, list[ContextItem]], order: Sequence[str], fmt: str, template: ContextTemplate
) -> None:
    """Facts (and ungrouped episodes) by relevance; day-grouped episodes and the recent
    window in time order (undated first)."""
    for name in order:
        if name == "recent":
            packed[name].sort(key=lambda i: i.score)
        elif grouped(name, fmt, template):
            packed[name].sort(key=lambda i: (i.time is not None, i.time or _EARLIEST))
        elif name != "profile":
            packed[name].sort(key=lambda i: -i.score)


def fit(
    packed: dict[str, list[ContextItem]],
    order: Sequence[str],
    fmt: str,
    template: ContextTemplate,
    counter: TokenCounter,
    budget: int,
) -> tuple[str, int]:
    """The rendered text and its count, dropping the least relevant items while joined
    lines cost more than ``budget`` (they can cost more than their parts)."""
    text = render(packed, order, fmt, template)
    tokens = counter.count(text)
    while tokens > budget:
        name, item = max(((n, i) for n in order for i in packed[n]), key=lambda pair: rank(pair[1]))
        packed[name].remove(item)
        text = render(packed, order, fmt, template)
        tokens = counter.count(text)
    return text, tokens

"""Truth over staleness: what recall does with the versions of a fact.

A fact that changed ("I live in Lisbon." in January, "I moved to Porto last month." in
June) leaves a chain of semantic records linked by ``superseded_by``, each with the
messages it was extracted from (its ``source_ids``). For a query that finds any version
of such a chain, the version that is true at the reference time (the current one; with
``as_of``, the one whose ``valid_from <= as_of < valid_to``) answers it:

A chain that ends in a retraction ("I love coffee." closed by "I quit coffee.") has no
true fact now: the retracting message stands for its current version.

* its fact record and its source messages join the candidates when the search may
  return them (in scope, active), although their own words may miss the query ("moved
  to Porto" shares no keyword with "Where do I live now?");
* after scoring, they are lifted to at least the best score of the stale versions found
  (they answer the same question, truthfully), and the stale versions are capped at
  ``(1 - RetrievalConfig.outdated_penalty)`` of the best true version's score, so the
  history ranks below the truth in every mode.

A message is stale for a chain when it stated a version that is not true at the
reference time and not the true one too; without ``as_of`` it must also be outdated for
the query (:meth:`~mnemolayer.retrieval.candidates.CandidateFinder._mark_outdated`), or,
where no cosine was computed (keyword mode), have no current fact left or share at least
as many of the query's stemmed words with the closed fact as with its current ones.

This follows the bi-temporal model of DESIGN.md (valid time on facts, supersession as
closing a fact rather than deleting it; Snodgrass, "Developing Time-Oriented Database
Applications in SQL", 1999).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import numpy as np

from mnemolayer.retrieval.candidates import Candidates, SearchRequest
from mnemolayer.retrieval.vectors import UserVectors
from mnemolayer.store.base import SQLStore
from mnemolayer.store.sqlite.engine import iso
from mnemolayer.text.stem import stemmed_terms
from mnemolayer.text.timeq import TimeWindow

__all__ = [
    "TruthPlan",
    "apply_truth",
    "collapse",
    "fact_links",
    "fact_partners",
    "plan_truth",
    "stated_only_by_expired",
    "truth_request",
]


@dataclass
class TruthPlan:
    """Which candidates answer for which: per chain, the rowids of the version true at
    the reference time (fact record and its sources) and of the stale ones found."""

    groups: list[tuple[frozenset[int], frozenset[int]]] = field(default_factory=list)
    #: The versions were judged at the search's now (no ``as_of``): the stale ones are
    #: outdated. Judged at a past time, the current version ranks below the one true
    #: then without being called outdated.
    at_now: bool = True


def _chains(
    versions: list[tuple[int, int | None, str | None, str | None]],
) -> dict[int, list[tuple[int, str | None, str | None]]]:
    """Versions grouped by the newest record of their chain (followed through
    ``superseded_by``): ``{newest rowid: [(rowid, valid_from, valid_to)]}``."""
    successor = {r: n for r, n, _, _ in versions}
    out: dict[int, list[tuple[int, str | None, str | None]]] = {}
    for rowid, _, valid_from, valid_to in versions:
        end, hops = rowid, 0
        while successor.get(end) is not None and hops < len(successor):
            end, hops = successor[end] or end, hops + 1
        out.setdefault(end, []).append((rowid, valid_from, valid_to))
    return out


def _true_version(
    chain: list[tuple[int, str | None, str | None]], newest: int, as_of: datetime | None
) -> int | None:
    """The rowid of the version that holds at ``as_of`` (``None``: now, the newest one
    when it is still open), or ``None`` when none does."""
    if as_of is None:
        return next((r for r, _, vt in chain if r == newest and vt is None), None)
    moment = iso(as_of) or ""
    held = [
        (vf or "", r) for r, vf, vt in chain if (vf or "") <= moment and (vt is None or vt > moment)
    ]
    return max(held)[1] if held else None


#: Words that ask about the present although the query names a past time.
_NOW = re.compile(
    r"\b(?:now|currently|nowadays|these days|at the moment|today)\b|现在|目前|如今", re.I
)


def truth_request(req: SearchRequest, window: TimeWindow | None) -> SearchRequest:
    """The request whose reference time :func:`plan_truth` judges versions at: ``req``
    itself, or, when the query names a time wholly in the past and asks nothing about
    the present ("Where did I live in March?", 我三月份住在哪里？), ``req`` with
    ``as_of`` the last moment of that time, so the version true then answers (as an
    explicit ``as_of`` would) and the current one ranks below it."""
    if window is None or req.as_of is not None or window.end > req.now:
        return req
    if _NOW.search(req.query):
        return req
    return replace(req, as_of=window.end - timedelta(microseconds=1))


def plan_truth(
    store: SQLStore,
    req: SearchRequest,
    links: list[tuple[int, int, bool]],
    cands: Candidates,
    may_return: Callable[[int], bool],
) -> TruthPlan:
    """Find the chains of fact versions the candidates touch, add each chain's true
    version (its fact record and source messages, where ``may_return``) to ``cands``,
    and return what :func:`apply_truth` orders after scoring."""
    plan = TruthPlan(at_now=req.as_of is None)
    if not links or not cands.rowids:
        return plan
    versions = store.fact_versions(req.scope.user_id)
    if not versions:
        return plan
    sources: dict[int, set[int]] = {}
    for f, s, _current in links:
        sources.setdefault(int(f), set()).add(int(s))
    found = set(cands.rowids)
    has_cosine = req.mode != "keyword"
    by_words = None if has_cosine else _WordMatch(store, req, links)
    for newest, chain in _chains(versions).items():
        true = _true_version(chain, newest, req.as_of)
        if true is not None:
            true_members = {true} | sources.get(true, set())
        elif req.as_of is None and all(rowid != newest for rowid, _, _ in chain):
            # Retracted ("I quit coffee"): the retracting message is what holds now.
            true_members = {newest}
        else:
            continue
        stale: set[int] = set()
        for rowid, _, _ in chain:
            if rowid == true:
                continue
            if rowid in found:
                stale.add(rowid)
            for msg in sources.get(rowid, set()) - true_members:
                if msg not in found:
                    continue
                if (
                    req.as_of is not None
                    or msg in cands.outdated
                    or (by_words is not None and by_words.outdated(msg, rowid))
                ):
                    stale.add(msg)
        if not stale:
            continue
        for rid in sorted(true_members):
            if rid not in found and may_return(rid):
                found.add(rid)
                cands.rowids.append(rid)
        plan.groups.append((frozenset(true_members), frozenset(stale)))
    return plan


class _WordMatch:
    """Keyword mode's test of a message outdated for the query (no cosine to compare):
    it has no current fact left, or the query shares at least as many stemmed words with
    the closed fact's sentence as with any of its current facts' ("Where do I live now?"
    against "The user lives in Lisbon" and "The user works at Google", both from "I live
    in Lisbon and work at Google."). Fact sentences are read when first needed."""

    def __init__(self, store: SQLStore, req: SearchRequest, links: list[tuple[int, int, bool]]):
        self.store, self.user_id = store, req.scope.user_id
        self.query = set(stemmed_terms(req.query))
        self.current: dict[int, list[int]] = {}
        for f, s, cur in links:
            if cur:
                self.current.setdefault(int(s), []).append(int(f))
        self.words: dict[int, set[str]] = {}

    def _overlap(self, facts: list[int]) -> list[int]:
        missing = [f for f in facts if f not in self.words]
        if missing:
            got = self.store.get_many_by_rowid(missing, user_id=self.user_id)
            for f in missing:
                record = got.get(f)
                self.words[f] = set(stemmed_terms(record.content)) if record else set()
        return [len(self.query & self.words[f]) for f in facts]

    def outdated(self, message: int, closed_fact: int) -> bool:
        current = self.current.get(message, [])
        if not current:
            return True
        closed, *others = self._overlap([closed_fact, *current])
        return closed > 0 and closed >= max(others)


def apply_truth(
    plan: TruthPlan, rowids: list[int], scores: dict[str, np.ndarray], penalty: float
) -> None:
    """Order each chain's true version above its stale ones, in place on ``scores``
    (arrays in ``rowids`` order): the true members' ``final`` becomes at least the best
    stale member's (``truth`` in the breakdown records the lift), the stale members'
    at most ``(1 - penalty)`` of the best true member's (``outdated`` becomes 1 when the
    plan judged them at now)."""
    if not plan.groups:
        return
    index = {rid: i for i, rid in enumerate(rowids)}
    final = scores["final"]
    lift = np.full(len(rowids), np.nan)
    outdated = scores.get("outdated")
    for true_members, stale in plan.groups:
        t = [index[r] for r in true_members if r in index]
        s = [index[r] for r in stale if r in index]
        if not t or not s:
            continue
        best_stale = float(final[s].max())
        for i in t:
            if final[i] < best_stale:
                lift[i] = best_stale
                final[i] = best_stale
        cap = float(final[t].max()) * (1.0 - penalty)
        for i in s:
            final[i] = min(float(final[i]), cap)
            if outdated is not None and plan.at_now:
                outdated[i] = 1.0
    scores["truth"] = lift


def fact_links(uv: UserVectors) -> list[tuple[int, int, bool]]:
    """The user's fact links as the vector cache holds them: ``[(fact rowid, source
    rowid, fact is current)]`` (the store's ``fact_links``, for records with vectors)."""
    return list(
        zip(
            uv.unique[uv.link_fact].tolist(),
            uv.unique[uv.link_source].tolist(),
            uv.link_current.tolist(),
            strict=True,
        )
    )


def fact_partners(links: list[tuple[int, int, bool]]) -> dict[int, set[int]]:
    """Each fact record's source messages and each message's fact records, by rowid."""
    out: dict[int, set[int]] = {}
    for f, s, _ in links:
        out.setdefault(f, set()).add(s)
        out.setdefault(s, set()).add(f)
    return out


def collapse(
    order: list[int],
    rowids: list[int],
    partners: dict[int, set[int]],
    limit: int,
    facts: frozenset[int] = frozenset(),
    stale: frozenset[int] = frozenset(),
) -> list[tuple[int, int, list[int]]]:
    """The first ``limit`` hits of ``order`` (positions in ``rowids``, best first) with
    each fact and its source message collapsed into one.

    A record joins the hit of the record shown when the two are partners (a fact and a
    message it was extracted from): the better ranked of the two is shown and the other's
    rowid joins its provenance. A fact whose source message is in a hit that shows
    another fact of that message (its sibling: "The user lives in Porto" beside "The
    user's name is Ana", both from "I'm Ana. I moved to Porto ...") joins that hit only
    if the message can be shown instead, since only the message states both; a message
    in ``stale`` (it stated a version of a fact that is no longer true) is never shown in
    place of a fact, and the sibling is then a hit of its own.

    Args:
        order: positions in ``rowids``, best first.
        rowids: the candidates' rowids.
        partners: each fact's source messages and each message's facts, by rowid
            (:func:`fact_partners`).
        limit: the most hits returned.
        facts: the rowids that are fact records (the others are messages).
        stale: rowids of messages that must not stand for a current fact.

    Returns:
        ``[(position ranked, position shown, rowids it stands for, shown first)]``: the
        hit ranks by the first position's score and shows the record at the second.
    """
    kept: list[tuple[int, int, list[int]]] = []
    owner: dict[int, int] = {}  # rowid → index in kept of the hit that stands for it
    position = {rid: i for i, rid in enumerate(rowids)}
    for i in order:
        rid = rowids[i]
        into = _join(rid, kept, owner, partners, rowids, facts, stale, position)
        if into is not None:
            kept[into][2].append(rid)
            owner[rid] = into
            continue
        if len(kept) >= limit:
            break
        owner[rid] = len(kept)
        kept.append((i, i, [rid]))
    return kept


def _join(
    rid: int,
    kept: list[tuple[int, int, list[int]]],
    owner: dict[int, int],
    partners: dict[int, set[int]],
    rowids: list[int],
    facts: frozenset[int],
    stale: frozenset[int],
    position: dict[int, int],
) -> int | None:
    """The index in ``kept`` of the hit ``rid`` joins (switching that hit to show its
    message when a sibling fact joins), or ``None``: ``rid`` is a hit of its own."""
    linked = [p for p in partners.get(rid, ()) if p in owner]
    for p in linked:  # a partner of the record shown: it stands for rid already
        into = owner[p]
        if rowids[kept[into][1]] == p:
            return into
    if rid not in facts:
        return None
    for message in linked:  # a sibling fact: show the message that states both
        into = owner[message]
        ranked, shown, group = kept[into]
        if message in stale or rowids[shown] not in facts:
            continue
        if all(message in partners.get(g, ()) or g == message for g in group):
            kept[into] = (ranked, position[message], [message, *(g for g in group if g != message)])
            return into
    return None


def stated_only_by_expired(
    expired: set[int], partners: dict[int, set[int]], facts: frozenset[int]
) -> set[int]:
    """The fact records (rowids in ``facts``) all of whose sources are in ``expired``:
    a fact stated only by expired memories is not recalled, though maintenance may not
    have deleted it yet."""
    out: set[int] = set()
    for source in expired:
        for f in partners.get(source, ()):
            if f in facts and f not in out and partners.get(f, set()) <= expired:
                out.add(f)
    return out

"""Compaction of a working-memory window: which turns leave it when it overflows
(:func:`evict`) and how they fold into the running summary within its share of the budget
(:func:`fold`; one request per compaction for a summariser that writes,
:func:`fold_generative`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mnemolayer.extract.summarize import ExtractiveSummarizer
from mnemolayer.layers.working.state import WorkingMessage
from mnemolayer.text.tokens import REPLY_PRIMER_TOKENS, TokenCounter

if TYPE_CHECKING:
    from mnemolayer.extract.summarize import Summarizer

__all__ = ["evict", "fold", "fold_generative"]

#: A summary budget smaller than this (tokens) is not worth a message; it is left empty.
_MIN_SUMMARY_TOKENS = 16


def evict(
    messages: Sequence[WorkingMessage],
    cost: Callable[[WorkingMessage], int],
    budget: int,
    reserve: int,
) -> tuple[list[WorkingMessage], list[WorkingMessage]]:
    """The turns an overflowing window keeps and the ones that leave it, oldest first:
    unpinned turns go first until the kept ones and ``reserve`` fit ``budget``; the
    newest turn always stays (:meth:`WorkingMemory.add` cuts it when it alone is too big).
    """
    newest = messages[-1]
    kept = list(messages)
    evicted: list[WorkingMessage] = []
    while sum(cost(m) for m in kept) + reserve > budget:
        victim = next((m for m in kept if not m.pinned and m is not newest), None)
        if victim is None:
            break
        kept.remove(victim)
        evicted.append(victim)
    # Only after a budget cut on resume can pinned messages alone overflow: then the
    # oldest pinned ones leave too (archived like any turn), and last the newest is cut.
    while sum(cost(m) for m in kept) + REPLY_PRIMER_TOKENS > budget and len(kept) > 1:
        victim = next(m for m in kept if m is not newest)
        kept.remove(victim)
        evicted.append(victim)
    return kept, evicted


def fold(
    summarizer: Summarizer,
    counter: TokenCounter,
    summary: str,
    evicted: Sequence[WorkingMessage],
    target: int,
) -> tuple[str, int]:
    """The summary with ``evicted`` folded in, within ``target`` tokens; and 1 if the old
    summary itself had to be re-summarised (a hierarchical round), else 0."""
    if target < _MIN_SUMMARY_TOKENS:
        return "", 1 if summary else 0
    new_lines = [f"{m.role}: {m.content}" for m in evicted]
    if not isinstance(summarizer, ExtractiveSummarizer):
        return fold_generative(summarizer, counter, summary, new_lines, target)
    fresh = summarizer.summarize(new_lines, target, counter) if new_lines else ""
    if summary and fresh:  # a sentence already in the summary is not repeated
        known = set(summary.split("\n"))
        fresh = "\n".join(line for line in fresh.split("\n") if line not in known)
    joined = f"{summary}\n{fresh}" if summary and fresh else summary or fresh
    if counter.count(joined) <= target:
        return joined, 0
    # Over its share: summarise the old summary and the new lines together, giving
    # the new lines at least half the room so recent detail is not crowded out.
    fresh_part = summarizer.summarize(new_lines, target // 2, counter) if new_lines else ""
    rest = target - (counter.count(fresh_part) + 1 if fresh_part else 0)
    old_part = summarizer.summarize(summary.split("\n"), max(rest, 0), counter) if summary else ""
    merged = f"{old_part}\n{fresh_part}" if old_part and fresh_part else old_part or fresh_part
    if counter.count(merged) > target:
        merged = counter.truncate(merged, target)
    return merged, 1 if summary else 0


def fold_generative(
    summarizer: Summarizer, counter: TokenCounter, summary: str, new_lines: list[str], target: int
) -> tuple[str, int]:
    """:func:`fold` for a summariser that writes (an LLM): one request per compaction.

    The new turns get the room the summary leaves; when that is too little, the old
    summary's lines and the new turns are summarised together (a hierarchical round).
    """
    if not new_lines:
        return summary, 0
    room = target - (counter.count(summary) + 1 if summary else 0)
    if room >= _MIN_SUMMARY_TOKENS * 2:
        fresh = summarizer.summarize(new_lines, room, counter)
        joined = f"{summary}\n{fresh}" if summary and fresh else summary or fresh
        if counter.count(joined) <= target:
            return joined, 0
    merged = summarizer.summarize([*summary.split("\n"), *new_lines], target, counter)
    if counter.count(merged) > target:
        merged = counter.truncate(merged, target)
    return merged, 1 if summary else 0

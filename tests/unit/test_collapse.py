"""mnemolayer.retrieval.truth.collapse: a fact and its source message are one hit, and a
hit never shows a record that does not state what it stands for."""

from __future__ import annotations

from mnemolayer.retrieval.truth import collapse, fact_partners

# Message 1 stated facts 10 and 11; message 2 stated fact 20; fact 30 came from messages
# 3 and 4.
LINKS = [(10, 1, True), (11, 1, True), (20, 2, True), (30, 3, True), (30, 4, True)]
PARTNERS = fact_partners(LINKS)
FACTS = frozenset({10, 11, 20, 30})


def _hits(ranked: list[int], limit: int = 10, stale: frozenset[int] = frozenset()):  # type: ignore[no-untyped-def]
    """collapse over rowids given best first, as (rowid ranked, rowid shown, group)."""
    out = collapse(list(range(len(ranked))), ranked, PARTNERS, limit, FACTS, stale)
    return [(ranked[r], ranked[s], group) for r, s, group in out]


def test_a_message_stands_for_its_facts() -> None:
    assert _hits([1, 10, 2, 11]) == [(1, 1, [1, 10, 11]), (2, 2, [2])]


def test_a_fact_stands_for_its_message() -> None:
    assert _hits([20, 2]) == [(20, 20, [20, 2])]


def test_a_sibling_fact_turns_the_hit_into_the_message() -> None:
    # 10 ranks first, its message 1 joins it, then 11 (also from 1): the message states
    # both facts, the fact 10 does not state 11.
    assert _hits([10, 1, 11, 2]) == [(10, 1, [1, 10, 11]), (2, 2, [2])]


def test_a_sibling_before_the_message_is_not_hidden() -> None:
    # Without the message found, 11 is not stated by 10: a hit of its own.
    assert _hits([10, 11]) == [(10, 10, [10]), (11, 11, [11])]


def test_a_stale_message_never_stands_for_a_current_fact() -> None:
    assert _hits([10, 1, 11], stale=frozenset({1})) == [(10, 10, [10, 1]), (11, 11, [11])]


def test_a_fact_of_two_messages_keeps_them_both() -> None:
    assert _hits([30, 3, 4]) == [(30, 30, [30, 3, 4])]


def test_limit_counts_hits_not_records() -> None:
    assert _hits([1, 10, 11, 2, 20, 30], limit=2) == [(1, 1, [1, 10, 11]), (2, 2, [2, 20])]


def test_without_partners_every_record_is_a_hit() -> None:
    out = collapse([1, 0], [5, 6], {}, 10)
    assert out == [(1, 1, [6]), (0, 0, [5])]

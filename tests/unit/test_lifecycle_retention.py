"""Retention (decay, importance, reinforcement, pinning), forgetting, ranking, TTL and the
lifecycle settings."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, datetime, timedelta

import pydantic
import pytest

from mnemolayer.errors import ValidationError
from mnemolayer.lifecycle import (
    LifecycleConfig,
    RetentionInput,
    default_expires_at,
    effective_expires_at,
    explain_retention,
    forgetting_action,
    is_expired,
    rank_score,
    reinforce,
    retention,
)
from mnemolayer.models import MemoryKind, MemoryRecord
from mnemolayer.testing import FakeClock

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def record(**fields: object) -> MemoryRecord:
    base: dict[str, object] = {
        "id": "r1",
        "user_id": "u",
        "content": "I like tea",
        "created_at": T0,
        "updated_at": T0,
    }
    return MemoryRecord.model_validate(base | fields)


def inp(**fields: object) -> RetentionInput:
    base: dict[str, object] = {"kind": MemoryKind.EPISODIC, "importance": 0.5, "occurred_at": T0}
    return RetentionInput(**(base | fields))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "half_life"),
    [
        (MemoryKind.EPISODIC, 30.0),
        (MemoryKind.SEMANTIC, 365.0),
        (MemoryKind.PREFERENCE, 730.0),
        (MemoryKind.SUMMARY, 180.0),
    ],
)
def test_default_importance_halves_after_the_kinds_half_life(
    kind: MemoryKind, half_life: float
) -> None:
    item = inp(kind=kind)
    assert retention(item, T0) == 1.0
    assert retention(item, T0 + timedelta(days=half_life)) == pytest.approx(0.5)
    assert retention(item, T0 + timedelta(days=2 * half_life)) == pytest.approx(0.25)


def test_decay_is_monotone_and_clamped_for_future_events() -> None:
    item = inp()
    values = [retention(item, T0 + timedelta(days=d)) for d in range(0, 400, 7)]
    assert all(a > b for a, b in itertools.pairwise(values))
    assert all(0.0 <= v <= 1.0 for v in values)
    assert retention(item, T0 - timedelta(days=3)) == 1.0  # occurred "after" now


def test_importance_stretches_the_half_life_by_the_span() -> None:
    now = T0 + timedelta(days=30)
    low, mid, high = (explain_retention(inp(importance=i), now) for i in (0.0, 0.5, 1.0))
    assert (low.half_life_days, mid.half_life_days, high.half_life_days) == pytest.approx(
        (15.0, 30.0, 60.0)
    )
    assert low.value < mid.value < high.value
    flat = LifecycleConfig(importance_span=1.0)
    assert retention(inp(importance=0.0), now, flat) == retention(inp(importance=1.0), now, flat)


def test_procedural_half_life_grows_with_outcomes_up_to_the_cap() -> None:
    cfg = LifecycleConfig()
    assert cfg.base_half_life_days(MemoryKind.PROCEDURAL, 1) == 30.0
    assert cfg.base_half_life_days(MemoryKind.PROCEDURAL, 0) == 30.0
    assert cfg.base_half_life_days(MemoryKind.PROCEDURAL, 10) == 300.0
    assert cfg.base_half_life_days(MemoryKind.PROCEDURAL, 1000) == 730.0
    rec = record(kind="procedural", metadata={"outcome_count": 10})
    assert RetentionInput.from_record(rec).outcomes == 10
    assert explain_retention(rec, T0).base_half_life_days == 300.0
    assert RetentionInput.from_record(record(kind="procedural")).outcomes == 1


def test_access_restarts_the_clock_and_lengthens_the_half_life() -> None:
    now = T0 + timedelta(days=90)
    never = explain_retention(inp(), now)
    used = explain_retention(inp(access_count=2, last_accessed_at=T0 + timedelta(days=60)), now)
    assert never.anchor == "occurred_at" and never.age_days == pytest.approx(90)
    assert used.anchor == "last_accessed_at" and used.age_days == pytest.approx(30)
    assert used.reinforcement_factor == pytest.approx(2.0)  # 1 + 0.5 * 2
    assert used.value == pytest.approx(0.5 ** (30 / 60))
    assert used.value > never.value
    capped = explain_retention(inp(access_count=10_000), now)
    assert capped.reinforcement_factor == pytest.approx(1 + 0.5 * 6)


def test_pinned_records_never_decay_or_get_forgotten() -> None:
    pinned = record(pinned=True, importance=0.0)
    much_later = T0 + timedelta(days=10_000)
    assert retention(pinned, much_later) == 1.0
    assert explain_retention(pinned, much_later).below_threshold is False
    assert forgetting_action(pinned, much_later) == "keep"
    # Only the record's own field pins: metadata cannot.
    assert retention(record(metadata={"pinned": True}), much_later) < 0.01


def test_forgetting_follows_the_threshold_the_importance_floor_and_the_policy() -> None:
    # 0.05 is reached after log2(20) = 4.32 half-lives: day 129.7 for a default episode.
    item = inp()
    everything = LifecycleConfig(forget_below_importance=1.0)
    assert forgetting_action(item, T0 + timedelta(days=129), everything) == "keep"
    assert forgetting_action(item, T0 + timedelta(days=130), everything) == "archive"
    deleting = LifecycleConfig(forget_action="delete", forget_below_importance=1.0)
    assert forgetting_action(item, T0 + timedelta(days=130), deleting) == "delete"
    # A semantic fact with the same age is kept.
    fact = inp(kind=MemoryKind.SEMANTIC)
    assert forgetting_action(fact, T0 + timedelta(days=130), everything) == "keep"
    # By default only what matters little (importance < 0.35) is forgotten by age.
    assert LifecycleConfig().forget_below_importance == 0.35
    late = T0 + timedelta(days=1000)
    assert forgetting_action(item, late) == "keep"
    assert forgetting_action(inp(importance=0.34), late) == "archive"
    assert forgetting_action(inp(importance=0.35), late) == "keep"
    assert (
        forgetting_action(inp(importance=0.0), late, LifecycleConfig(forget_below_importance=0.0))
        == "keep"
    )


def test_the_explanation_carries_the_forgetting_decision() -> None:
    late = T0 + timedelta(days=1000)
    for importance, pinned in itertools.product((0.1, 0.34, 0.35, 0.9), (False, True)):
        item = inp(importance=importance, pinned=pinned)
        ex = explain_retention(item, late)
        assert ex.importance == importance and ex.forget_below_importance == 0.35
        assert ex.below_threshold is (not pinned)
        assert ex.forgotten is (not pinned and importance < 0.35)
        assert (forgetting_action(item, late) != "keep") is ex.forgotten


def test_explanation_matches_the_documented_formula() -> None:
    cfg = LifecycleConfig(importance_span=9.0, access_reinforcement=0.25, access_cap=4)
    item = inp(kind=MemoryKind.SEMANTIC, importance=0.8, access_count=7)
    now = T0 + timedelta(days=200, hours=12)
    ex = explain_retention(item, now, cfg)
    half_life = 365 * 9 ** (0.8 - 0.5) * (1 + 0.25 * 4)
    assert ex.half_life_days == pytest.approx(half_life)
    assert ex.value == pytest.approx(math.exp(-math.log(2) * 200.5 / half_life))
    data = ex.to_json()
    assert data["anchor_time"] == "2024-01-01T00:00:00Z"
    assert set(data) >= {"age_days", "half_life_days", "importance_factor", "value"}


def test_record_and_input_agree() -> None:
    rec = record(
        kind="semantic",
        importance=0.7,
        occurred_at=T0 + timedelta(days=1),
        access_count=3,
        last_accessed_at=T0 + timedelta(days=5),
    )
    now = T0 + timedelta(days=100)
    assert retention(rec, now) == retention(RetentionInput.from_record(rec), now)
    # Without an event time, the age counts from when it was stored.
    assert explain_retention(record(), now).anchor_time == T0


def test_retention_over_a_simulated_year_with_a_fake_clock() -> None:
    clock = FakeClock(T0)
    rec = record(importance=0.5)
    kept = []
    for _day in range(360):
        clock.advance(days=1)
        if clock().day == 1:  # recalled once a month
            update = reinforce(rec, clock())
            rec = rec.model_copy(update=update.as_changes())
        kept.append(retention(rec, clock()))
    # The first month decays one half-life; after that each monthly recall restarts the
    # clock with a longer half-life (3 recalls: 30 · 2.5 = 75 days), so use keeps it.
    assert min(kept) == pytest.approx(0.5)
    assert min(kept[90:]) > 0.75
    assert rec.access_count == 11
    # Disuse forgets it still: half-life 30 · 4^0.4 (importance 0.9) · 4 (capped) ≈ 209 days.
    assert explain_retention(rec, clock()).half_life_days == pytest.approx(30 * 4**0.4 * 4)
    assert retention(rec, clock() + timedelta(days=1000)) < 0.05


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"importance": 1.5}, "importance"),
        ({"importance": True}, "importance"),
        ({"access_count": -1}, "access_count"),
        ({"outcomes": 1.5}, "outcomes"),
        ({"kind": "dream"}, "kind"),
        ({"occurred_at": "yesterday"}, "occurred_at"),
        ({"occurred_at": None}, "occurred_at"),
    ],
)
def test_bad_input_names_the_field(fields: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        inp(**fields)
    assert err.value.field == field


def test_bad_now_and_item_name_the_field() -> None:
    with pytest.raises(ValidationError) as err:
        retention(inp(), "soon")
    assert err.value.field == "now"
    with pytest.raises(ValidationError) as err:
        retention("a record", T0)  # type: ignore[arg-type]
    assert err.value.field == "item"


def test_reinforce_bumps_importance_up_to_the_cap_only() -> None:
    cfg = LifecycleConfig(access_importance_bump=0.1, max_reinforced_importance=0.75)
    now = T0 + timedelta(days=3)
    first = reinforce(record(importance=0.6), now, cfg)
    assert (first.access_count, first.last_accessed_at) == (1, now)
    assert first.importance == pytest.approx(0.7)
    assert reinforce(record(importance=0.7), now, cfg).importance == pytest.approx(0.75)
    assert reinforce(record(importance=0.95), now, cfg).importance == 0.95  # never lowered
    later = T0 + timedelta(days=10)
    behind = reinforce(record(last_accessed_at=later, access_count=4), now, cfg)
    assert (behind.access_count, behind.last_accessed_at) == (5, later)


def test_rank_score_scales_by_retention() -> None:
    cfg = LifecycleConfig(ranking_weight=0.2)
    assert rank_score(0.8, 1.0, cfg) == pytest.approx(0.8)
    assert rank_score(0.8, 0.0, cfg) == pytest.approx(0.64)
    assert rank_score(0.0, 1.0, cfg) == 0.0  # a fresh but irrelevant memory stays irrelevant
    assert rank_score(0.8, 0.0, LifecycleConfig(ranking_weight=0.0)) == pytest.approx(0.8)
    with pytest.raises(ValidationError) as err:
        rank_score(0.5, 1.2, cfg)
    assert err.value.field == "retention"


def test_ttl_defaults_per_kind() -> None:
    cfg = LifecycleConfig(ttl_days={"episodic": 90})
    assert default_expires_at("episodic", T0, cfg) == T0 + timedelta(days=90)
    assert default_expires_at(MemoryKind.SEMANTIC, T0, cfg) is None
    assert default_expires_at("episodic", T0) is None  # nothing expires by default
    turn = record(occurred_at=T0 + timedelta(days=1))
    assert effective_expires_at(turn, cfg) == T0 + timedelta(days=91)
    own = record(expires_at=T0 + timedelta(days=7))
    assert effective_expires_at(own, cfg) == T0 + timedelta(days=7)  # the record's own wins
    with pytest.raises(ValidationError) as err:
        default_expires_at("dream", T0, cfg)
    assert err.value.field == "kind"


def test_is_expired_is_inclusive() -> None:
    at = T0 + timedelta(days=90)
    assert not is_expired(None, at)
    assert not is_expired(at, at - timedelta(seconds=1))
    assert is_expired(at, at)
    assert is_expired(at, "2030-01-01")
    with pytest.raises(ValidationError):
        is_expired(at, "later")


@pytest.mark.parametrize(
    "settings",
    [
        {"episodic_half_life_days": 0},
        {"importance_span": 0.5},
        {"archive_threshold": 1.0},
        {"forget_action": "shred"},
        {"ttl_days": {"episodic": -5}},
        {"ttl_days": {"dream": 5}},
        {"ranking_weight": 1.5},
        {"unknown": 1},
        {"dedup": {"merge_cosine": 2}},
    ],
)
def test_config_is_validated(settings: dict[str, object]) -> None:
    with pytest.raises(pydantic.ValidationError):
        LifecycleConfig.model_validate(settings)


def test_config_defaults_are_the_documented_ones() -> None:
    cfg = LifecycleConfig()
    assert (cfg.episodic_half_life_days, cfg.semantic_half_life_days) == (30.0, 365.0)
    assert cfg.preference_half_life_days == 730.0
    assert cfg.ttl_days == {}
    assert cfg.archive_threshold == 0.05
    assert cfg.forget_action == "archive"
    assert LifecycleConfig.model_validate(cfg.model_dump(mode="json")) == cfg

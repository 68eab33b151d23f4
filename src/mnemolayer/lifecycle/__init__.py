"""The memory lifecycle: decay, reinforcement, forgetting, expiry and near-duplicate merging.

Pure building blocks over plain values and :class:`~mnemolayer.models.MemoryRecord`;
``Memory`` calls them. One module per concern:

* :mod:`.clock`: the ``Clock`` seam and a ``FakeClock`` for tests;
* :mod:`.config`: ``LifecycleConfig`` (half-lives, reinforcement, forgetting, TTL, ranking
  weight) and ``DedupConfig`` (measured merge thresholds);
* :mod:`.retention`: the retention score (Ebbinghaus / MemoryBank decay), its
  explanation, reinforcement on access and the forgetting decision;
* :mod:`.expiry`: default TTLs per kind and expiry checks;
* :mod:`.importance`: importance at write time without an LLM (English and Chinese);
* :mod:`.dedup`: near-duplicate decisions with guards against merging different facts.
"""

from __future__ import annotations

from mnemolayer.lifecycle.clock import Clock, FakeClock, system_clock
from mnemolayer.lifecycle.config import DedupConfig, LifecycleConfig
from mnemolayer.lifecycle.decay import (
    AccessUpdate,
    RetentionExplanation,
    RetentionInput,
    explain_retention,
    forgetting_action,
    is_pinned,
    rank_score,
    reinforce,
    retention,
)
from mnemolayer.lifecycle.dedup import GUARDS, Decision, is_near_duplicate, text_similarity
from mnemolayer.lifecycle.expiry import default_expires_at, effective_expires_at, is_expired
from mnemolayer.lifecycle.importance import (
    ImportanceEstimate,
    ImportanceEstimator,
    RuleImportance,
    estimate_importance,
)

__all__ = [
    "GUARDS",
    "AccessUpdate",
    "Clock",
    "Decision",
    "DedupConfig",
    "FakeClock",
    "ImportanceEstimate",
    "ImportanceEstimator",
    "LifecycleConfig",
    "RetentionExplanation",
    "RetentionInput",
    "RuleImportance",
    "default_expires_at",
    "effective_expires_at",
    "estimate_importance",
    "explain_retention",
    "forgetting_action",
    "is_expired",
    "is_near_duplicate",
    "is_pinned",
    "rank_score",
    "reinforce",
    "retention",
    "system_clock",
    "text_similarity",
]

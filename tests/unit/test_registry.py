"""One table per seam (mnemolayer.registry), the optional-extra guard (mnemolayer._extras)
and the seams file (mnemolayer.protocols)."""

from __future__ import annotations

import sys

import pytest

import mnemolayer
from mnemolayer import _extras, protocols, registry
from mnemolayer.errors import MissingExtraError, UsageError, ValidationError
from mnemolayer.extract.rules.extractor import RuleExtractor
from mnemolayer.extract.summarize import ExtractiveSummarizer
from mnemolayer.lifecycle.importance import RuleImportance
from mnemolayer.registry import get_embedder
from mnemolayer.store.sessions import SQLiteSessionStore
from mnemolayer.store.sqlite.store import SQLiteStore
from mnemolayer.testing import HashingEmbedder


def test_every_table_entry_names_an_importable_factory() -> None:
    tables = (registry.EMBEDDERS, registry.EXTRACTORS, registry.SUMMARIZERS,
              registry.IMPORTANCE, registry.TOKEN_COUNTERS, registry.SESSIONS,
              registry.STORES)  # fmt: skip
    for table in tables:
        for name, ref in table.items():
            if not ref or name in ("llm", "redis", "rediss", "unix", "postgresql", "minilm"):
                continue  # empty: no factory; the others need extras, checked by their tests
            assert callable(registry._load(ref)), name


def test_names_resolve_through_the_one_entry_point() -> None:
    assert isinstance(registry.resolve("embedder", "hashing"), HashingEmbedder)
    assert isinstance(registry.resolve("extractor", "rules"), RuleExtractor)
    assert registry.resolve("extractor", "none") is None
    assert isinstance(registry.resolve("summarizer", "auto"), ExtractiveSummarizer)
    assert isinstance(registry.resolve("importance", "rules"), RuleImportance)
    assert registry.resolve("tokens", "cl100k").name == "cl100k_base"
    with pytest.raises(ValidationError) as err:
        registry.resolve("tokenizer", "x")  # type: ignore[arg-type]
    assert err.value.field == "seam"


def test_objects_are_used_as_they_are_and_checked_against_their_seam() -> None:
    given = HashingEmbedder()
    assert registry.get_embedder(given) is given
    assert get_embedder is registry.get_embedder  # the old import path
    with pytest.raises(ValidationError, match="unknown embedder 'nope'"):
        registry.get_embedder("nope")
    with pytest.raises(ValidationError) as err:
        registry.get_importance(object())  # type: ignore[arg-type]
    assert err.value.field == "importance"
    with pytest.raises(ValidationError) as err:
        registry.get_summarizer("terse")
    assert err.value.field == "summarizer"


def test_llm_names_need_the_llm_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("MNEMOLAYER_LLM_BASE_URL", "MNEMOLAYER_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    for seam in ("extractor", "summarizer", "importance"):
        with pytest.raises(ValidationError, match="MNEMOLAYER_LLM_BASE_URL") as err:
            registry.resolve(seam, "llm")  # type: ignore[arg-type]
        assert err.value.field == seam


def test_sessions_and_stores_resolve_by_url(tmp_path) -> None:
    target = registry.store_target(tmp_path / "m.db", None)
    assert (target.scheme, target.path) == ("sqlite", str(tmp_path / "m.db"))
    store, keyring = registry.open_store(target, read_only=None)
    try:
        assert isinstance(store, SQLiteStore) and keyring is None
        assert isinstance(registry.get_session_store(None, store), SQLiteSessionStore)
        with pytest.raises(ValidationError, match="expected 'sqlite' or a redis:// URL"):
            registry.get_session_store("memcached://h", store)
    finally:
        store.close()
    pg = registry.store_target("postgresql://u:secret@h/db", None)
    assert pg.scheme == "postgresql" and "secret" not in pg.path
    with pytest.raises(ValidationError) as err:
        registry.store_target("host=h dbname=db", None)
    assert err.value.field == "db"


def test_a_missing_extra_names_the_extra() -> None:
    with pytest.raises(MissingExtraError) as err:
        _extras.require("mnemolayer_no_such_module", extra="llm", purpose="LLM extraction")
    exc = err.value
    assert isinstance(exc, UsageError) and isinstance(exc, ImportError)
    assert (exc.extra, exc.module, exc.name) == ("llm", *("mnemolayer_no_such_module",) * 2)
    assert "LLM extraction needs the 'llm' extra: pip install -e '.[llm]'" in str(exc)
    assert isinstance(exc.__cause__, ImportError)
    assert _extras.require("json", extra="none") is sys.modules["json"]
    assert mnemolayer.MissingExtraError is MissingExtraError


def test_the_llm_modules_name_their_extra_when_openai_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("mnemolayer.llm.client", "mnemolayer.extract.llm"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai now raises ImportError
    with pytest.raises(MissingExtraError, match=r"the 'llm' extra"):
        import mnemolayer.extract.llm  # noqa: F401


def test_the_protocols_file_names_every_seam() -> None:
    for name in ("Store", "SessionStore", "Embedder", "Extractor", "Summarizer",
                 "ImportanceEstimator", "TokenCounter", "Clock", "ChatModel"):  # fmt: skip
        assert name in protocols.__all__ and hasattr(protocols, name)


def test_the_protocols_are_defined_once_and_keep_their_older_import_paths() -> None:
    import mnemolayer.embed
    import mnemolayer.extract.base
    import mnemolayer.extract.summarize
    import mnemolayer.layers.working.state
    import mnemolayer.layers.working.window
    import mnemolayer.lifecycle.clock
    import mnemolayer.lifecycle.importance
    import mnemolayer.text.tokens
    from mnemolayer import values

    older = {
        mnemolayer.embed: ("Embedder", "EmbedKind"),
        mnemolayer.extract.base: ("Extractor",),
        mnemolayer.extract.summarize: ("Summarizer",),
        mnemolayer.layers.working.state: ("SessionStore",),
        mnemolayer.layers.working.window: ("SessionStore",),
        mnemolayer.lifecycle.clock: ("Clock",),
        mnemolayer.lifecycle.importance: ("ImportanceEstimator",),
        mnemolayer.text.tokens: ("TokenCounter",),
    }
    for module, names in older.items():
        for name in names:
            assert getattr(module, name) is getattr(protocols, name), (module.__name__, name)
            assert name in module.__all__, (module.__name__, name)
    # The values the seams exchange, likewise: defined in values, re-exported where they were.
    for module, names in {
        mnemolayer.extract.base: ("Extraction", "ExtractedFact", "ExtractedEntity", "ResolvedDate"),
        mnemolayer.layers.working.state: ("WindowState", "WorkingMessage", "SessionInfo"),
        mnemolayer.lifecycle.importance: ("ImportanceEstimate",),
    }.items():
        for name in names:
            assert getattr(module, name) is getattr(values, name), (module.__name__, name)
            assert getattr(values, name).__module__ == "mnemolayer.values"
    assert protocols.Embedder.__module__ == "mnemolayer.protocols"

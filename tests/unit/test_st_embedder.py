"""The ``sentence-transformers:NAME_OR_PATH`` embedder (src/mnemolayer/embed/st.py) against a
stand-in ``sentence_transformers`` module (no model with bundled weights exists on PyPI,
and nothing may be downloaded): loading from local files only, prompts or prefixes for
queries and documents, the checks on what the model answers, and a store built with it."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mnemolayer import Memory, registry
from mnemolayer.embed.st import SentenceTransformerEmbedder
from mnemolayer.errors import EmbedderError, MissingExtraError, ValidationError
from mnemolayer.testing import HashingEmbedder

TEXTS = ["I live in Lisbon", "I love green tea"]


def _fake_st(
    monkeypatch: pytest.MonkeyPatch,
    *,
    prompts: dict[str, str] | None = None,
    fail: bool = False,
    width: int | None = None,
) -> list[Any]:
    """A sentence_transformers module whose model is the hashing model, the prompt name
    (or nothing) put before each text; ``width`` cuts its vectors (a broken model)."""
    made: list[Any] = []
    inner = HashingEmbedder()

    class SentenceTransformer:
        max_seq_length = 256

        def __init__(self, model: str, **kwargs: Any) -> None:
            if fail:
                raise OSError(f"{model} is not in the cache")
            self.model, self.kwargs, self.calls = model, kwargs, []
            self.prompts = dict(prompts or {})
            made.append(self)

        def get_sentence_embedding_dimension(self) -> int:
            return inner.dim

        def tokenizer(self, text: str) -> dict[str, list[int]]:
            return {"input_ids": [0, *range(len(text.split())), 0]}

        def encode(self, inputs: list[str], **kwargs: Any) -> np.ndarray:
            self.calls.append((list(inputs), kwargs))
            name = kwargs.get("prompt_name")
            out = inner.embed([f"{name}|{t}" if name else t for t in inputs])
            return out[:, :width] if width else out

    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = SentenceTransformer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    return made


def test_loads_local_files_only_and_embeds_with_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _fake_st(monkeypatch)
    embedder = SentenceTransformerEmbedder(
        "BAAI/bge-small-en-v1.5", query_prefix="query: ", batch_size=8
    )
    assert embedder.name == "sentence-transformers:BAAI/bge-small-en-v1.5"
    assert made[0].kwargs["local_files_only"] is True
    assert (embedder.dim, embedder.max_tokens) == (HashingEmbedder().dim, 256)
    got = embedder.embed(TEXTS)
    np.testing.assert_allclose(got, HashingEmbedder().embed(TEXTS), atol=1e-6)
    embedder.embed(["tea"], kind="query")
    assert made[0].calls[-1][0] == ["query: tea"]
    assert made[0].calls[-1][1]["batch_size"] == 8
    assert embedder.count_tokens("three words here") == 5


def test_the_models_own_prompts_win(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _fake_st(monkeypatch, prompts={"query": "query: ", "passage": "passage: "})
    embedder = SentenceTransformerEmbedder("intfloat/e5-small-v2", query_prefix="ignored: ")
    embedder.embed(["tea"], kind="query")
    embedder.embed(["tea"])
    assert [(c[0], c[1].get("prompt_name")) for c in made[0].calls] == [
        (["tea"], "query"),
        (["tea"], "passage"),
    ]


def test_a_model_directory_is_named_by_its_last_component(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_st(monkeypatch)
    folder = tmp_path / "models" / "bge-small"
    folder.mkdir(parents=True)
    embedder = registry.get_embedder(f"sentence-transformers:{folder}")
    assert embedder.name == "sentence-transformers:bge-small"


def test_not_on_disk_missing_library_and_bad_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_st(monkeypatch, fail=True)
    with pytest.raises(EmbedderError, match="nothing is downloaded"):
        registry.get_embedder("sentence-transformers:some/model")
    for kwargs in ({"batch_size": 0}, {"similarity_floor": 1.0}):
        with pytest.raises(ValidationError) as info:
            SentenceTransformerEmbedder("m", **kwargs)  # type: ignore[arg-type]
        assert info.value.field == "embedder"
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # the import fails
    with pytest.raises(MissingExtraError, match="'st' extra") as missing:
        registry.get_embedder("sentence-transformers:some/model")
    assert missing.value.extra == "st"


def test_a_model_answering_another_width_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_st(monkeypatch, width=100)
    with pytest.raises(EmbedderError, match="shape"):
        SentenceTransformerEmbedder("m").embed(TEXTS)


def test_a_store_built_with_it_recalls_like_the_model_in_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_st(monkeypatch)
    messages = ["I live in Lisbon.", "My sister works at Google.", "I love green tea."]
    with Memory(tmp_path / "st.db", embedder="sentence-transformers:m") as mem:
        mem.add(messages, user_id="u")
        got = [h.memory.content for h in mem.search("tea", user_id="u", kinds=["episodic"])]
    with Memory(tmp_path / "h.db", embedder="hashing") as mem:
        mem.add(messages, user_id="u")
        want = [h.memory.content for h in mem.search("tea", user_id="u", kinds=["episodic"])]
    assert got == want

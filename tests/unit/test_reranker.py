"""The reranker providers (issue 15 item 6, issue 18 item 2) against a local fake
``/rerank`` endpoint (tests/fake_model_server.py) and a fake sentence-transformers
module; the registry's ``"reranker"`` seam; nothing imported when none is configured."""

from __future__ import annotations

import subprocess
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from mnemolayer import registry
from mnemolayer.errors import MissingExtraError, RerankerError, ValidationError
from mnemolayer.protocols import Reranker
from mnemolayer.rerank.http import API_KEY_ENV, MODEL_ENV, HttpReranker, parse_scores
from tests.fake_model_server import FakeRerankServer

TEXTS = ["I like tea", "the harbour at night", "coffee at the harbour with Anna"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRerankServer]:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.delenv(MODEL_ENV, raising=False)
    with FakeRerankServer() as s:
        s.favour = {"harbour", "anna"}
        yield s


def test_tei_shape_scores_in_text_order(server: FakeRerankServer) -> None:
    scores = HttpReranker(server.url).rerank("where?", TEXTS)
    assert scores == [0.0, 1.0, 2.0]
    (req,) = server.requests
    assert req["path"] == "/rerank"
    assert req["body"] == {"query": "where?", "texts": TEXTS}
    assert req["authorization"] is None


def test_cohere_shape_with_a_model(server: FakeRerankServer) -> None:
    scores = HttpReranker(server.url, model="jina-reranker-v2").rerank("where?", TEXTS)
    assert scores == [0.0, 1.0, 2.0]
    body = server.requests[0]["body"]
    assert body == {"model": "jina-reranker-v2", "query": "where?", "documents": TEXTS, "top_n": 3}


def test_model_and_key_from_the_environment(
    server: FakeRerankServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODEL_ENV, "rerank-v3.5")
    monkeypatch.setenv(API_KEY_ENV, "env-key")
    reranker = HttpReranker(server.url)
    assert reranker.rerank("q", TEXTS) == [0.0, 1.0, 2.0]
    assert server.requests[0]["authorization"] == "Bearer env-key"
    assert server.requests[0]["body"]["model"] == "rerank-v3.5"
    assert "env-key" not in repr(reranker)


def test_the_key_argument_wins_and_the_path_gets_rerank(server: FakeRerankServer) -> None:
    base = server.url.removesuffix("/rerank")
    reranker = HttpReranker(base, api_key="arg-key")
    assert reranker.url == server.url
    reranker.rerank("q", TEXTS)
    assert server.requests[0]["authorization"] == "Bearer arg-key"


def test_retries_429_then_succeeds(server: FakeRerankServer) -> None:
    server.script = [{"status": 429, "headers": {"retry-after-ms": "10"}}, {"status": 503}]
    assert HttpReranker(server.url, max_retries=2).rerank("q", TEXTS) == [0.0, 1.0, 2.0]
    assert len(server.requests) == 3


def test_gives_up_after_the_retries(server: FakeRerankServer) -> None:
    server.script = [{"status": 500}, {"status": 500}]
    with pytest.raises(RerankerError, match="HTTP 500"):
        HttpReranker(server.url, max_retries=1).rerank("q", TEXTS)
    assert len(server.requests) == 2


def test_a_refused_key_names_the_setting(server: FakeRerankServer) -> None:
    server.script = [{"status": 401}]
    with pytest.raises(RerankerError, match=API_KEY_ENV) as info:
        HttpReranker(server.url).rerank("q", TEXTS)
    assert info.value.setting == API_KEY_ENV
    assert len(server.requests) == 1  # not retried


def test_a_timeout_is_an_error_within_the_budget(server: FakeRerankServer) -> None:
    server.script = [{"delay_s": 1.0}]
    with pytest.raises(RerankerError, match=r"cannot be reached|budget"):
        HttpReranker(server.url, timeout_s=0.2, max_retries=0).rerank("q", TEXTS)


def test_unreachable_names_the_setting() -> None:
    with FakeRerankServer() as s:
        url = s.url  # the port is free again once the server closes
    with pytest.raises(RerankerError, match=r"cannot be reached.*reranker setting") as info:
        HttpReranker(url, max_retries=0).rerank("q", TEXTS)
    assert info.value.setting == "reranker"


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ("<html>oops</html>", "not JSON"),
        ('{"scores": [1, 2, 3]}', "unknown shape"),
        ('[{"index": 0, "score": 1}]', "scored 1 of 3"),
        ('[{"index": 7, "score": 1}]', "index 7"),
        ('{"results": [{"index": 0, "relevance_score": "high"}]}', "score 'high'"),
    ],
)
def test_malformed_answers_are_clear_errors(server: FakeRerankServer, raw: str, match: str) -> None:
    server.script = [{"raw": raw}]
    with pytest.raises(RerankerError, match=match):
        HttpReranker(server.url).rerank("q", TEXTS)


def test_parse_scores_refuses_repeats_and_non_finite() -> None:
    with pytest.raises(RerankerError, match="repeated"):
        parse_scores([{"index": 0, "score": 1.0}, {"index": 0, "score": 2.0}], 2)
    with pytest.raises(RerankerError, match="non-finite"):
        parse_scores([{"index": 0, "score": float("nan")}], 1)
    assert parse_scores(
        {"results": [{"index": 1, "score": 0.5}, {"index": 0, "score": 0.25}]}, 2
    ) == [
        0.25,
        0.5,
    ]


def test_no_texts_no_request(server: FakeRerankServer) -> None:
    assert HttpReranker(server.url).rerank("q", []) == []
    assert server.requests == []


@pytest.mark.parametrize("url", ["ftp://host/rerank", "http://", "127.0.0.1:8080"])
def test_bad_urls(url: str) -> None:
    with pytest.raises(ValidationError, match="reranker"):
        HttpReranker(url)


# -- the registry -----------------------------------------------------------------------


def test_registry_resolves_the_reranker_seam(server: FakeRerankServer) -> None:
    assert registry.get_reranker(None) is None
    assert registry.get_reranker("none") is None
    built = registry.resolve("reranker", f"http:{server.url}")
    assert isinstance(built, HttpReranker) and built.url == server.url
    assert isinstance(registry.get_reranker(server.url), HttpReranker)
    assert isinstance(built, Reranker)


class _Mine:
    name = "mine"

    def rerank(self, query: str, texts: Any) -> list[float]:
        return [float(len(t)) for t in texts]


def test_registry_takes_objects_and_refuses_others() -> None:
    mine = _Mine()
    assert registry.get_reranker(mine) is mine
    with pytest.raises(ValidationError, match="rerank"):
        registry.get_reranker(object())  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="unknown reranker"):
        registry.get_reranker("colbert:foo")
    with pytest.raises(ValidationError, match="unknown reranker"):
        registry.get_reranker("cross-encoder:")


# -- the cross-encoder ------------------------------------------------------------------


def test_cross_encoder_without_sentence_transformers_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    with pytest.raises(MissingExtraError, match="'st' extra") as info:
        registry.get_reranker("cross-encoder:cross-encoder/ms-marco-MiniLM-L6-v2")
    assert info.value.extra == "st"


def _fake_st(monkeypatch: pytest.MonkeyPatch, labels: int = 1, fail: bool = False) -> list[Any]:
    """A sentence_transformers module whose CrossEncoder scores a pair by shared words."""
    made: list[Any] = []

    class CrossEncoder:
        def __init__(self, model: str, **kwargs: Any) -> None:
            if fail:
                raise OSError(f"{model} is not in the cache")
            self.model, self.kwargs = model, kwargs
            made.append(self)

        def predict(self, pairs: list[tuple[str, str]], **kwargs: Any) -> list[Any]:
            out = [float(len(set(q.split()) & set(t.split()))) for q, t in pairs]
            return [[s] * labels for s in out] if labels > 1 else out

    module = types.ModuleType("sentence_transformers")
    module.CrossEncoder = CrossEncoder  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    return made


def test_cross_encoder_loads_local_files_only_and_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _fake_st(monkeypatch)
    reranker = registry.get_reranker("cross-encoder:/models/ms-marco")
    assert reranker is not None and reranker.name == "cross-encoder:/models/ms-marco"
    assert made[0].model == "/models/ms-marco"
    assert made[0].kwargs["local_files_only"] is True
    assert reranker.rerank("coffee harbour", TEXTS) == [0.0, 1.0, 2.0]


def test_cross_encoder_not_on_disk_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_st(monkeypatch, fail=True)
    with pytest.raises(RerankerError, match="nothing is downloaded"):
        registry.get_reranker("cross-encoder:some/model")


def test_cross_encoder_with_several_labels_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_st(monkeypatch, labels=3)
    reranker = registry.get_reranker("cross-encoder:nli-model")
    assert reranker is not None
    with pytest.raises(RerankerError, match="several labels"):
        reranker.rerank("q", TEXTS)


def test_nothing_is_imported_without_a_reranker() -> None:
    code = (
        "import sys; from mnemolayer import Memory; "
        "m = Memory(':memory:', embedder='hashing'); m.add('hello there', user_id='u'); "
        "m.search('hello', user_id='u'); m.close(); "
        "print(sorted(k for k in sys.modules if k.startswith('mnemolayer.rerank')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the reranking step on its own --------------------------------------------------------


class _Records:
    """Stands in for the store: records by rowid."""

    def __init__(self, texts: dict[int, tuple[str, str]]) -> None:
        from mnemolayer.models import MemoryKind

        # the step reads a record's content and kind only
        self.records = {
            r: types.SimpleNamespace(content=t, kind=MemoryKind(k)) for r, (t, k) in texts.items()
        }

    def get_many_by_rowid(self, rowids: Any) -> dict[int, Any]:
        return {r: self.records[r] for r in rowids if r in self.records}


class _ByLength:
    name = "by-length"

    def __init__(self, answer: list[float] | None = None) -> None:
        self.answer = answer
        self.seen: list[list[str]] = []

    def rerank(self, query: str, texts: Any) -> list[float]:
        self.seen.append(list(texts))
        return self.answer if self.answer is not None else [float(len(t)) for t in texts]


def _breakdown(n: int, **marks: dict[int, float]) -> dict[str, Any]:
    import numpy as np

    out: dict[str, Any] = {"final": np.linspace(0.9, 0.1, n)}
    for key, at in marks.items():
        col = np.full(n, np.nan) if key != "time_window" else np.zeros(n)
        for i, v in at.items():
            col[i] = v
        out[key] = col
    return out


@pytest.mark.parametrize(
    "marks",
    [{"fact_key": {0: 0.8}}, {"time_window": {0: 1.0}}, {"truth": {0: 0.9}}],
    ids=["fact_key", "time_window", "truth"],
)
def test_structure_derived_candidates_keep_their_place(marks: dict[str, Any]) -> None:
    import numpy as np

    from mnemolayer.config import RetrievalConfig
    from mnemolayer.retrieval.reranking import rerank_order

    store = _Records({10: ("a", "episodic"), 11: ("bb", "episodic"), 12: ("cccc", "episodic")})
    scores = _breakdown(3, **marks)
    model = _ByLength()
    order = rerank_order(
        model, RetrievalConfig(rerank_weight=1.0), "q", [10, 11, 12], np.arange(3), scores,
        frozenset(), {}, store,  # type: ignore[arg-type]
    )  # fmt: skip
    assert order.tolist() == [0, 2, 1]  # 0 stays first; the reranker swaps the others
    assert model.seen == [["bb", "cccc"]]
    assert np.isnan(scores["reranker"][0]) and scores["reranker"][2] == 1.0


def test_fact_records_and_their_messages_keep_their_place() -> None:
    import numpy as np

    from mnemolayer.config import RetrievalConfig
    from mnemolayer.retrieval.reranking import rerank_order

    texts = {1: ("m", "episodic"), 2: ("fact", "semantic"), 3: ("x", "episodic"),
             4: ("yyyy", "episodic")}  # fmt: skip
    scores = _breakdown(4)
    order = rerank_order(
        _ByLength(), RetrievalConfig(rerank_weight=1.0), "q", [1, 2, 3, 4], np.arange(4),
        scores, frozenset({2}), {1: {2}, 2: {1}}, _Records(texts),  # type: ignore[arg-type]
    )  # fmt: skip
    assert order.tolist() == [0, 1, 3, 2]


def test_a_reranker_giving_the_wrong_count_changes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import numpy as np

    from mnemolayer.config import RetrievalConfig
    from mnemolayer.retrieval.reranking import rerank_order

    store = _Records({10: ("a", "episodic"), 11: ("bb", "episodic"), 12: ("cccc", "episodic")})
    scores = _breakdown(3)
    before = scores["final"].copy()
    order = np.arange(3)
    out = rerank_order(
        _ByLength([1.0]), RetrievalConfig(), "q", [10, 11, 12], order, scores, frozenset(), {},
        store,  # type: ignore[arg-type]
    )  # fmt: skip
    assert out is order and "reranker" not in scores
    assert (scores["final"] == before).all()
    assert "recall keeps its own order" in caplog.text

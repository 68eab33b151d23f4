"""The ``openai:MODEL`` embedder (src/mnemolayer/embed/http.py) against a local fake
OpenAI-compatible ``/v1/embeddings`` endpoint (tests/fake_model_server.py): the request
shape, batching, order, the dimension probe and check, retries, and errors that name the
setting. No network."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from mnemolayer.embed.http import API_KEY_ENV, BASE_URL_ENV, OpenAIEmbedder, parse_embeddings
from mnemolayer.errors import EmbedderError, ValidationError
from mnemolayer.registry import get_embedder
from mnemolayer.testing import HashingEmbedder
from tests.fake_model_server import FakeEmbeddingsServer

TEXTS = ["I live in Lisbon", "My sister Anna works at Google", "I love green tea"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEmbeddingsServer]:
    monkeypatch.delenv(BASE_URL_ENV, raising=False)
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    with FakeEmbeddingsServer() as s:
        yield s


def test_vectors_are_the_servers_model_in_input_order(server: FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder("hash-model", base_url=server.base_url)
    got = embedder.embed(TEXTS)
    assert got.dtype == np.float32 and got.shape == (3, HashingEmbedder().dim)
    np.testing.assert_allclose(got, HashingEmbedder().embed(TEXTS), atol=1e-6)
    [request] = [r for r in server.requests if r["body"]["input"] == TEXTS]
    assert request["path"] == "/v1/embeddings"
    assert request["body"]["model"] == "hash-model"
    assert request["body"]["encoding_format"] == "float"
    assert request["authorization"] is None


def test_batches_and_prefixes(server: FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder(
        "m", base_url=server.base_url, dim=256, batch_size=2, query_prefix="query: "
    )
    embedder.embed(TEXTS)
    assert [r["body"]["input"] for r in server.requests] == [TEXTS[:2], TEXTS[2:]]
    embedder.embed(["tea"], kind="query")
    assert server.requests[-1]["body"]["input"] == ["query: tea"]
    assert embedder.embed([]).shape == (0, 256)


def test_the_dimension_is_probed_once_or_taken_as_given(server: FakeEmbeddingsServer) -> None:
    probed = OpenAIEmbedder("m", base_url=server.base_url)
    assert probed.dim == HashingEmbedder().dim
    assert probed.dim == HashingEmbedder().dim
    assert len(server.requests) == 1
    given = OpenAIEmbedder("m", base_url=server.base_url, dim=256)
    assert given.dim == 256 and len(server.requests) == 1


def test_a_model_of_another_dimension_is_refused(server: FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder("m", base_url=server.base_url, dim=256)
    server.dim = 64
    with pytest.raises(EmbedderError, match=r"dimension 64 .* expected 256"):
        embedder.embed(TEXTS)


def test_base_url_and_key_from_the_environment(
    server: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BASE_URL_ENV, server.base_url)
    monkeypatch.setenv(API_KEY_ENV, "env-key")
    embedder = get_embedder("openai:nomic-embed-text")
    assert isinstance(embedder, OpenAIEmbedder)
    assert embedder.name == "openai:nomic-embed-text"
    assert "env-key" not in repr(embedder)
    embedder.embed(["x"])
    assert server.requests[-1]["authorization"] == "Bearer env-key"
    assert server.requests[-1]["body"]["model"] == "nomic-embed-text"


def test_retries_429_and_503_then_succeeds(server: FakeEmbeddingsServer) -> None:
    server.script = [{"status": 429, "headers": {"retry-after-ms": "10"}}, {"status": 503}]
    embedder = OpenAIEmbedder("m", base_url=server.base_url, dim=256, max_retries=2)
    assert embedder.embed(TEXTS).shape == (3, 256)
    assert len(server.requests) == 3


def test_a_refused_key_names_its_setting_and_is_not_retried(server: FakeEmbeddingsServer) -> None:
    server.script = [{"status": 401}]
    with pytest.raises(EmbedderError, match=API_KEY_ENV) as info:
        OpenAIEmbedder("m", base_url=server.base_url, dim=256).embed(TEXTS)
    assert info.value.setting == API_KEY_ENV
    assert len(server.requests) == 1


def test_unreachable_names_the_base_url_setting() -> None:
    with FakeEmbeddingsServer() as s:
        base = s.base_url  # the port is free again once the server closes
    embedder = OpenAIEmbedder("m", base_url=base, max_retries=0)
    with pytest.raises(EmbedderError, match=f"cannot be reached.*{BASE_URL_ENV}") as info:
        embedder.dim  # noqa: B018 (the probe is the request)
    assert info.value.setting == BASE_URL_ENV


def test_a_slow_server_fails_within_the_budget(server: FakeEmbeddingsServer) -> None:
    server.script = [{"delay_s": 1.0}]
    embedder = OpenAIEmbedder("m", base_url=server.base_url, dim=256, timeout_s=0.2, max_retries=0)
    with pytest.raises(EmbedderError, match=r"cannot be reached|budget"):
        embedder.embed(TEXTS)


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        ({"vectors": []}, "unknown shape"),
        ({"data": [{"index": 0, "embedding": [1.0]}]}, "1 vectors for 2 inputs"),
        ({"data": [{"index": 5, "embedding": [1.0]}]}, "index 5"),
        ({"data": [{"index": 0, "embedding": "AAAA"}, {"index": 1}]}, "base64"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}, "twice"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
            "dimension 2",
        ),
    ],
)
def test_malformed_answers_are_clear_errors(answer: object, match: str) -> None:
    with pytest.raises(EmbedderError, match=match):
        parse_embeddings(answer, 2, where="http://x/v1/embeddings")


def test_html_instead_of_json_is_a_clear_error(server: FakeEmbeddingsServer) -> None:
    server.script = [{"raw": "<html>login</html>"}]
    with pytest.raises(EmbedderError, match="not JSON"):
        OpenAIEmbedder("m", base_url=server.base_url, dim=256).embed(TEXTS)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, BASE_URL_ENV),
        ({"base_url": "ftp://host/v1"}, "http"),
        ({"base_url": "http://127.0.0.1:1/v1", "dim": 0}, "dim"),
        ({"base_url": "http://127.0.0.1:1/v1", "batch_size": True}, "batch_size"),
        ({"base_url": "http://127.0.0.1:1/v1", "timeout_s": 0}, "timeout_s"),
    ],
)
def test_bad_settings_name_the_embedder_field(
    kwargs: dict[str, object], match: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BASE_URL_ENV, raising=False)
    with pytest.raises(ValidationError, match=match) as info:
        OpenAIEmbedder("m", **kwargs)  # type: ignore[arg-type]
    assert info.value.field == "embedder"


def test_unknown_names_list_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match=r"openai:<model>"):
        get_embedder("nope")
    monkeypatch.delenv(BASE_URL_ENV, raising=False)
    with pytest.raises(ValidationError, match=BASE_URL_ENV):
        get_embedder("openai:text-embedding-3-small")


def test_dimension_and_similarity_floor_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MNEMOLAYER_EMBED_DIM", "768")
    monkeypatch.setenv("MNEMOLAYER_EMBED_SIMILARITY_FLOOR", "0.7")
    embedder = OpenAIEmbedder("m", base_url="http://127.0.0.1:1/v1")
    assert (embedder.known_dim, embedder.dim, embedder.similarity_floor) == (768, 768, 0.7)
    assert (
        OpenAIEmbedder("m", base_url="http://127.0.0.1:1/v1", similarity_floor=0).similarity_floor
        == 0
    )
    monkeypatch.setenv("MNEMOLAYER_EMBED_SIMILARITY_FLOOR", "1.5")
    with pytest.raises(ValidationError, match="similarity_floor"):
        OpenAIEmbedder("m", base_url="http://127.0.0.1:1/v1")
    monkeypatch.setenv("MNEMOLAYER_EMBED_DIM", "wide")
    with pytest.raises(ValidationError, match="MNEMOLAYER_EMBED_DIM"):
        OpenAIEmbedder("m", base_url="http://127.0.0.1:1/v1")


def test_a_dimension_assumed_from_a_store_is_still_checked(server: FakeEmbeddingsServer) -> None:
    embedder = OpenAIEmbedder("m", base_url=server.base_url)
    assert embedder.known_dim is None
    embedder.assume_dim(128)
    with pytest.raises(EmbedderError, match="expected 128"):
        embedder.embed(TEXTS)
    with pytest.raises(ValidationError):
        embedder.assume_dim(0)

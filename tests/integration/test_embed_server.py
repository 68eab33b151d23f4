"""bench/embed_server.py: a registry embedder behind an OpenAI-compatible endpoint, read
by the ``openai:`` provider. The vectors must be the model's own, queries and documents
told apart by the E5 prefixes the client puts on."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pytest

from bench.embed_server import EmbeddingsServer, embed_request
from mnemolayer.embed.http import OpenAIEmbedder
from mnemolayer.testing import HashingEmbedder


class KindAware(HashingEmbedder):
    """The hashing model, with queries and documents in different spaces (like E5)."""

    name = "kind-aware"

    def embed(self, texts, kind="document"):  # type: ignore[no-untyped-def]
        return super().embed([f"{kind}|{t}" for t in texts])


def test_the_provider_reads_the_served_models_own_vectors() -> None:
    model = KindAware()
    with EmbeddingsServer(model) as server:
        client = OpenAIEmbedder(
            "kind-aware",
            base_url=server.base_url,
            query_prefix="query: ",
            document_prefix="passage: ",
            batch_size=2,
        )
        texts = ["I live in Lisbon", "I love green tea", "My dog is Biscuit"]
        np.testing.assert_allclose(client.embed(texts), model.embed(texts), atol=1e-6)
        np.testing.assert_allclose(
            client.embed(["tea"], kind="query"), model.embed(["tea"], kind="query"), atol=1e-6
        )
        assert client.dim == model.dim
        assert server.served >= 4


def test_bad_requests_get_a_400_with_a_message() -> None:
    with EmbeddingsServer(HashingEmbedder()) as server:
        request = urllib.request.Request(
            server.base_url + "/embeddings", data=b'{"input": 3}', method="POST"
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=10)
        assert info.value.code == 400
        assert "input" in json.loads(info.value.read())["error"]["message"]


def test_a_single_string_input_is_one_vector() -> None:
    answer = embed_request(HashingEmbedder(), {"input": "hello"})
    assert [d["index"] for d in answer["data"]] == [0]

"""Recall's opt-in reranking step (issue 15 item 6) on both engines, against a local fake
``/rerank`` endpoint: the reranker reorders text hits when it disagrees, fact hits and
time-window hits keep their place, and a failing endpoint leaves recall's own order."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import Memory
from mnemolayer.config import RetrievalConfig
from mnemolayer.models import Hit
from mnemolayer.rerank.http import API_KEY_ENV, MODEL_ENV, HttpReranker
from mnemolayer.testing import FakeClock
from tests.fake_model_server import FakeRerankServer

#: Searches count no access, so the same store ranks the same before and after.
PLAIN = RetrievalConfig(track_access=False)
TEXTS = [
    "I drink coffee every morning before work.",
    "Coffee with oat milk is my favourite drink.",
    "I had a coffee with Anna at the harbour.",
    "The coffee machine at the office broke again.",
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRerankServer]:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.delenv(MODEL_ENV, raising=False)
    with FakeRerankServer() as s:
        yield s


def contents(hits: list[Hit]) -> list[str]:
    return [h.memory.content for h in hits]


def fill(mem: Memory, texts: list[str], clock: FakeClock) -> None:
    for t in texts:
        mem.add(t, user_id="u")
        clock.advance(minutes=1)


def test_the_reranker_reorders_text_hits(
    db_path: Path, clock: FakeClock, server: FakeRerankServer
) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, retrieval=PLAIN) as plain:
        fill(plain, TEXTS, clock)
        base = plain.search("coffee", user_id="u", limit=4)
    assert len(base) == 4 and all("reranker" not in h.scores for h in base)
    last = base[-1].memory.content
    server.favour = {w.strip(".").lower() for w in last.split()} - {"coffee", "i", "the", "a"}
    cfg = RetrievalConfig(rerank_weight=1.0, track_access=False)
    with Memory(
        db_path, embedder="hashing", clock=clock, extractor=None, retrieval=cfg,
        reranker=f"http:{server.url}",
    ) as mem:  # fmt: skip
        hits = mem.search("coffee", user_id="u", limit=4, explain=True)
    assert hits[0].memory.content == last
    assert hits[0].explanation is not None
    assert "reranker 1.000, weight 1" in hits[0].explanation["summary"]
    assert sorted(contents(hits)) == sorted(contents(base))
    assert all(0.0 <= h.scores["reranker"] <= 1.0 for h in hits)
    assert hits[0].scores["reranker"] == 1.0
    (req,) = server.requests
    assert req["body"]["query"] == "coffee" and sorted(req["body"]["texts"]) == sorted(TEXTS)


def test_weight_zero_keeps_the_order(
    db_path: Path, clock: FakeClock, server: FakeRerankServer
) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, retrieval=PLAIN) as plain:
        fill(plain, TEXTS, clock)
        base = plain.search("coffee", user_id="u", limit=4)
    server.favour = {"anna", "harbour", "office", "machine"}
    cfg = RetrievalConfig(rerank_weight=0.0, track_access=False)
    with Memory(
        db_path, embedder="hashing", clock=clock, extractor=None, retrieval=cfg,
        reranker=server.url,
    ) as mem:  # fmt: skip
        hits = mem.search("coffee", user_id="u", limit=4)
    assert contents(hits) == contents(base)


def test_rerank_top_bounds_what_is_sent(
    db_path: Path, clock: FakeClock, server: FakeRerankServer
) -> None:
    cfg = RetrievalConfig(rerank_top=2, track_access=False)
    with Memory(
        db_path, embedder="hashing", clock=clock, extractor=None, retrieval=cfg,
        reranker=server.url,
    ) as mem:  # fmt: skip
        fill(mem, TEXTS, clock)
        hits = mem.search("coffee", user_id="u", limit=4)
    assert len(server.requests[0]["body"]["texts"]) == 2
    assert sum("reranker" in h.scores for h in hits) == 2


def test_fact_hits_keep_their_place(
    db_path: Path, clock: FakeClock, server: FakeRerankServer
) -> None:
    history = [
        "I live in Porto.",
        "Porto has a lovely harbour where I walk.",
        "I walked along the river in Porto with Anna.",
        "The weather in Porto was rainy.",
    ]
    query = "Where do I live?"
    with Memory(
        db_path, embedder="hashing", clock=clock, retrieval=PLAIN
    ) as plain:  # rules extraction
        fill(plain, history, clock)
        base = plain.search(query, user_id="u", limit=4)
    assert base[0].memory.content == "I live in Porto." and len(base[0].provenance) == 2
    server.favour = {"rainy", "weather", "river", "anna"}
    cfg = RetrievalConfig(rerank_weight=1.0, track_access=False)
    with Memory(
        db_path, embedder="hashing", clock=clock, retrieval=cfg, reranker=server.url
    ) as mem:
        hits = mem.search(query, user_id="u", limit=4)
    assert hits[0].memory.content == "I live in Porto."
    assert "reranker" not in hits[0].scores
    assert hits[0].provenance == base[0].provenance
    # the text hits below it did follow the reranker
    assert hits[1].memory.content in {
        "I walked along the river in Porto with Anna.",
        "The weather in Porto was rainy.",
    }
    assert contents(hits) != contents(base)


def test_time_window_hits_keep_their_place(
    db_path: Path, clock: FakeClock, server: FakeRerankServer
) -> None:
    server.favour = {"harbour"}
    # time_min_hits high: the window boosts but filters nothing, so older hits remain
    cfg = RetrievalConfig(rerank_weight=1.0, track_access=False, time_min_hits=100)
    with Memory(
        db_path, embedder="hashing", clock=clock, extractor=None, retrieval=cfg,
        reranker=server.url,
    ) as mem:  # fmt: skip
        fill(mem, ["I drank coffee at the harbour.", "I spilled coffee on the train."], clock)
        clock.advance(days=10)
        fill(mem, TEXTS, clock)
        clock.advance(days=1)
        hits = mem.search("coffee yesterday", user_id="u", limit=6)
    inside = [h for h in hits if h.scores.get("time_window") == 1.0]
    assert len(inside) == 4 and hits[:4] == inside
    assert all("reranker" not in h.scores for h in inside)
    assert hits[4].memory.content == "I drank coffee at the harbour."
    assert hits[4].scores["reranker"] == 1.0 and hits[4].score == 1.0


def test_a_failing_endpoint_leaves_recall_order(
    db_path: Path,
    clock: FakeClock,
    server: FakeRerankServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, retrieval=PLAIN) as plain:
        fill(plain, TEXTS, clock)
        base = plain.search("coffee", user_id="u", limit=4)
    server.script = [{"delay_s": 1.0}, {"raw": "not json"}]
    slow = HttpReranker(server.url, timeout_s=0.2, max_retries=0)
    opened = Memory(
        db_path, embedder="hashing", clock=clock, extractor=None, retrieval=PLAIN, reranker=slow
    )
    with opened as mem, caplog.at_level(logging.WARNING, logger="mnemolayer.retrieval.reranking"):
        timed_out = mem.search("coffee", user_id="u", limit=4)
        malformed = mem.search("coffee", user_id="u", limit=4)
    for hits in (timed_out, malformed):
        assert contents(hits) == contents(base)
        assert all("reranker" not in h.scores for h in hits)
    assert sum("recall keeps its own order" in r.getMessage() for r in caplog.records) == 2


def test_the_cli_and_its_environment_pass_the_reranker(
    db_path: Path, clock: FakeClock, server: FakeRerankServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from mnemolayer.cli import app

    with Memory(db_path, embedder="hashing", clock=clock, extractor=None) as plain:
        fill(plain, TEXTS, clock)
    base = ["--db", str(db_path), "--embedder", "hashing", "--json"]
    search = ["search", "coffee", "--user", "u"]
    out = CliRunner().invoke(app, [*base, "--reranker", f"http:{server.url}", *search])
    assert out.exit_code == 0, out.output
    assert len(server.requests) == 1
    monkeypatch.setenv("MNEMOLAYER_RERANKER", server.url)
    out = CliRunner().invoke(app, [*base, *search])
    assert out.exit_code == 0, out.output
    assert len(server.requests) == 2
    monkeypatch.delenv("MNEMOLAYER_RERANKER")
    out = CliRunner().invoke(app, [*base, *search])
    assert out.exit_code == 0, out.output
    assert len(server.requests) == 2, "off by default"
    bad = CliRunner().invoke(app, [*base, "--reranker", "colbert:x", *search])
    assert bad.exit_code != 0 and "reranker" in bad.output


def test_server_tenants_share_the_reranker(
    new_db: Callable[[str], Any], server: FakeRerankServer
) -> None:
    pytest.importorskip("fastapi")
    from mnemolayer.server.rest.settings import ServerSettings
    from mnemolayer.server.rest.tenants import TenantPool

    settings = ServerSettings(
        db=str(new_db("m")), embedder="hashing", extractor="none", reranker=server.url
    )
    pool = TenantPool(settings)
    try:
        mem = pool.get("default")
        assert isinstance(pool.reranker, HttpReranker) and mem.reranker is pool.reranker
        fill(mem, TEXTS, FakeClock())
        mem.search("coffee", user_id="u")
        assert len(server.requests) == 1
    finally:
        pool.close()


def test_async_memory_takes_the_reranker(
    db_path: Path, clock: FakeClock, server: FakeRerankServer
) -> None:
    import anyio

    from mnemolayer import AsyncMemory

    server.favour = {"office"}
    cfg = RetrievalConfig(rerank_weight=1.0)

    async def run() -> list[Hit]:
        async with AsyncMemory(
            db_path, embedder="hashing", clock=clock, extractor=None, retrieval=cfg,
            reranker=server.url,
        ) as mem:  # fmt: skip
            for t in TEXTS:
                await mem.add(t, user_id="u")
            return await mem.search("coffee", user_id="u")

    hits = anyio.run(run)
    assert hits[0].memory.content == "The coffee machine at the office broke again."
    assert len(server.requests) == 1

"""The peer comparison (bench/peers/mem0_vs_mnemolayer.py) on tiny data, hashing embedder.

The mnemolayer side, the scoring, the report and the chart run everywhere; the Mem0 side
runs only where the optional ``peers`` extra (``mem0ai``) is installed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from io import StringIO
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rich.console import Console

from mnemolayer.cli.demo import SAMPLE
from mnemolayer.embed import HashingEmbedder
from mnemolayer.models import Message

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "peers" / "mem0_vs_mnemolayer.py"

pytestmark = pytest.mark.slow  # the whole comparison on the sample: about 15 s


@pytest.fixture(scope="module")
def peers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mem0_vs_mnemolayer", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mnemolayer_result(peers: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return peers.run(
        SAMPLE,
        systems=["mnemolayer", "mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        workdir=tmp_path_factory.mktemp("peers"),
        probe=4,
        show_progress=False,
    )


def test_render_is_what_mnemolayer_indexes(peers: ModuleType) -> None:
    from datetime import UTC, datetime

    message = Message(
        content="I went to the support group.",
        name="Caroline",
        timestamp=datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
    )
    assert (
        peers.render(message, "u") == '(8 May 2023) Caroline said, "I went to the support group."'
    )


def test_vector_table_serves_the_same_vectors(peers: ModuleType) -> None:
    model = HashingEmbedder()
    table = peers.VectorTable(model)
    assert table.fill(["a cat", "a dog", "a cat"], "document", batch_size=1) >= 0
    assert len(table) == 2 and table.misses == 0
    out = table.embed(["a dog", "a cat"], "document")
    assert out.shape == (2, model.dim)
    assert (out[1] == model.embed(["a cat"], "document")[0]).all()
    table.embed(["a bird"], "query")  # unseen: sent to the model once, then kept
    table.embed(["a bird"], "query")
    assert table.misses == 1 and len(table) == 3
    assert table.similarity_floor == model.similarity_floor


def test_mnemolayer_side_end_to_end(mnemolayer_result: dict) -> None:
    result = mnemolayer_result
    assert result["counts"]["conversations"] == 1
    assert result["counts"]["turns"] == 60 and result["counts"]["questions"] == 13
    assert result["checks"]["refused_connections"] == []
    assert result["checks"]["mem0_llm_calls"] is None
    for name in ("mnemolayer", "mnemolayer-vector"):
        report = result["systems"][name]
        assert report["add"]["records"] == 60 and report["add"]["calls"] == 4
        assert (
            report["add"]["ms_per_record"] >= report["add"]["ms_per_record_excluding_embedder"] >= 0
        )
        assert report["search"]["queries"] == 13
        p50 = report["search"]["ms"]["p50"]
        assert p50 > 0 and p50 >= report["search"]["ms_excluding_embedder"]["p50"]
        overall = report["metrics"]["overall"]
        assert overall["questions"] == 12  # one adversarial question is reported apart
        assert 0 <= overall["recall@5"] <= overall["recall@10"] <= 1
        assert report["store_bytes"] > 0
        assert len(result["details"][name]) == 13
    # The default (with facts) finds something; both are scored on the same questions.
    assert result["systems"]["mnemolayer"]["metrics"]["overall"]["recall@10"] > 0
    questions = [[d["index"] for d in result["details"][n]] for n in result["config"]["systems"]]
    assert questions[0] == questions[1]
    # No comparison without the Mem0 baseline; the probe timed the model both ways.
    assert result["comparison"] == {}
    assert result["embedding"]["probe"]["texts"] == 4
    json.dumps(result)  # JSON-ready


def test_every_turn_and_question_came_from_the_shared_table(peers: ModuleType) -> None:
    # Without facts, mnemolayer embeds exactly the rendered turns and the stripped
    # questions: the only misses are the warm-up's text and query.
    result = peers.run(
        SAMPLE,
        systems=["mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        probe=0,
        show_progress=False,
    )
    assert result["checks"]["vector_table"]["misses"] == 2


def _fake_report(p50: float, recall5: float) -> dict[str, Any]:
    return {
        "label": "x",
        "add": {"ms_per_record": 1.0, "ms_per_record_excluding_embedder": 0.5},
        "search": {"ms": {"p50": p50, "p95": 2 * p50}, "ms_excluding_embedder": {"p50": p50}},
        "metrics": {"overall": {"recall@5": recall5, "recall@10": recall5 + 0.1}},
    }


def test_compare_applies_the_bar(peers: ModuleType) -> None:
    systems = {
        "mem0": _fake_report(20.0, 0.5),
        "mnemolayer": _fake_report(2.0, 0.5),
        "mnemolayer-vector": _fake_report(2.0, 0.49),
        "mnemolayer-raw": _fake_report(5.0, 0.9),
    }
    out = peers.compare(systems)
    assert out["baseline"] == "mem0"
    rows = out["systems"]
    assert rows["mnemolayer"]["search_p50_speedup"] == pytest.approx(10.0)
    assert rows["mnemolayer"]["bar_met"] is True  # 10x, recall equal
    assert rows["mnemolayer-vector"]["bar_met"] is False  # recall@5 lower
    assert rows["mnemolayer-raw"]["bar_met"] is False  # only 4x
    assert peers.SPEEDUP_BAR == 10.0  # the bar
    six_times = peers.compare(
        {"mem0": _fake_report(12.0, 0.5), "mnemolayer": systems["mnemolayer"]}
    )
    assert six_times["systems"]["mnemolayer"]["bar_met"] is False  # 6x: under the bar
    assert rows["mnemolayer-raw"]["recall@5_delta"] == pytest.approx(0.4)
    assert peers.compare({"mnemolayer": systems["mnemolayer"]}) == {}


@pytest.fixture(scope="module")
def sample_conversations(peers: ModuleType) -> list:
    from bench.locomo import load_conversations

    conversations, _counts = peers.load_locomo(load_conversations(SAMPLE))
    return conversations


def test_synthetic_users(peers: ModuleType, sample_conversations: list) -> None:
    # Needs no Mem0: the users both systems get at a size beyond the real conversations.
    (real,) = sample_conversations
    users = peers.synthetic_users(sample_conversations, 40, seed=3, sessions=(2, 3))
    assert len(users) == 40 and users[0] is real  # the real conversation first, whole
    assert len({u.sample_id for u in users}) == 40
    numbers = [n for n, _ in real.sessions]
    for k, user in enumerate(users[1:], start=1):
        assert user.sample_id == f"{real.sample_id}#{k}"
        kept = [n for n, _ in user.sessions]
        assert 2 <= len(kept) <= 3
        start = numbers.index(kept[0])
        assert kept == numbers[start : start + len(kept)]  # consecutive sessions
        assert dict(user.sessions) == {n: dict(real.sessions)[n] for n in kept}  # same turns
        assert user.end == max(t.message.timestamp for _, ts in user.sessions for t in ts)
        assert all(q in real.questions for q in user.questions)
        for q in user.questions:
            assert {int(g[1:].split(":")[0]) for g in q["gold"]} <= set(kept)
        # Every question of the source whose evidence is in the kept sessions is kept.
        inside = [
            q for q in real.questions if all(int(g[1:].split(":")[0]) in kept for g in q["gold"])
        ]
        assert user.questions == inside
    assert sum(len(u.questions) for u in users[1:]) > 0
    # Deterministic, and user k is the same user at every size.
    again = peers.synthetic_users(sample_conversations, 40, seed=3, sessions=(2, 3))
    assert [(u.sample_id, u.sessions, u.questions) for u in again] == [
        (u.sample_id, u.sessions, u.questions) for u in users
    ]
    smaller = peers.synthetic_users(sample_conversations, 10, seed=3, sessions=(2, 3))
    assert [u.sessions for u in smaller] == [u.sessions for u in users[:10]]
    other = peers.synthetic_users(sample_conversations, 40, seed=4, sessions=(2, 3))
    assert [u.sessions for u in other] != [u.sessions for u in users]
    assert peers.synthetic_users(sample_conversations, 1) == [real]
    for bad in ({"users": 0}, {"users": 5, "sessions": (3, 2)}, {"users": 5, "sessions": (0, 2)}):
        with pytest.raises(ValueError):
            peers.synthetic_users(sample_conversations, **{"users": 5, **bad})


def test_sample_questions(peers: ModuleType, sample_conversations: list) -> None:
    users = peers.synthetic_users(sample_conversations, 30, seed=0)
    total = sum(len(u.questions) for u in users)
    drawn = peers.sample_questions(users, 17, seed=0)
    assert sum(len(u.questions) for u in drawn) == 17 < total
    assert [u.sample_id for u in drawn] == [u.sample_id for u in users]  # all still ingested
    for before, after in zip(users, drawn, strict=True):
        assert after.sessions == before.sessions
        assert after.questions == [q for q in before.questions if q in after.questions]
    again = peers.sample_questions(users, 17, seed=0)
    assert [u.questions for u in again] == [u.questions for u in drawn]
    assert peers.sample_questions(users, total + 5) == users


@pytest.fixture(scope="module")
def sizes_result(peers: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return peers.run_sizes(
        SAMPLE,
        [1, 12],
        systems=["mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        workdir=tmp_path_factory.mktemp("sizes"),
        probe=2,
        size_questions=9,
        show_progress=False,
    )


def test_several_sizes_in_one_run(peers: ModuleType, sizes_result: dict, tmp_path: Path) -> None:
    one, twelve = peers.sizes_of(sizes_result)
    assert sizes_result["config"]["users"] == [1, 12]
    assert sizes_result["config"]["speedup_bar"] == 10.0
    assert one["counts"]["conversations"] == 1 and one["counts"]["synthetic_users"] == 0
    assert one["counts"]["questions"] == 13  # the real conversation alone: all its questions
    assert twelve["counts"]["conversations"] == 12 and twelve["counts"]["synthetic_users"] == 11
    assert twelve["counts"]["questions"] == 9 < twelve["counts"]["eligible_questions"]
    assert one["counts"]["turns"] < twelve["counts"]["turns"]
    assert twelve["systems"]["mnemolayer-vector"]["add"]["records"] == twelve["counts"]["turns"]
    assert twelve["config"]["user_sessions"] == [2, 4] and one["config"]["user_sessions"] is None
    assert one["embedding"]["probe"]["texts"] == 2 and twelve["embedding"]["probe"] == {}
    # The copies' texts are the originals': only the warm-up misses the table.
    assert twelve["checks"]["vector_table"]["misses"] == 2
    assert all(len(s["config"]["loadavg_1min"]) == 2 for s in (one, twelve))
    assert sizes_result["ratios"] == []  # no Mem0 baseline
    json.dumps(sizes_result)
    console = Console(file=StringIO(), width=160)
    peers.print_summary(sizes_result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "12 users" in text and "1 users" in text
    with pytest.raises(ValueError, match="sizes"):
        peers.run_sizes(SAMPLE, [3, 3], embedder="hashing")


def test_ratio_at_each_size_and_chart(
    peers: ModuleType, sizes_result: dict, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    sizes = []
    for size, mem0_p50 in zip(peers.sizes_of(sizes_result), (40.0, 400.0), strict=True):
        systems = {"mem0": _fake_report(mem0_p50, 0.1), **size["systems"]}
        sizes.append({**size, "systems": systems, "comparison": peers.compare(systems)})
    result = {**sizes_result, "sizes": sizes}
    rows = peers.ratio_rows(result)
    assert [(r["users"], r["system"]) for r in rows] == [
        (1, "mnemolayer-vector"),
        (12, "mnemolayer-vector"),
    ]
    for row, size in zip(rows, sizes, strict=True):
        p50 = size["systems"]["mnemolayer-vector"]["search"]["ms"]["p50"]
        assert row["search_p50_speedup"] == pytest.approx(row["baseline_p50_ms"] / p50)
        assert row["bar_met"] == (row["search_p50_speedup"] >= 10.0)
    console = Console(file=StringIO(), width=200)
    peers.print_summary(result, console)
    assert "speed-up vs Mem0 at each size" in console.file.getvalue()  # type: ignore[attr-defined]
    png = peers.plot(result, tmp_path / "sizes.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_table_and_plot(peers: ModuleType, mnemolayer_result: dict, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    result = {**mnemolayer_result, "systems": dict(mnemolayer_result["systems"])}
    result["systems"] = {"mem0": _fake_report(50.0, 0.1), **result["systems"]}
    result["comparison"] = peers.compare(result["systems"])
    rows = peers.summary_rows(result)
    assert [r["system"] for r in rows] == ["mem0", "mnemolayer", "mnemolayer-vector"]
    assert rows[0]["speedup_p50"] is None and rows[1]["speedup_p50"] > 0
    console = Console(file=StringIO(), width=160)
    peers.print_summary(result, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "mnemolayer-vector" in text and "recall@5" in text and "Mem0 LLM calls" in text
    png = peers.plot(result, tmp_path / "charts" / "peers.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_command_line(peers: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    status = peers.main(
        [
            "--data", str(SAMPLE), "--systems", "mnemolayer-vector", "--embedder", "hashing",
            "--no-cache", "--probe", "0", "--max-questions", "5", "--no-progress",
            "--no-plot", "--no-details", "--out", str(out),
        ]
    )  # fmt: skip
    assert status == 0
    saved = json.loads(out.read_text("utf-8"))
    assert saved["counts"]["questions"] == 5 and "details" not in saved
    assert saved["config"]["command"].startswith("python bench/peers/mem0_vs_mnemolayer.py")
    assert peers.main(["--from-json", str(out), "--no-plot"]) == 0  # reprints, runs nothing
    with pytest.raises(ValueError, match="systems"):
        peers.run(SAMPLE, systems=["mnemolayer", "mnemolayer"], embedder="hashing")
    sized = tmp_path / "sizes.json"
    status = peers.main(
        [
            "--data", str(SAMPLE), "--systems", "mnemolayer-vector", "--embedder", "hashing",
            "--no-cache", "--probe", "0", "--users", "1", "--users", "7", "--questions", "4",
            "--user-sessions", "1-2", "--no-progress", "--no-plot", "--no-details",
            "--out", str(sized),
        ]
    )  # fmt: skip
    assert status == 0
    saved = json.loads(sized.read_text("utf-8"))
    assert [s["counts"]["conversations"] for s in saved["sizes"]] == [1, 7]
    assert saved["sizes"][1]["counts"]["questions"] == 4
    assert saved["sizes"][1]["config"]["user_sessions"] == [1, 2]
    assert all("details" not in s for s in saved["sizes"])
    assert "--users 7" in saved["config"]["command"]
    assert peers.main(["--from-json", str(sized), "--no-plot"]) == 0


def test_mem0_side(peers: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0-home"))
    pytest.importorskip("mem0")
    result = peers.run(
        SAMPLE,
        systems=["mem0", "mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        workdir=tmp_path / "work",
        probe=0,
        show_progress=False,
    )
    checks = result["checks"]
    assert checks["mem0_llm_calls"] == 0 and checks["refused_connections"] == []
    # Mem0 embedded the same rendered turns and questions: only the warm-up missed.
    assert checks["vector_table"]["misses"] == 2
    mem0 = result["systems"]["mem0"]
    assert mem0["add"]["records"] == 60 and mem0["search"]["queries"] == 13
    assert mem0["embedder"]["texts"]["document"] == 61  # 60 turns + the warm-up
    known = {f"D{s}:{t}" for s in range(1, 5) for t in range(1, 40)}
    for detail in result["details"]["mem0"]:
        assert set(detail["ranked"]) <= known and len(detail["ranked"]) <= 10
    assert "mnemolayer-vector" in result["comparison"]["systems"]


def test_mem0_side_at_several_sizes(
    peers: ModuleType,
    sample_conversations: list,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    users = sample_conversations
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.setenv("MEM0_DIR", str(tmp_path / "mem0-home"))
    pytest.importorskip("mem0")
    result = peers.run_sizes(
        SAMPLE,
        [1, 6],
        systems=["mem0", "mnemolayer-vector"],
        embedder="hashing",
        cache=False,
        workdir=tmp_path / "work",
        probe=0,
        size_questions=8,
        show_progress=False,
    )
    one, six = peers.sizes_of(result)
    for size in (one, six):
        checks = size["checks"]
        assert checks["mem0_llm_calls"] == 0 and checks["refused_connections"] == []
        assert checks["vector_table"]["misses"] == 2  # the copies' texts are in the table
        mem0 = size["systems"]["mem0"]
        assert mem0["add"]["records"] == size["counts"]["turns"]
        assert mem0["search"]["queries"] == size["counts"]["questions"]
    # Mem0's hits belong to the user asked: every hit lies in that user's kept sessions.
    kept = {u.sample_id: {n for n, _ in u.sessions} for u in peers.synthetic_users(users, 6)}
    for detail in six["details"]["mem0"]:
        sessions = {int(d[1:].split(":")[0]) for d in detail["ranked"]}
        assert sessions <= kept[detail["conversation"]]
    assert six["counts"]["questions"] == 8
    assert [(r["users"], r["system"]) for r in result["ratios"]] == [
        (1, "mnemolayer-vector"),
        (6, "mnemolayer-vector"),
    ]
    assert all(isinstance(r["bar_met"], bool) for r in result["ratios"])

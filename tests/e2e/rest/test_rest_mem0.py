"""The Mem0-compatible routes, driven by the real mem0ai ``MemoryClient`` against a
``mnemolayer serve`` subprocess on loopback; and a Mem0 export made by mem0's own
``Memory`` (its OSS store: local Qdrant, SQLite history), imported with ``mnemolayer
import-mem0`` and read back by its Mem0 ids.

mem0 reads ``MEM0_TELEMETRY`` and ``MEM0_DIR`` when it is imported: they are set here
first, so the client sends no PostHog events and writes its config under a temporary
directory, not ``~/.mem0``; a test checks telemetry is off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_server import Server

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-home-"))

mem0 = pytest.importorskip("mem0")
from mem0 import MemoryClient  # noqa: E402
from mem0.exceptions import MemoryNotFoundError  # noqa: E402
from mem0.exceptions import ValidationError as Mem0ValidationError  # noqa: E402


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[MemoryClient]:
    made = MemoryClient(api_key=server.keys["acme"], host=f"{server.url}/mem0")
    yield made
    made.client.close()


def test_the_client_sends_no_telemetry() -> None:
    from mem0.memory import telemetry

    assert telemetry.MEM0_TELEMETRY is False
    assert telemetry.client_telemetry.posthog is None


def test_round_trip_add_search_get_update_history_delete(client: MemoryClient) -> None:
    added = client.add(
        [{"role": "user", "content": "I live in Lisbon and I love green tea."}],
        user_id="ana",
        metadata={"topic": "intro"},
    )
    messages = [r for r in added["results"] if r["memory"].startswith("I live")]
    assert len(messages) == 1 and messages[0]["event"] == "ADD"
    facts = [r for r in added["results"] if r not in messages]
    assert facts, "infer=True lists the facts the rules drew from the message"
    memory_id = messages[0]["id"]

    found = client.search("where does ana live?", filters={"user_id": "ana"}, top_k=5)
    assert found["results"], found
    top = found["results"][0]
    assert 0.0 <= top["score"] <= 1.0
    assert memory_id in {r["id"] for r in found["results"]}

    got = client.get(memory_id)
    assert got["memory"] == "I live in Lisbon and I love green tea."
    assert got["user_id"] == "ana" and got["metadata"] == {"topic": "intro"}
    assert len(got["hash"]) == 32 and got["created_at"] and got["updated_at"]

    updated = client.update(memory_id, text="I live in Porto now.", metadata={"mood": "glad"})
    assert updated["message"] == "Memory updated successfully!"
    again = client.get(memory_id)
    assert again["memory"] == "I live in Porto now."
    assert again["metadata"] == {"topic": "intro", "mood": "glad"}

    events = client.history(memory_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert events[1]["old_memory"] == "I live in Lisbon and I love green tea."
    assert events[1]["new_memory"] == "I live in Porto now."

    assert client.delete(memory_id) == {"message": "Memory deleted successfully!"}
    with pytest.raises(MemoryNotFoundError):
        client.get(memory_id)
    assert [e["event"] for e in client.history(memory_id)][-1] == "DELETE"


def test_infer_false_answers_the_messages_only(client: MemoryClient) -> None:
    added = client.add("My sister Maria lives in Rome.", user_id="infer-off", infer=False)
    assert [r["memory"] for r in added["results"]] == ["My sister Maria lives in Rome."]


def test_get_all_is_scoped_by_user_agent_and_run(client: MemoryClient) -> None:
    client.add("I play the cello.", user_id="bea", infer=False)
    client.add("I climb on Sundays.", user_id="bea", agent_id="coach", run_id="r1", infer=False)
    client.add("I collect stamps.", user_id="carl", infer=False)
    bea = client.get_all(filters={"user_id": "bea"})
    assert bea["count"] == 2 and {r["memory"] for r in bea["results"]} == {
        "I play the cello.",
        "I climb on Sundays.",
    }
    coach = client.get_all(filters={"AND": [{"user_id": "bea"}, {"agent_id": "coach"}]})
    assert [(r["memory"], r["agent_id"], r["run_id"]) for r in coach["results"]] == [
        ("I climb on Sundays.", "coach", "r1")
    ]
    carl = client.get_all(filters={"user_id": "carl"}, page=1, page_size=1)
    assert [r["memory"] for r in carl["results"]] == ["I collect stamps."]
    assert carl["next"] is None and carl["previous"] is None
    found = client.search("cello", filters={"user_id": "carl"})
    assert all(r["user_id"] == "carl" for r in found["results"])


def test_metadata_filters_and_paging(client: MemoryClient) -> None:
    for i in range(3):
        client.add(f"Note number {i} about jazz.", user_id="dan", metadata={"n": i}, infer=False)
    page = client.get_all(filters={"user_id": "dan", "n": {"gte": 1}}, page=1, page_size=1)
    assert page["count"] == 2 and len(page["results"]) == 1
    assert page["next"] is not None and page["previous"] is None
    second = client.get_all(filters={"user_id": "dan", "n": {"gte": 1}}, page=2, page_size=1)
    assert second["previous"] is not None and second["next"] is None
    assert second["results"][0]["id"] != page["results"][0]["id"]
    assert {page["results"][0]["metadata"]["n"], second["results"][0]["metadata"]["n"]} == {1, 2}
    only = client.search("jazz", filters={"AND": [{"user_id": "dan"}, {"metadata": {"n": 0}}]})
    assert [r["metadata"]["n"] for r in only["results"]] == [0]


def test_bad_input_is_an_error_naming_the_field(server: Server, client: MemoryClient) -> None:
    with pytest.raises(Mem0ValidationError, match="user_id"):
        client.search("tea", filters={"agent_id": "x"})
    with pytest.raises(Mem0ValidationError, match="custom_instructions"):
        client.add("hello", user_id="ana", custom_instructions="be brief")
    raw = httpx.post(
        f"{server.url}/mem0/v3/memories/search/",
        json={"query": "tea", "filters": {"OR": [{"user_id": "a"}, {"user_id": "b"}]}},
        headers={"Authorization": f"Token {server.keys['acme']}"},
    )
    assert raw.status_code == 422
    body = raw.json()
    assert body["error"]["field"] == "filters.OR[0].user_id"
    assert body["detail"] == f"filters.OR[0].user_id: {body['error']['message']}"


def test_a_wrong_key_is_refused_as_the_client_raises_it(server: Server) -> None:
    with pytest.raises(ValueError, match="invalid or revoked API key"):
        MemoryClient(api_key="msk_0123456789abcdef_" + "x" * 43, host=f"{server.url}/mem0")
    r = httpx.get(f"{server.url}/mem0/v1/ping/")
    assert r.status_code == 401 and "Token" in r.json()["detail"]


def test_another_tenant_and_a_bound_key_reach_nothing(server: Server, client: MemoryClient) -> None:
    mine = client.add("I keep bees.", user_id="erin", infer=False)["results"][0]["id"]
    globex = MemoryClient(api_key=server.keys["globex"], host=f"{server.url}/mem0")
    alice_only = MemoryClient(api_key=server.keys["acme_alice"], host=f"{server.url}/mem0")
    try:
        with pytest.raises(MemoryNotFoundError):
            globex.get(mine)
        assert globex.get_all(filters={"user_id": "erin"})["count"] == 0
        r = alice_only.client.get(f"/v1/memories/{mine}/")
        assert r.status_code == 403
        assert r.json()["error"]["field"] == "user_id"
    finally:
        globex.client.close()
        alice_only.client.close()


# -- an export made by mem0 itself --------------------------------------------------------


def _mem0_export(tmp: Path) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Memories and their history written and read by mem0's own OSS ``Memory``: infer
    off (no LLM is called), a local Qdrant, an embedder that answers offline."""
    import hashlib

    from mem0 import Memory as Mem0Memory

    unused = {"api_key": "unused", "openai_base_url": "http://127.0.0.1:9/v1"}
    m = Mem0Memory.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {"path": str(tmp / "qdrant"), "on_disk": True,
                           "embedding_model_dims": 8, "collection_name": "export"},
            },
            "llm": {"provider": "openai", "config": unused},
            "embedder": {"provider": "openai", "config": {**unused, "embedding_dims": 8}},
            "history_db_path": str(tmp / "history.db"),
        }
    )  # fmt: skip

    class OfflineEmbedder:
        config = m.embedding_model.config

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            digest = hashlib.sha256(text.encode()).digest()
            return [b / 255 for b in digest[:8]]

    m.embedding_model = OfflineEmbedder()
    # mem0's sentinel for "BM25 tried and unavailable": fastembed would otherwise try to
    # download its model (refused by the network guard, after 40 s of retries).
    m.vector_store._bm25_encoder = False
    first = m.add(
        [{"role": "user", "content": "I am vegetarian"}],
        user_id="fay", infer=False, metadata={"topic": "food"},
    )["results"][0]["id"]  # fmt: skip
    m.add("I run marathons", user_id="fay", agent_id="coach", run_id="week-1", infer=False)
    gone = m.add("I smoke", user_id="fay", infer=False)["results"][0]["id"]
    m.update(first, text="I am vegan")
    m.delete(gone)
    export = m.get_all(filters={"user_id": "fay"})
    history = {first: m.history(first)}
    m.close()
    return export, history


def test_a_mem0_export_is_imported_and_read_by_its_mem0_ids(
    server: Server, client: MemoryClient, tmp_path: Path
) -> None:
    export, history = _mem0_export(tmp_path)
    assert len(export["results"]) == 2
    (tmp_path / "export.json").write_text(json.dumps(export), encoding="utf-8")
    (tmp_path / "history.json").write_text(json.dumps(history), encoding="utf-8")
    assert server.data_dir is not None
    store = server.data_dir / "tenants" / "acme" / "memory.db"
    command = [
        sys.executable, "-m", "mnemolayer", "--db", str(store), "--embedder", "hashing",
        "--json", "import-mem0", str(tmp_path / "export.json"),
        "--history", str(tmp_path / "history.json"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "imported": 2, "skipped": 0, "history_imported": 2, "errors": []
    }  # fmt: skip

    for item in export["results"]:
        got = client.get(item["id"])
        assert got["memory"] == item["memory"] and got["user_id"] == "fay"
        assert got["agent_id"] == item.get("agent_id")
        assert got["run_id"] == item.get("run_id")
        assert got["metadata"] == item["metadata"]
        assert got["hash"] == item["hash"]
        assert got["created_at"] == item["created_at"]
        assert got["updated_at"] == item["updated_at"]
    vegan = next(i for i in export["results"] if i["memory"] == "I am vegan")
    trail = client.history(vegan["id"])
    assert [(e["event"], e["old_memory"], e["new_memory"]) for e in trail] == [
        ("ADD", None, "I am vegetarian"),
        ("UPDATE", "I am vegetarian", "I am vegan"),
    ]
    listed = client.get_all(filters={"user_id": "fay"})
    assert {r["id"] for r in listed["results"]} == {i["id"] for i in export["results"]}

    again = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["imported"] == 0
    assert json.loads(again.stdout)["skipped"] == 2
    assert client.get_all(filters={"user_id": "fay"})["count"] == 2

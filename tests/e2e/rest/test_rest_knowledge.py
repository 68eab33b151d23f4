"""Semantic memory (facts, entities, neighbours, profile, feedback), context assembly and
procedural memory (outcomes, strategies, insights) on a real server with the rules
extractor. Each test uses its own user."""

from __future__ import annotations

import httpx
import pytest
from rest_server import Server


@pytest.fixture(scope="module")
def api(server: Server) -> httpx.Client:
    return server.as_("acme")


def say(api: httpx.Client, user: str, text: str, when: str) -> str:
    r = api.post(f"/v1/users/{user}/memories", json={"content": text, "timestamp": when})
    assert r.status_code == 201, r.text
    mid: str = r.json()["items"][0]["id"]
    return mid


def test_facts_now_as_of_and_with_history(api: httpx.Client) -> None:
    say(api, "k-facts", "I live in Lisbon.", "2023-01-10T09:00:00Z")
    say(api, "k-facts", "I moved to Porto.", "2024-02-01T09:00:00Z")
    now = api.get("/v1/users/k-facts/facts", params={"predicate": "lives_in"}).json()["facts"]
    assert [(f["object"], f["current"]) for f in now] == [("Porto", True)]
    then = api.get("/v1/users/k-facts/facts", params={"as_of": "2023-06-01T00:00:00Z"})
    assert [f["object"] for f in then.json()["facts"] if f["predicate"] == "lives_in"] == ["Lisbon"]
    every = api.get("/v1/users/k-facts/facts", params={"include_history": True}).json()["facts"]
    lisbon = next(f for f in every if f["object"] == "Lisbon")
    assert lisbon["current"] is False and lisbon["valid_to"] is not None
    bad = api.get("/v1/users/k-facts/facts", params={"predicate": "teleports_to"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "predicate"


def test_entities_neighbors_and_profile(api: httpx.Client) -> None:
    say(api, "k-graph", "My sister Maria lives in Rome.", "2024-03-01T12:00:00Z")
    say(api, "k-graph", "My name is Lena.", "2024-03-01T12:01:00Z")
    names = {e["name"] for e in api.get("/v1/users/k-graph/entities").json()["entities"]}
    assert {"Maria", "Rome"} <= names
    one = api.get("/v1/users/k-graph/entities/user/neighbors").json()
    assert "Maria" in {n["entity"]["name"] for n in one["neighbors"]}
    two = api.get("/v1/users/k-graph/entities/user/neighbors", params={"depth": 2}).json()
    assert "Rome" in {n["entity"]["name"] for n in two["neighbors"]} and two["facts"]
    missing = api.get("/v1/users/k-graph/entities/Nobody/neighbors")
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "name"
    too_deep = api.get("/v1/users/k-graph/entities/user/neighbors", params={"depth": 9})
    assert too_deep.status_code == 422 and too_deep.json()["error"]["field"] == "depth"
    profile = api.get("/v1/users/k-graph/profile").json()
    assert profile["name"] == "Lena" and profile["relationships"]
    maria = api.get("/v1/users/k-graph/profile", params={"subject": "Maria"}).json()
    assert maria["subject"] == "Maria" and maria["identity"].get("lives_in") == "Rome"


def test_feedback_becomes_a_preference(api: httpx.Client) -> None:
    r = api.post(
        "/v1/users/k-fb/feedback", json={"action": "jazz playlist", "feedback": "positive"}
    )
    assert r.status_code == 201, r.text
    assert [(f["predicate"], f["object"]) for f in r.json()["facts"]] == [
        ("likes", "jazz playlist")
    ]
    blank = api.post("/v1/users/k-fb/feedback", json={"action": "x", "feedback": "  "})
    assert blank.status_code == 422 and blank.json()["error"]["field"] == "feedback"


def test_context_within_budget_with_sections_and_recent_turns(api: httpx.Client) -> None:
    say(api, "k-ctx", "I live in Lisbon.", "2024-01-05T10:00:00Z")
    say(api, "k-ctx", "We adopted a cat called Miso last spring.", "2024-01-06T10:00:00Z")
    body = {
        "query": "what pet do I have?",
        "budget_tokens": 200,
        "recent": [{"role": "user", "content": "tell me about my pets", "time": None}],
    }
    ctx = api.post("/v1/users/k-ctx/context", json=body).json()
    assert ctx["tokens"] <= 200 and "Miso" in ctx["text"]
    assert [s["name"] for s in ctx["sections"]] == [
        "profile", "facts", "episodes", "strategies", "recent",
    ]  # fmt: skip
    as_json = api.post(
        "/v1/users/k-ctx/context",
        json={"query": "where do I live?", "format": "json", "sections": ["profile"]},
    ).json()
    assert as_json["format"] == "json" and "Lisbon" in as_json["text"]
    bad = api.post("/v1/users/k-ctx/context", json={"query": "x", "sections": ["gossip"]})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "sections[0]"
    enc = api.post("/v1/users/k-ctx/context", json={"query": "x", "encoding": "nope-9"})
    assert enc.status_code == 422 and enc.json()["error"]["field"] == "encoding"


def test_context_uses_the_saved_window_as_recent_turns(api: httpx.Client) -> None:
    w = "/v1/users/k-ctxw/sessions/chat/window/messages"
    assert api.post(w, json={"role": "user", "content": "planning a trip to Kyoto"}).is_success
    ctx = api.post("/v1/users/k-ctxw/context", json={"query": "trip", "session_id": "chat"}).json()
    recent = next(s for s in ctx["sections"] if s["name"] == "recent")
    assert [i["text"] for i in recent["items"]] == ["planning a trip to Kyoto"]


def test_outcomes_strategies_and_insights(api: httpx.Client) -> None:
    task = "deploy the web app"
    for i in range(5):
        body = {"task": task, "strategy": "docker compose", "success": True}
        r = api.post(
            "/v1/users/k-proc/outcomes", json={**body, "timestamp": f"2024-04-0{i + 1}T10:00:00Z"}
        )
        assert r.status_code == 201 and r.json()["kind"] == "procedural"
    for i in range(2):
        api.post(
            "/v1/users/k-proc/outcomes",
            json={"task": task, "strategy": "manual scp", "success": False, "detail": f"t{i}"},
        )
    again = api.post(
        "/v1/users/k-proc/outcomes",
        json={"task": task, "strategy": "rsync", "success": True, "outcome_id": "o-1"},
    ).json()
    same = api.post(
        "/v1/users/k-proc/outcomes",
        json={"task": task, "strategy": "rsync", "success": True, "outcome_id": "o-1"},
    ).json()
    assert same["id"] == again["id"]
    outcomes = api.get("/v1/users/k-proc/outcomes").json()["outcomes"]
    assert len(outcomes) == 8
    strategies = api.get("/v1/users/k-proc/strategies", params={"task": task}).json()
    best = strategies["strategies"][0]
    assert (best["key"], best["successes"], best["failures"]) == ("docker compose", 5, 0)
    insights = api.get("/v1/users/k-proc/insights").json()["insights"]
    assert [(i["kind"], i["key"]) for i in insights] == [
        ("reliable", "docker compose"),
        ("recurring_failure", "manual scp"),
    ]
    not_bool = api.post(
        "/v1/users/k-proc/outcomes", json={"task": task, "strategy": "x", "success": "yes"}
    )
    assert not_bool.status_code == 422 and not_bool.json()["error"]["field"] == "success"
    reserved = api.post(
        "/v1/users/k-proc/outcomes",
        json={"task": task, "strategy": "x", "success": True, "metadata": {"task": "y"}},
    )
    assert reserved.status_code == 422 and reserved.json()["error"]["field"] == "metadata.task"

"""Working-memory windows on a real server: add turns, read, pin, unpin, clear, and
compaction into episodic memory when a window overflows its budget."""

from __future__ import annotations

import httpx
import pytest
from rest_server import Server


@pytest.fixture(scope="module")
def api(server: Server) -> httpx.Client:
    return server.as_("acme")


def turn(api: httpx.Client, url: str, content: str, **extra: object) -> dict[str, object]:
    r = api.post(url + "/messages", json={"role": "user", "content": content, **extra})
    assert r.status_code == 201, r.text
    body: dict[str, object] = r.json()
    return body


def test_a_window_starts_empty_and_keeps_its_turns(api: httpx.Client) -> None:
    url = "/v1/users/w-basic/sessions/s1/window"
    empty = api.get(url).json()
    assert empty["window"] == [] and empty["budget_tokens"] == 4000 and empty["tokens"] == 0
    first = turn(api, url, "Hi, I'm planning a trip")
    turn(api, url, "to Japan in April", timestamp="2024-03-01T10:00:00Z")
    window = api.get(url).json()
    assert [m["content"] for m in window["window"]] == [
        "Hi, I'm planning a trip",
        "to Japan in April",
    ]
    assert window["messages"][1] == {"role": "user", "content": "to Japan in April"}
    assert window["tokens"] > 0 and first["message"]["id"] == window["window"][0]["id"]  # type: ignore[index]
    # Agents have windows of their own.
    assert api.get(url, params={"agent_id": "planner"}).json()["window"] == []


def test_overflow_compacts_into_episodic_memory_and_keeps_pins(api: httpx.Client) -> None:
    url = "/v1/users/w-compact/sessions/s1/window"
    pinned = turn(api, url, "Always answer in French.", budget_tokens=120)
    pin_id = pinned["message"]["id"]  # type: ignore[index]
    assert api.put(f"{url}/messages/{pin_id}/pin").json()["message"]["pinned"] is True
    for i in range(12):
        turn(api, url, f"Turn {i}: the weather in town number {i} was mild and sunny today.")
    window = api.get(url).json()
    assert window["budget_tokens"] == 120  # kept as saved, not reset to the default
    assert window["tokens"] <= 120 and window["evicted_count"] > 0 and window["summary"]
    assert window["window"][0]["id"] == pin_id and window["window"][0]["pinned"]
    archived = api.get("/v1/users/w-compact/memories", params={"session_id": "s1"}).json()
    assert any("Turn 0" in m["content"] for m in archived["items"])
    unpinned = api.delete(f"{url}/messages/{pin_id}/pin")
    assert unpinned.status_code == 200 and unpinned.json()["message"]["pinned"] is False


def test_pin_unknown_message_is_404_and_clear_archives(api: httpx.Client) -> None:
    url = "/v1/users/w-clear/sessions/s1/window"
    turn(api, url, "Remember that my locker is 112")
    missing = api.put(f"{url}/messages/{'0' * 32}/pin")
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "message_id"
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["window"] == []
    memories = api.get("/v1/users/w-clear/memories").json()["items"]
    assert [m["content"] for m in memories] == ["Remember that my locker is 112"]


def test_bad_turns_name_the_field(api: httpx.Client) -> None:
    url = "/v1/users/w-bad/sessions/s1/window/messages"
    cases = [
        ({"role": "narrator", "content": "x"}, "role"),
        ({"role": "user", "content": "   "}, "content"),
        ({"role": "user", "content": "x", "budget_tokens": 10}, "budget_tokens"),
        ({"role": "user", "content": "x", "pin": "maybe"}, "pin"),
    ]
    for body, field in cases:
        r = api.post(url, json=body)
        assert r.status_code == 422 and r.json()["error"]["field"] == field, (body, r.text)


def test_sessions_are_listed_and_ending_one_stores_its_summary(api: httpx.Client) -> None:
    base = "/v1/users/w-end/sessions"
    turn(api, base + "/s1/window", "My badge number is 4471 and I start on May 3.")
    turn(api, base + "/s2/window", "Just saying hello.")
    listed = api.get(base).json()["items"]
    assert {i["session_id"] for i in listed} == {"s1", "s2"} and listed[0]["messages"] == 1
    r = api.post(base + "/s1/end", params={"summary_tokens": 64})
    assert r.status_code == 200, r.text
    end = r.json()
    assert end["archived"] == 1 and end["window_closed"] is True and end["turns"] == 1
    assert "4471" in end["summary"]["content"] and end["summary"]["role"] == "system"
    assert [i["session_id"] for i in api.get(base).json()["items"]] == ["s2"]
    again = api.post(base + "/s1/end").json()
    assert again["summary"] is None and again["archived"] == again["turns"] == 0
    bad = api.post(base + "/s1/end", params={"summary_tokens": 3})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "summary_tokens"

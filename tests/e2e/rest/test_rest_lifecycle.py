"""The lifecycle routes on a real server: explain, pin and unpin, archive and restore,
search with explanations, add pinned, and a maintenance pass for one user. Each test
uses its own user."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from rest_server import Server

from mnemolayer.models import new_id


@pytest.fixture(scope="module")
def api(server: Server) -> httpx.Client:
    return server.as_("acme")


def add(api: httpx.Client, user: str, content: str, **body: Any) -> dict[str, Any]:
    r = api.post(f"/v1/users/{user}/memories", json={"content": content, **body})
    assert r.status_code == 201, r.text
    item: dict[str, Any] = r.json()["items"][0]
    return item


def search_ids(api: httpx.Client, user: str, query: str) -> list[str]:
    r = api.post(f"/v1/users/{user}/search", json={"query": query})
    assert r.status_code == 200, r.text
    return [h["memory"]["id"] for h in r.json()["hits"]]


def import_expiring(api: httpx.Client, user: str, content: str, expires_at: str) -> str:
    """Store ``content`` for ``user`` with an ``expires_at`` (through POST import, the one
    route that sets it); returns the memory id."""
    source = add(api, f"{user}-source", content)
    rows = api.get(f"/v1/users/{user}-source/export").json()["rows"]
    row = next(r for r in rows if r.get("id") == source["id"])
    row = {**row, "id": new_id(), "user_id": user, "expires_at": expires_at}
    r = api.post(f"/v1/users/{user}/import", json={"rows": [row]})
    assert r.status_code == 200 and r.json() == {"count": 1}, r.text
    return str(row["id"])


def test_explain_says_why_a_memory_ranks_where_it_does(api: httpx.Client) -> None:
    user = "u-explain"
    rec = add(api, user, "Remember that my passport number is X1234567")
    add(api, user, "The weather was nice today")
    r = api.get(f"/v1/users/{user}/memories/{rec['id']}/explain")
    assert r.status_code == 200, r.text
    e = r.json()
    assert (e["memory_id"], e["user_id"], e["kind"]) == (rec["id"], user, "episodic")
    assert e["recallable"] is True and e["suppressed"] == [] and e["pinned"] is False
    assert 0.0 < e["retention"]["value"] <= 1.0 and e["retention"]["half_life_days"] > 0
    assert e["importance"]["value"] == rec["importance"] and e["importance"]["reasons"]
    assert e["query"] is None and any("importance" in line for line in e["summary"])

    ranked = api.get(
        f"/v1/users/{user}/memories/{rec['id']}/explain", params={"query": "passport number"}
    ).json()["query"]
    assert ranked["query"] == "passport number" and ranked["rank"] == 1
    assert ranked["score"] > 0 and "final" in ranked["scores"] and ranked["excluded"] is None


def test_explain_errors_name_the_field(api: httpx.Client) -> None:
    rec = add(api, "u-explain-err", "I like hiking")
    missing = api.get("/v1/users/u-explain-err/memories/0190f5c2a1b07c3e8d2f4a6b9c1d3e5f/explain")
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "memory_id"
    other = api.get(f"/v1/users/someone-else/memories/{rec['id']}/explain")
    assert other.status_code == 404  # another user's memory is unknown here
    for query in ("", "   "):
        blank = api.get(
            f"/v1/users/u-explain-err/memories/{rec['id']}/explain", params={"query": query}
        )
        assert blank.status_code == 422 and blank.json()["error"]["field"] == "query", blank.text


def test_pin_and_unpin(api: httpx.Client) -> None:
    user = "u-pin"
    rec = add(api, user, "My locker code is 4711")
    path = f"/v1/users/{user}/memories/{rec['id']}"
    pinned = api.put(f"{path}/pin")
    assert pinned.status_code == 200 and pinned.json()["pinned"] is True
    assert api.put(f"{path}/pin").json()["pinned"] is True  # idempotent
    e = api.get(f"{path}/explain").json()
    assert e["pinned"] is True and e["retention"]["value"] == 1.0
    assert e["expiry"]["source"] == "pinned"
    unpinned = api.delete(f"{path}/pin")
    assert unpinned.status_code == 200 and unpinned.json()["pinned"] is False
    events = [ev["event"] for ev in api.get(f"{path}/history").json()["events"]]
    assert events == ["ADD", "PIN", "UNPIN"]


def test_add_pinned(api: httpx.Client) -> None:
    rec = add(api, "u-add-pinned", "Always answer in French", pinned=True)
    assert rec["pinned"] is True
    got = api.get(f"/v1/users/u-add-pinned/memories/{rec['id']}").json()
    assert got["pinned"] is True
    bad = api.post("/v1/users/u-add-pinned/memories", json={"content": "x", "pinned": "yes"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "pinned"


def test_archive_and_restore(api: httpx.Client) -> None:
    user = "u-archive"
    rec = add(api, user, "The garage door code is 8080")
    path = f"/v1/users/{user}/memories/{rec['id']}"
    assert rec["id"] in search_ids(api, user, "garage door code")

    archived = api.post(f"{path}/archive")
    assert archived.status_code == 200 and archived.json()["archived_at"] is not None
    assert rec["id"] not in search_ids(api, user, "garage door code")
    assert api.get(path).status_code == 200  # still there, and listed
    e = api.get(f"{path}/explain", params={"query": "garage door code"}).json()
    assert e["recallable"] is False and e["suppressed"] == ["archived"]
    assert e["query"]["rank"] is None and "archived" in e["query"]["excluded"]

    restored = api.post(f"{path}/restore")
    assert restored.status_code == 200 and restored.json()["archived_at"] is None
    assert rec["id"] in search_ids(api, user, "garage door code")
    events = [ev["event"] for ev in api.get(f"{path}/history").json()["events"]]
    assert events == ["ADD", "ARCHIVE", "RESTORE"]


def test_a_pinned_memory_cannot_be_archived(api: httpx.Client) -> None:
    rec = add(api, "u-archive-pinned", "My blood type is O negative", pinned=True)
    r = api.post(f"/v1/users/u-archive-pinned/memories/{rec['id']}/archive")
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "memory_id" and "unpin" in r.json()["error"]["message"]
    missing = api.put("/v1/users/u-archive-pinned/memories/0190f5c2a1b07c3e8d2f4a6b9c1d3e5f/pin")
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "memory_id"


def test_search_with_explain(api: httpx.Client) -> None:
    user = "u-search-explain"
    add(api, user, "My sister Ana lives in Porto")
    add(api, user, "The quarterly report is due Friday")
    plain = api.post(f"/v1/users/{user}/search", json={"query": "where does my sister live?"})
    assert all(h["explanation"] is None for h in plain.json()["hits"])
    r = api.post(
        f"/v1/users/{user}/search", json={"query": "where does my sister live?", "explain": True}
    )
    assert r.status_code == 200, r.text
    first = r.json()["hits"][0]
    assert first["memory"]["content"] == "My sister Ana lives in Porto"
    why = first["explanation"]
    assert why["rank"] == 1 and why["final"] == pytest.approx(first["score"])
    assert 0 < why["retention"] <= 1 and why["summary"]
    bad = api.post(f"/v1/users/{user}/search", json={"query": "x", "explain": 1})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "explain"


def test_maintain_deletes_the_users_expired_memories(api: httpx.Client) -> None:
    user = "u-maintain"
    kept = add(api, user, "I have a cat called Miso")
    gone = import_expiring(api, user, "The wifi guest password is tulip42", "2000-01-01T00:00:00Z")
    neighbour = import_expiring(
        api, "u-maintain-other", "The door code is 1234", "2000-01-01T00:00:00Z"
    )
    dry = api.post(f"/v1/users/{user}/maintain", json={"dry_run": True})
    assert dry.status_code == 200, dry.text
    report = dry.json()
    assert report["dry_run"] is True and [u["user_id"] for u in report["users"]] == [user]
    assert report["users"][0]["expired"] == 1 and report["changes"] >= 1
    assert report["users"][0]["ids"]["expired"] == [gone]
    assert api.get(f"/v1/users/{user}/memories/{gone}").status_code == 200  # nothing written

    done = api.post(f"/v1/users/{user}/maintain").json()  # no body: the defaults
    assert done["dry_run"] is False and done["totals"]["expired"] == 1
    assert api.get(f"/v1/users/{user}/memories/{gone}").status_code == 404
    assert api.get(f"/v1/users/{user}/memories/{kept['id']}").status_code == 200
    events = [
        e["event"] for e in api.get(f"/v1/users/{user}/memories/{gone}/history").json()["events"]
    ]
    assert events[-1] == "EXPIRE"
    # Another user's expired memory is left for that user's pass.
    assert api.get(f"/v1/users/u-maintain-other/memories/{neighbour}").status_code == 200
    again = api.post(f"/v1/users/{user}/maintain", json={}).json()
    assert again["changes"] == 0  # idempotent


def test_maintain_at_a_given_time(api: httpx.Client) -> None:
    user = "u-maintain-now"
    later = import_expiring(api, user, "The hotel room is 512", "2099-06-01T00:00:00Z")
    before = api.post(f"/v1/users/{user}/maintain", json={"now": "2099-05-31T00:00:00"}).json()
    assert before["now"].startswith("2099-05-31") and before["totals"]["expired"] == 0
    after = api.post(f"/v1/users/{user}/maintain", json={"now": "2099-06-02T00:00:00Z"}).json()
    assert after["users"][0]["ids"]["expired"] == [later]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"now": 3}, "now"),
        ({"now": "soon"}, "now"),
        ({"dry_run": "yes"}, "dry_run"),
        ({"dryrun": True}, "dryrun"),
    ],
)
def test_maintain_rejects_bad_input_naming_the_field(
    api: httpx.Client, body: dict[str, Any], field: str
) -> None:
    r = api.post("/v1/users/u-maintain-bad/maintain", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field

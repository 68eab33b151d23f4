"""Ids that are not UTF-8, over real HTTP: percent-encoded bytes that do not decode (lone
surrogates such as ``%ED%A0%80``, a stray ``%FF``) in a path or query parameter are a
422 naming the parameter, on every route, and never become a replacement-character id
that two different ids would share."""

from __future__ import annotations

import re

import pytest
from rest_server import ENDPOINTS, Endpoint, Server

#: Two different lone surrogates: both would decode, with replacement, to U+FFFD x 3.
SURROGATES = ("%ED%A0%80", "%ED%A0%81")
#: What both would have become.
REPLACED = "%EF%BF%BD" * 3
NAMES = {
    "user_id": "alice",
    "memory_id": "0" * 32,
    "session_id": "s1",
    "message_id": "0" * 32,
    "entity": "user",
    "key_id": "0123456789abcdef",
}
#: Each path parameter of the table, and every route it is in.
PARAMETERS = [
    (endpoint, name) for endpoint in ENDPOINTS for name in re.findall(r"\{(\w+)\}", endpoint.path)
]


@pytest.mark.parametrize("bad", [*SURROGATES, "%FF", "caf%C3"])
@pytest.mark.parametrize(
    ("endpoint", "name"), PARAMETERS, ids=[f"{e.method} {e.path} {n}" for e, n in PARAMETERS]
)
def test_a_path_id_that_is_not_utf8_is_refused_naming_it(
    server: Server, endpoint: Endpoint, name: str, bad: str
) -> None:
    api = server.as_("operator" if endpoint.admin else "acme")
    r = endpoint.call(api, **{**NAMES, name: bad})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    # The route names the entity ``name``; every other parameter keeps its table name.
    assert error["field"] == ("name" if name == "entity" else name), error
    assert error["type"] == "validation_error" and "UTF-8" in error["message"]


@pytest.mark.parametrize("param", ["session_id", "agent_id", "kind"])
def test_a_query_id_that_is_not_utf8_is_refused_naming_it(server: Server, param: str) -> None:
    for bad in SURROGATES:
        r = server.as_("acme").get(f"/v1/users/alice/memories?{param}={bad}")
        assert r.status_code == 422 and r.json()["error"]["field"] == param, r.text
    name = server.as_("acme").get("/v1/users/alice/memories?%ED%A0%80=1")
    assert name.status_code == 422 and name.json()["error"]["field"] == "query", name.text


def test_two_lone_surrogate_users_are_both_refused_and_never_alias(server: Server) -> None:
    api = server.as_("acme")
    first, second = (f"/v1/users/{s}" for s in SURROGATES)
    wrote = api.post(f"{first}/memories", json={"content": "the first user's secret"})
    assert wrote.status_code == 422 and wrote.json()["error"]["field"] == "user_id", wrote.text
    for path in (f"{second}/memories", f"{second}/export", f"{second}/search"):
        method = "POST" if path.endswith("search") else "GET"
        body = {"query": "secret"} if method == "POST" else None
        r = api.request(method, path, json=body)
        assert r.status_code == 422 and "secret" not in r.text, (path, r.text)
    # Nothing was written under the id both would have decoded to, nor anywhere else.
    same = api.get(f"/v1/users/{REPLACED}/memories")
    assert same.status_code == 200 and same.json()["items"] == [], same.text
    assert api.get("/v1/stats").json()["memories"] == 0


def test_valid_utf8_ids_still_work(server: Server) -> None:
    api = server.as_("acme")
    r = api.post("/v1/users/caf%C3%A9/memories", json={"content": "the café user's note"})
    assert r.status_code == 201 and r.json()["items"][0]["user_id"] == "café", r.text
    listed = api.get("/v1/users/caf%C3%A9/memories", params={"session_id": "séance"})
    assert listed.status_code == 200 and listed.json()["items"] == []


#: Request bodies whose JSON holds a lone surrogate escape in an id, and the field named.
BODIES = [
    ('{"content": "hi", "agent_id": "\\ud800"}', "agent_id"),
    ('{"content": "hi", "session_id": "\\udfff"}', "session_id"),
    ('{"messages": [{"content": "hi", "name": "\\ud800"}]}', "messages[0].name"),
    ('{"messages": [{"content": "hi", "id": "x\\ud801"}]}', "messages[0].id"),
]


@pytest.mark.parametrize(("body", "field_name"), BODIES)
def test_a_body_id_with_a_lone_surrogate_escape_is_refused(
    server: Server, body: str, field_name: str
) -> None:
    r = server.as_("acme").post(
        "/v1/users/alice/memories", content=body, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field_name, r.text


def test_the_key_routes_refuse_ids_that_are_not_utf8(server: Server) -> None:
    operator = server.as_("operator")
    listed = operator.get("/v1/admin/keys?tenant=%ED%A0%80")
    assert listed.status_code == 422 and listed.json()["error"]["field"] == "tenant"
    made = operator.post(
        "/v1/admin/keys",
        content='{"tenant": "acme", "users": ["\\ud800"]}',
        headers={"Content-Type": "application/json"},
    )
    assert made.status_code == 422 and made.json()["error"]["field"] == "users[0]", made.text


def test_the_table_lists_every_path_parameter() -> None:
    assert {n for _, n in PARAMETERS} == set(NAMES)

"""Errors on a real server: every bad input is a 4xx JSON body naming the field (FastAPI's
own validation errors reshaped like the library's), oversize bodies are 413, unknown
routes and methods are JSON too, and the OpenAPI schema declares all of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from rest_server import ENDPOINTS, Endpoint, Server

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def api(server: Server) -> httpx.Client:
    return server.as_("acme")


def error(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = r.json()["error"]
    assert body["type"] and body["message"] and "Traceback" not in r.text
    return body


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/search", {"query": "x", "limt": 3}, "limt"),  # unknown field: a typo is an error
        ("/search", {"limit": 3}, "query"),  # missing
        ("/search", {"query": "x", "limit": "many"}, "limit"),  # wrong type
        ("/search", {"query": "x", "limit": 5000}, "limit"),  # out of range
        ("/search", {"query": "   "}, "query"),  # the library's own check
        ("/search", {"query": "bike " * 2001}, "query"),  # a document, not a query
        ("/context", {"query": "bike " * 2001}, "query"),
        ("/search", {"query": "x", "mode": "psychic"}, "mode"),
        ("/search", {"query": "x", "kinds": ["dreams"]}, "kinds[0]"),
        ("/search", {"query": "x", "filters": {"price": {"between": 1}}}, "filters.price.between"),
        ("/memories", {"messages": [{"content": "a"}, {"role": "robot", "content": "b"}]}, "messages[1].role"),
        ("/memories", {"content": "x", "metadata": {"bad key!": 1}}, "metadata.bad key!"),
        ("/memories", {"content": "x", "importance": 2}, "importance"),
        ("/memories", {"content": "x", "timestamp": "yesterday-ish"}, "timestamp"),
        ("/memories", {"content": "nul \u0000 byte"}, "content"),
        ("/memories", {"content": "x", "kind": "gossip"}, "kind"),
    ],
)  # fmt: skip
def test_bad_bodies_are_422_naming_the_field(
    api: httpx.Client, path: str, body: dict[str, Any], field: str
) -> None:
    err = error(api.post(f"/v1/users/e1{path}", json=body), 422)
    assert err["type"] == "validation_error" and err["field"] == field, err


def test_bad_query_and_path_parameters_name_the_field(api: httpx.Client) -> None:
    assert error(api.get("/v1/users/e1/memories?limit=-1"), 422)["field"] == "limit"
    assert error(api.get("/v1/users/e1/memories?kind=nope"), 422)["field"] == "kind[0]"
    assert error(api.get("/v1/users/e1/memories/bad id!"), 422)["field"] == "memory_id"
    assert error(api.get("/v1/users/e1/facts?as_of=soon"), 422)["field"] == "as_of"
    assert error(api.get("/v1/users/%20/memories"), 422)["field"] == "user_id"
    too_long = "u" * 300
    assert error(api.get(f"/v1/users/{too_long}/memories"), 422)["field"] == "user_id"


@pytest.mark.parametrize("raw", [b"[]", b"null", b'"a query"', b"query=x"])
def test_a_body_that_is_not_a_json_object_is_named(api: httpx.Client, raw: bytes) -> None:
    headers = {"content-type": "application/json" if raw != b"query=x" else "text/plain"}
    err = error(api.post("/v1/users/e1/search", content=raw, headers=headers), 422)
    assert err["field"] == "body", err


def test_invalid_json_and_non_finite_numbers(api: httpx.Client) -> None:
    headers = {"content-type": "application/json"}
    broken = api.post("/v1/users/e1/search", content=b'{"query": ', headers=headers)
    assert error(broken, 422)["field"] == "body"
    nan = api.post(
        "/v1/users/e1/search", content=b'{"query": "x", "threshold": NaN}', headers=headers
    )
    assert error(nan, 422)["field"] == "threshold"
    latin1 = api.post("/v1/users/e1/search", content=b'{"query": "caf\xe9"}', headers=headers)
    assert latin1.status_code in (400, 422), latin1.text
    assert latin1.json()["error"]["field"] == "body", latin1.text


def test_unpaired_surrogates_are_refused_not_crashed_on(api: httpx.Client) -> None:
    raw = b'{"content": "half a pair \\ud800 here"}'
    r = api.post("/v1/users/e1/memories", content=raw, headers={"content-type": "application/json"})
    assert error(r, 422)["field"] == "content"


def test_oversize_bodies_are_413_declared_or_chunked(api: httpx.Client) -> None:
    big = {"content": "x" * (MIB + 10)}
    err = error(api.post("/v1/users/e1/memories", json=big), 413)
    assert err["type"] == "payload_too_large" and err["field"] == "body"

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"content": "'
        for _ in range(20):
            yield b"y" * (64 * 1024)
        yield b'"}'

    r = api.post(
        "/v1/users/e1/memories", content=chunks(), headers={"content-type": "application/json"}
    )
    assert error(r, 413)["type"] == "payload_too_large"
    # Just under the limit is fine.
    ok = api.post("/v1/users/e1/memories", json={"content": "z" * 999_000})
    assert ok.status_code == 201, ok.text[:200]


def test_unknown_routes_methods_and_ids_are_json(api: httpx.Client) -> None:
    assert error(api.get("/v1/nowhere"), 404)["type"] == "not_found"
    assert error(api.put("/v1/users/e1/search"), 405)["type"] == "method_not_allowed"
    missing = error(api.get(f"/v1/users/e1/memories/{'f' * 32}"), 404)
    assert missing["field"] == "memory_id" and missing["type"] == "not_found"


def test_a_store_with_another_embedding_model_is_409(server: Server) -> None:
    legacy = server.as_("legacy")
    err = error(legacy.post("/v1/users/u/search", json={"query": "x"}), 409)
    assert err["type"] == "embedding_mismatch" and "hashing-v1/64" in err["message"]
    assert str(server.data_dir) not in err["message"]  # no server paths in responses


def test_openapi_schema_is_served_and_declares_errors(server: Server) -> None:
    schema = httpx.get(f"{server.url}/openapi.json").json()
    assert schema["info"]["title"] == "mnemolayer"
    schemes = schema["components"]["securitySchemes"]
    assert {s["type"] for s in schemes.values()} == {"http", "apiKey"}
    for path, ops in schema["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method, op in ops.items():
            declared = set(op["responses"])
            assert {"401", "403", "404", "413", "422"} <= declared, (method, path)
            ref = op["responses"]["422"]["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith("/ErrorBody"), (method, path)
            assert op.get("security"), (method, path)
    # No Swagger page: it would load its assets from a CDN.
    assert httpx.get(f"{server.url}/docs").status_code == 404


def test_every_response_matches_the_declared_schema(server: Server) -> None:
    """Each route, called for real (and with bad input), answers with a declared status
    and a body valid against the schema declared for it."""
    jsonschema = pytest.importorskip("jsonschema")
    spec = httpx.get(f"{server.url}/openapi.json").json()
    # The admin routes as the operator, every other route as acme's tenant admin.
    admin, operator = server.as_("acme_admin"), server.as_("operator")
    rec = admin.post(
        "/v1/users/conform/memories", json={"content": "My sister Ana lives in Porto."}
    )
    msg = admin.post(
        "/v1/users/conform/sessions/s1/window/messages", json={"role": "user", "content": "hi"}
    )
    names = {
        "user_id": "conform",
        "memory_id": rec.json()["items"][0]["id"],
        "session_id": "s1",
        "message_id": msg.json()["message"]["id"],
        "entity": "user",
        "key_id": operator.post("/v1/admin/keys", json={"tenant": "initech"}).json()["info"]["id"],
    }

    def check(endpoint: Endpoint, r: httpx.Response) -> None:
        op = spec["paths"][endpoint.path.replace("{entity}", "{name}")][endpoint.method.lower()]
        declared = op["responses"].get(str(r.status_code))
        assert declared is not None, (endpoint, r.status_code, r.text)
        if r.status_code == 204:
            assert r.content == b""
            return
        schema = {
            **declared["content"]["application/json"]["schema"],
            "components": spec["components"],
        }
        jsonschema.Draft202012Validator(schema).validate(r.json())

    for endpoint in ENDPOINTS:
        caller = operator if endpoint.admin else admin
        if endpoint.path.endswith("/forget"):  # the table's memory is deleted by then
            again = admin.post("/v1/users/conform/memories", json={"content": "I love tea."})
            names["memory_id"] = again.json()["items"][0]["id"]
        good = endpoint.call(caller, **names)
        assert good.status_code < 300, (endpoint, good.text)
        check(endpoint, good)
        if endpoint.path.endswith("/window/messages"):  # the table clears the window first
            names["message_id"] = good.json()["message"]["id"]
        bad = caller.request(
            endpoint.method,
            endpoint.path.format(**{**names, "user_id": " "}),
            params={"limit": -1},
        )
        check(endpoint, bad)

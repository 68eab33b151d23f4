"""The REST server's request spans, and the library's spans inside them.

In process (FastAPI's TestClient), so that the spans land in this process's SDK
provider with an in-memory exporter; the provider is put in place by replacing
``opentelemetry.trace.get_tracer_provider`` for one test (the global one can be set
only once per process).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

from fastapi.testclient import TestClient
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mnemolayer.server.rest.app import build_app
from mnemolayer.server.rest.settings import ServerSettings

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
USER = "alice-5512"


@pytest.fixture
def exporter(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """A configured SDK provider for one test; the server looks it up per request."""
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    return exported


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = tmp_path_factory.mktemp("tracing") / "memory.db"
    with TestClient(build_app(ServerSettings(db=str(db), embedder="hashing"))) as made:
        yield made


def _spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    spans = list(exporter.get_finished_spans())
    exporter.clear()
    return spans


def _ours(spans: list[ReadableSpan]) -> dict[str, ReadableSpan]:
    """mnemolayer's spans by name (FastAPI's own telemetry is off; nothing else is)."""
    assert all(
        s.instrumentation_scope and s.instrumentation_scope.name == "mnemolayer" for s in spans
    )
    named = {s.name: s for s in spans}
    assert len(named) == len(spans), [s.name for s in spans]
    return named


def test_a_search_request_is_a_server_span_with_the_library_span_inside(
    client: TestClient, exporter: InMemorySpanExporter
) -> None:
    client.post(f"/v1/users/{USER}/memories", json={"content": "I moved to Porto"})
    _spans(exporter)
    response = client.post(
        f"/v1/users/{USER}/search",
        json={"query": "where do I live?", "limit": 4},
        headers={"traceparent": f"00-{TRACE_ID}-{CALLER_SPAN}-01"},
    )
    assert response.status_code == 200
    spans = _ours(_spans(exporter))
    assert set(spans) == {"POST /v1/users/{user_id}/search", "mnemolayer.search"}
    request, search = spans["POST /v1/users/{user_id}/search"], spans["mnemolayer.search"]
    assert request.kind is SpanKind.SERVER
    assert dict(request.attributes or {}) == {
        "http.request.method": "POST",
        "url.scheme": "http",
        "http.route": "/v1/users/{user_id}/search",
        "http.response.status_code": 200,
    }
    # The caller's trace goes on: its span is the request's parent...
    assert request.parent is not None and request.parent.is_remote
    assert format(request.context.trace_id, "032x") == TRACE_ID
    assert format(request.parent.span_id, "016x") == CALLER_SPAN
    # ...and the request's span is the library call's, in the worker thread.
    assert search.parent is not None and search.parent.span_id == request.context.span_id
    assert search.context.trace_id == request.context.trace_id
    assert dict(search.attributes or {})["mnemolayer.search.limit"] == 4
    assert dict(search.attributes or {})["mnemolayer.search.hits"] == len(response.json()["hits"])
    for span in (request, search):
        values = " ".join(str(v) for v in (span.attributes or {}).values())
        assert USER not in values and "Porto" not in values


def test_an_add_request_without_a_traceparent_starts_a_trace(
    client: TestClient, exporter: InMemorySpanExporter
) -> None:
    assert client.post(f"/v1/users/{USER}/memories", json={"content": "tea"}).status_code == 201
    spans = _ours(_spans(exporter))
    assert set(spans) == {"POST /v1/users/{user_id}/memories", "mnemolayer.add"}
    request, add = spans["POST /v1/users/{user_id}/memories"], spans["mnemolayer.add"]
    assert request.parent is None
    assert add.parent is not None and add.parent.span_id == request.context.span_id
    assert dict(add.attributes or {})["mnemolayer.add.records"] == 1


def test_unmatched_paths_and_errors(client: TestClient, exporter: InMemorySpanExporter) -> None:
    assert client.get(f"/users/{USER}/nothing-here").status_code == 404
    assert client.post(f"/v1/users/{USER}/search", json={"query": " "}).status_code == 422
    unmatched, search, refused = _spans(exporter)
    assert search.name == "mnemolayer.search" and search.parent is not None
    assert search.parent.span_id == refused.context.span_id
    assert dict(search.attributes or {})["error.type"] == "mnemolayer.errors.ValidationError"
    assert unmatched.name == "GET"  # no route: the method alone, no path
    assert "http.route" not in (unmatched.attributes or {})
    assert dict(unmatched.attributes or {})["http.response.status_code"] == 404
    assert refused.name == "POST /v1/users/{user_id}/search"
    assert dict(refused.attributes or {})["http.response.status_code"] == 422
    # A client error is not the server's: the span's status stays unset.
    assert refused.status.status_code is StatusCode.UNSET


def test_no_spans_without_a_configured_provider(tmp_path: Path) -> None:
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    unused = InMemorySpanExporter()
    TracerProvider().add_span_processor(SimpleSpanProcessor(unused))
    settings = ServerSettings(db=str(tmp_path / "memory.db"), embedder="hashing")
    with TestClient(build_app(settings)) as plain:
        assert plain.post("/v1/users/u/memories", json={"content": "tea"}).status_code == 201
        assert plain.post("/v1/users/u/search", json={"query": "tea"}).status_code == 200
    assert unused.get_finished_spans() == ()

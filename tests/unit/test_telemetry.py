"""OpenTelemetry spans of ``Memory.add``, ``search`` and ``context`` (mnemolayer.telemetry).

Spans go to an SDK tracer provider with an in-memory exporter. The provider is put in
place by replacing ``opentelemetry.trace.get_tracer_provider`` for one test, since the
global one can be set only once per process; the telemetry module looks it up on every
call, as it does for an application that configures OpenTelemetry after importing
mnemolayer.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from mnemolayer import Memory, ValidationError, telemetry
from mnemolayer.context.assemble import ContextBuilder
from mnemolayer.layers.episodic.read import EpisodicReader
from mnemolayer.layers.episodic.write import EpisodicWriter

USER = "ana-4471"
SECRET_WORDS = ("Porto", "peanuts", "Lisbon", USER)


@pytest.fixture
def mem() -> Iterator[Memory]:
    with Memory(":memory:", embedder="hashing") as m:
        yield m


@pytest.fixture
def exporter(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """A configured SDK provider whose finished spans land in the returned exporter."""
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    return exported


def _values(span: object) -> list[str]:
    return [str(v) for v in getattr(span, "attributes", {}).values()]


def test_add_search_and_context_make_one_span_each_with_counts_and_no_content(
    mem: Memory, exporter: InMemorySpanExporter
) -> None:
    mem.add(
        ["I moved to Porto from Lisbon.", {"role": "user", "content": "I'm allergic to peanuts."}],
        user_id=USER,
        session_id="s1",
    )
    hits = mem.search("moved to Porto", user_id=USER, limit=3, mode="keyword")
    ctx = mem.context("plan a dinner", user_id=USER, budget_tokens=300)

    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert sorted(spans) == ["mnemolayer.add", "mnemolayer.context", "mnemolayer.search"]
    assert dict(spans["mnemolayer.add"].attributes or {}) == {
        "mnemolayer.add.messages": 2,
        "mnemolayer.add.kind": "episodic",
        "mnemolayer.add.records": 2,
        "mnemolayer.add.skipped": 0,
    }
    assert dict(spans["mnemolayer.search"].attributes or {}) == {
        "mnemolayer.search.mode": "keyword",
        "mnemolayer.search.limit": 3,
        "mnemolayer.search.explain": False,
        "mnemolayer.search.as_of": False,
        "mnemolayer.search.hits": len(hits),
    }
    assert len(hits) >= 1
    context = dict(spans["mnemolayer.context"].attributes or {})
    assert context["mnemolayer.context.budget_tokens"] == 300
    assert context["mnemolayer.context.tokens"] == ctx.tokens > 0
    assert context["mnemolayer.context.items"] == sum(len(s.items) for s in ctx.sections) > 0
    for span in spans.values():
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == "mnemolayer"
        assert span.status.status_code is StatusCode.UNSET
        assert span.end_time is not None and span.start_time is not None
        assert span.end_time >= span.start_time  # the duration is the span's own
        leaked = [w for w in SECRET_WORDS if any(w in v for v in _values(span))]
        assert not leaked, (span.name, leaked)


def test_a_span_of_the_caller_is_the_parent(mem: Memory, exporter: InMemorySpanExporter) -> None:
    tracer = trace.get_tracer_provider().get_tracer("app")
    with tracer.start_as_current_span("agent turn") as turn:
        mem.add("I like green tea", user_id=USER)
        mem.search("tea", user_id=USER)
    by_name = {s.name: s for s in exporter.get_finished_spans()}
    for name in ("mnemolayer.add", "mnemolayer.search"):
        parent = by_name[name].parent
        assert parent is not None and parent.span_id == turn.get_span_context().span_id


def test_a_failing_call_raises_as_before_and_its_span_records_the_error_type(
    mem: Memory, exporter: InMemorySpanExporter
) -> None:
    with pytest.raises(ValidationError, match="query"):
        mem.search("   ", user_id=USER)
    # An argument the attributes cannot describe still gets the library's own error.
    with pytest.raises(ValidationError, match="limit"):
        mem.search("tea", user_id=USER, limit="many")  # type: ignore[arg-type]
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["mnemolayer.search", "mnemolayer.search"]
    for span in spans:
        assert span.status.status_code is StatusCode.ERROR
        assert dict(span.attributes or {})["error.type"] == "mnemolayer.errors.ValidationError"
        # The type only: an exception's message may quote the input.
        assert span.events == () and not span.status.description


def test_without_a_configured_provider_no_span_is_made(mem: Memory) -> None:
    # The process's global provider is the API's placeholder: nothing is recorded, and
    # an SDK provider that was made but never installed receives nothing either.
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert telemetry.tracer() is None
    unused = InMemorySpanExporter()
    TracerProvider().add_span_processor(SimpleSpanProcessor(unused))
    mem.add("I like green tea", user_id=USER)
    assert mem.search("tea", user_id=USER)
    assert trace.get_current_span() is trace.INVALID_SPAN
    assert unused.get_finished_spans() == ()


def test_without_the_package_the_calls_skip_tracing(
    mem: Memory, exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "_trace", None)  # as when opentelemetry is not installed
    assert telemetry.tracer() is None
    mem.add("I like green tea", user_id=USER)
    assert [h.memory.content for h in mem.search("tea", user_id=USER)] == ["I like green tea"]
    assert exporter.get_finished_spans() == ()


def test_traced_methods_keep_their_signatures_and_docstrings() -> None:
    for service, name in (
        (EpisodicWriter, "add"),
        (EpisodicReader, "search"),
        (ContextBuilder, "context"),
    ):
        method, own = getattr(Memory, name), getattr(service, name)
        assert inspect.signature(method) == inspect.signature(own), name
        assert method.__qualname__ == f"Memory.{name}"
        assert method.__doc__ == own.__doc__ and own.__doc__


def test_async_memory_calls_are_children_of_the_awaiting_span(
    exporter: InMemorySpanExporter,
) -> None:
    # AsyncMemory runs each call in a worker thread; the caller's span still parents it.
    import anyio

    from mnemolayer import AsyncMemory

    async def turn() -> int:
        async with AsyncMemory(":memory:", embedder="hashing") as amem:
            tracer = trace.get_tracer_provider().get_tracer("app")
            with tracer.start_as_current_span("agent turn") as span:
                await amem.add("I like green tea", user_id=USER)
                await amem.search("tea", user_id=USER)
            return span.get_span_context().span_id

    parent = anyio.run(turn)
    ours = [s for s in exporter.get_finished_spans() if s.name.startswith("mnemolayer.")]
    assert [s.name for s in ours] == ["mnemolayer.add", "mnemolayer.search"]
    assert all(s.parent is not None and s.parent.span_id == parent for s in ours)

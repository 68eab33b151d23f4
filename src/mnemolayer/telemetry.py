"""OpenTelemetry tracing of the library's calls, when the ``otel`` extra is installed.

mnemolayer only uses the OpenTelemetry *API* (``opentelemetry-api``); the application
chooses where spans go by configuring an SDK tracer provider
(``opentelemetry.trace.set_tracer_provider``), as docs/observability.md shows. Until it
does, or without the package, a traced call costs one check and creates no span:

* ``opentelemetry`` not importable: :func:`tracer` returns ``None`` at once;
* importable, but the global provider is still the API's placeholder
  (:class:`opentelemetry.trace.ProxyTracerProvider`) or a no-op provider: ``None`` too,
  so not even a non-recording span is made.

Attributes never carry memory content: no query text, no message text, no user, agent
or session id (an id of a person hashed would still be guessable from a list of names,
so ids are left out, not hashed). They carry counts, modes and limits only; a span's
own start and end times give its duration.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

_trace: ModuleType | None
try:
    from opentelemetry import trace as _trace
except ImportError:  # the otel extra is not installed
    _trace = None

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

__all__ = [
    "INSTRUMENTATION_NAME",
    "Attributes",
    "add_attributes",
    "added_attributes",
    "context_attributes",
    "hits_attributes",
    "mark_error",
    "packed_attributes",
    "search_attributes",
    "traced",
    "tracer",
]

#: The instrumentation scope of every span mnemolayer makes.
INSTRUMENTATION_NAME = "mnemolayer"

#: Span attributes: OpenTelemetry's primitive values only (str, bool, int, float).
Attributes = Mapping[str, str | bool | int | float]

P = ParamSpec("P")
R = TypeVar("R")

_cached: tuple[object, Tracer] | None = None


def tracer() -> Tracer | None:
    """The tracer of mnemolayer's spans from the global tracer provider, or ``None``
    when no span would be recorded (no ``opentelemetry`` package, or no provider set).

    Cheap enough to call on every operation: a module check, the global provider's
    lookup and, while the provider stays the same, a cached tracer.
    """
    global _cached
    if _trace is None:
        return None
    provider = _trace.get_tracer_provider()
    if isinstance(provider, (_trace.ProxyTracerProvider, _trace.NoOpTracerProvider)):
        return None
    cached = _cached
    if cached is not None and cached[0] is provider:
        return cached[1]
    made = provider.get_tracer(INSTRUMENTATION_NAME)
    _cached = (provider, made)
    return made


def traced(
    name: str,
    on_call: Callable[..., Attributes],
    on_result: Callable[[Any], Attributes],
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so that each call runs in a span called ``name``.

    Args:
        name: the span name (low-cardinality: ``"mnemolayer.search"``).
        on_call: the call's arguments (as the function gets them) → attributes set
            when the span starts; called only when a span is recorded.
        on_result: the return value → attributes set when the call returns.
            An exception in either is swallowed (the span just lacks those
            attributes): tracing never changes what the call does.

    Returns:
        The decorator. The wrapped function keeps its name, docstring and signature
        (``__wrapped__``); an exception it raises sets the span's status to ``ERROR``
        and its ``error.type`` attribute to the exception's qualified class name
        (not its message, which may quote the input), and is re-raised unchanged.
    """

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            active = tracer()
            if active is None:
                return function(*args, **kwargs)
            with active.start_as_current_span(
                name,
                attributes=_safely(on_call, *args, **kwargs),
                # An exception's message may quote the input (a field's value):
                # the span gets the error's type only.
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                try:
                    result = function(*args, **kwargs)
                except BaseException as exc:
                    mark_error(span, exc)
                    raise
                span.set_attributes(_safely(on_result, result))
                return result

        # A facade's delegate (mnemolayer.memory._delegate) is transparent: point at the
        # service method itself, whose signature and docstring these are.
        call.__wrapped__ = getattr(function, "__wrapped__", function)  # type: ignore[attr-defined]
        return call

    return decorate


def mark_error(span: Any, exc: BaseException) -> None:
    """Mark ``span`` failed by ``exc``: status ``ERROR`` and ``error.type`` (the
    semantic conventions' attribute) set to the exception's qualified class name."""
    assert _trace is not None  # a span exists only when OpenTelemetry does
    kind = type(exc)
    span.set_attribute("error.type", f"{kind.__module__}.{kind.__qualname__}")
    span.set_status(_trace.Status(_trace.StatusCode.ERROR))


def _safely(describe: Callable[..., Attributes], *args: Any, **kwargs: Any) -> Attributes:
    # Attributes are a by-product: a describer that trips over an odd argument (which
    # the call itself will reject with its own error) must not change what the call does.
    try:
        return describe(*args, **kwargs)
    except Exception:
        return {}


# -- the span attributes of the facade's traced calls (mnemolayer.Memory) -------------
# Counts and settings, never content or ids. Each gets the call's arguments as the facade does, ``self`` first, and
# passes them on unconverted: the call validates them, and a value OpenTelemetry cannot
# carry is dropped by it with a warning.


def add_attributes(_self: Any, messages: Any = None, /, **kw: Any) -> Attributes:
    messages = kw.get("messages", messages)
    count = len(messages) if isinstance(messages, list | tuple) else int(messages is not None)
    return {"mnemolayer.add.messages": count, "mnemolayer.add.kind": kw.get("kind", "episodic")}


def added_attributes(result: Any) -> Attributes:
    return {"mnemolayer.add.records": len(result), "mnemolayer.add.skipped": len(result.skipped)}


def search_attributes(_self: Any, _query: Any = None, /, **kw: Any) -> Attributes:
    return {
        "mnemolayer.search.mode": kw.get("mode", "hybrid"),
        "mnemolayer.search.limit": kw.get("limit", 10),
        "mnemolayer.search.explain": kw.get("explain", False),
        "mnemolayer.search.as_of": kw.get("as_of") is not None,
    }


def hits_attributes(result: Any) -> Attributes:
    return {"mnemolayer.search.hits": len(result)}


def context_attributes(_self: Any, _query: Any = None, /, **kw: Any) -> Attributes:
    return {
        "mnemolayer.context.budget_tokens": kw.get("budget_tokens", 1500),
        "mnemolayer.context.format": kw.get("format", "markdown"),
    }


def packed_attributes(result: Any) -> Attributes:
    return {
        "mnemolayer.context.tokens": result.tokens,
        "mnemolayer.context.items": sum(len(s.items) for s in result.sections),
        "mnemolayer.context.dropped": sum(result.dropped.values()),
    }

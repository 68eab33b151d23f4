"""What an operator watches: Prometheus metrics (``GET /metrics``) and a span per request.

Metrics (``prometheus-client``, in the ``server`` extra; one registry per application,
so two servers in one process keep apart):

* ``mnemolayer_http_requests_total`` (counter) and
  ``mnemolayer_http_request_duration_seconds`` (histogram), labelled ``method``,
  ``route`` and ``status``. ``route`` is the route's template
  (``/v1/users/{user_id}/memories``), never the path that was asked for, and
  ``"unmatched"`` for a path no route serves; ``method`` is one of
  :data:`HTTP_METHODS` or ``"other"``. So the label values are bounded by the routes the
  server has, whatever clients send.
* ``mnemolayer_http_requests_in_flight`` (gauge): requests being served now.
* ``mnemolayer_pending_enrichments{kind}``, ``mnemolayer_store_bytes`` and
  ``mnemolayer_open_stores`` (gauges), read from the stores the server holds open
  when Prometheus scrapes, summed over tenants: tenant names are customers' names and
  their number is unbounded, so they are no label (``GET /v1/admin/tenants`` gives
  each tenant's figures to the operator).
* ``process_*``: the server process's CPU time, memory and open files.

The request span (when OpenTelemetry is configured, :mod:`mnemolayer.telemetry`) is a
``SERVER`` span named ``"{method} {route}"`` (the method alone for an unmatched path)
with the HTTP semantic-convention attributes ``http.request.method``, ``http.route``,
``http.response.status_code`` and ``url.scheme``; no path, query or header values. It continues a trace whose
``traceparent`` header the client sent, and the library's spans (``mnemolayer.search``…)
are its children.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemolayer.errors import MnemolayerError
from mnemolayer.models import PENDING_KINDS
from mnemolayer.telemetry import mark_error, tracer

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

    from mnemolayer.server.rest.tenants import TenantPool

__all__ = ["HTTP_METHODS", "UNMATCHED", "Observe", "ServerMetrics"]

log = logging.getLogger("mnemolayer.server")

#: The methods that get their own ``method`` label value; any other is ``"other"``.
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: The ``route`` label of a request that no route matched (a 404 of an unknown path).
UNMATCHED = "unmatched"
#: Latency buckets in seconds: embedding-bound calls take milliseconds, a context with
#: LLM extraction behind it may take tens of seconds.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class _StoreCollector(Collector):
    """The stores' gauges, read at scrape time from the stores open in the pool."""

    def __init__(self, pool: Callable[[], TenantPool | None]) -> None:
        self._pool = pool

    def collect(self) -> Iterator[GaugeMetricFamily]:
        pool = self._pool()
        stores = pool.open_stores() if pool is not None else []
        pending: dict[str, int] = dict.fromkeys(PENDING_KINDS, 0)
        size = 0
        for mem in stores:
            try:  # both are index or file-size reads: no scan of the memories
                for kind, n in mem.store.pending_counts().items():
                    pending[kind] += n
                size += mem.store.file_size()
            except MnemolayerError as exc:  # a store closing under the scrape
                log.warning("metrics: skipped a store: %s", exc)
        family = GaugeMetricFamily(
            "mnemolayer_pending_enrichments",
            "Records waiting for an enrichment (embedding, fact extraction) that a "
            "background embedding queue or maintenance completes, summed over the open "
            "stores.",
            labels=["kind"],
        )
        for kind, n in pending.items():
            family.add_metric([kind], n)
        yield family
        yield GaugeMetricFamily(
            "mnemolayer_store_bytes",
            "Bytes the open stores take on disk (or on the database server), summed.",
            value=size,
        )
        yield GaugeMetricFamily(
            "mnemolayer_open_stores", "Tenant stores the server holds open.", value=len(stores)
        )


class ServerMetrics:
    """The Prometheus registry of one application and the request metrics in it.

    Args:
        pool: returns the server's tenant pool, or ``None`` before it is opened; called
            at each scrape.
    """

    def __init__(self, pool: Callable[[], TenantPool | None]) -> None:
        self.registry = CollectorRegistry()
        labels = ("method", "route", "status")
        self.requests = Counter(
            "mnemolayer_http_requests",
            "HTTP requests answered, by method, route template and status code.",
            labels,
            registry=self.registry,
        )
        self.duration = Histogram(
            "mnemolayer_http_request_duration_seconds",
            "Seconds from a request's arrival to the end of its response.",
            labels,
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "mnemolayer_http_requests_in_flight",
            "HTTP requests being served now.",
            registry=self.registry,
        )
        self.registry.register(_StoreCollector(pool))
        ProcessCollector(registry=self.registry)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request and its latency in seconds."""
        labels = (method, route, str(status))
        self.requests.labels(*labels).inc()
        self.duration.labels(*labels).observe(seconds)


def route_of(scope: Scope) -> str:
    """The template of the route that served ``scope`` (set by the router), else
    :data:`UNMATCHED`."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else UNMATCHED


def method_of(scope: Scope) -> str:
    method = str(scope.get("method", "")).upper()
    return method if method in HTTP_METHODS else "other"


class Observe:
    """ASGI middleware: request metrics (with ``metrics``) and the request span (when
    OpenTelemetry is configured). Outermost but for Starlette's error middleware, so
    that it sees every answer, 413s and 500s included.
    """

    def __init__(self, app: ASGIApp, metrics: ServerMetrics | None) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # what the client gets when the app raises before answering

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        metrics, started = self.metrics, time.perf_counter()
        if metrics is not None:
            metrics.in_flight.inc()
        try:
            active = tracer()
            if active is None:
                await self.app(scope, receive, watched)
            else:
                await self._traced(active, scope, receive, watched, lambda: status)
        finally:
            if metrics is not None:
                metrics.in_flight.dec()
                metrics.observe(
                    method_of(scope), route_of(scope), status, time.perf_counter() - started
                )

    async def _traced(
        self, active: Tracer, scope: Scope, receive: Receive, send: Send, status: Callable[[], int]
    ) -> None:
        from opentelemetry import propagate
        from opentelemetry.trace import SpanKind, Status, StatusCode

        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        method = method_of(scope)
        with active.start_as_current_span(
            method,  # renamed once the router has matched a route
            context=propagate.extract(headers),
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method, "url.scheme": scope.get("scheme", "http")},
            record_exception=False,  # a message may quote the request; the type is kept
            set_status_on_exception=False,
        ) as span:
            try:
                await self.app(scope, receive, send)
            except BaseException as exc:
                mark_error(span, exc)
                raise
            finally:
                route = route_of(scope)
                if route != UNMATCHED:  # else the name stays the method alone
                    span.update_name(f"{method} {route}")
                    span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status())
                if status() >= 500:
                    span.set_status(Status(StatusCode.ERROR))

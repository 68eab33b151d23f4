"""The application factory: routes, error handlers, body limit and the lifespan that
opens (and closes) the key store, the shared models, the tenants' stores and the
maintenance scheduler; :func:`open_state` opens them ahead of the start when the caller
wants their errors before the server runs."""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import Depends, FastAPI, Request, Response
from fastapi.routing import APIRoute
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel

from mnemolayer import __version__
from mnemolayer.server.rest.deps import Caller, ServerState, state_of
from mnemolayer.server.rest.encoding import require_utf8
from mnemolayer.server.rest.errors import ApiError, BodyLimit, SafeJSONResponse, install_handlers
from mnemolayer.server.rest.keys import KeyStore
from mnemolayer.server.rest.mem0 import PREFIX as MEM0_PREFIX
from mnemolayer.server.rest.mem0 import router as mem0_router
from mnemolayer.server.rest.observe import Observe, ServerMetrics
from mnemolayer.server.rest.pgkeys import PostgresKeyStore
from mnemolayer.server.rest.routes import ROUTERS
from mnemolayer.server.rest.scheduler import MaintenanceScheduler
from mnemolayer.server.rest.settings import DEFAULT_TENANT, ServerSettings
from mnemolayer.server.rest.tenants import TenantPool
from mnemolayer.server.ui import mount_ui
from mnemolayer.text.tokens import get_token_counter

__all__ = ["build_app", "open_state"]

log = logging.getLogger("mnemolayer.server")


class Health(BaseModel):
    status: str
    version: str


def _operation_id(route: APIRoute) -> str:
    # The handler's name: short, stable ids for generated clients (add_memories...).
    return route.name


def _without_fastapi_telemetry() -> dict[str, Any]:
    # Recent FastAPI versions trace and log requests themselves once an OpenTelemetry
    # provider is set: their request spans carry the raw path (user ids, memory ids) and
    # their logs a rejected request's input (memory content). mnemolayer's own request
    # span (server.rest.observe) carries the route template only, so theirs is off.
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters:
        return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}
    return {}


def _pool(app: FastAPI) -> TenantPool | None:
    state: ServerState | None = getattr(app.state, "mnemolayer", None)  # None until started
    return state.pool if state is not None else None


def open_state(settings: ServerSettings) -> ServerState:
    """What a server holds, opened: the key store, the shared models (loaded and warmed
    up, so that the first requests do not pay for them), the tenants' database and
    Redis when given and, in single-user mode, its one store, so that a bad path fails
    the start rather than every request.

    Raises:
        StoreError, StoreCorruptError, EmbeddingModelMismatchError: the key store, the
            tenants' database (or its role skips row-level security), Redis or the
            single store cannot be opened.
        MnemolayerError: a model cannot be made (as the registry raises it).
    """
    keys: KeyStore | None = None
    pool: TenantPool | None = None
    try:
        pool = TenantPool(settings)
        if pool.database is not None:  # the keys live beside the tenants
            keys = PostgresKeyStore(pool.database)
        elif settings.keys_path is not None:
            keys = KeyStore(settings.keys_path)
        pool.embedder.embed(["warm up"], "query")
        if settings.extractor == "rules" and pool.extractor is not None:  # llm: no call
            pool.extractor.extract("I live in Lisbon.", speaker=None, timestamp=None)
        if not settings.multi_tenant:
            pool.get(DEFAULT_TENANT)
    except BaseException:
        if keys is not None:
            keys.close()
        if pool is not None:
            pool.close()
        raise
    return ServerState(settings=settings, pool=pool, keys=keys)


def build_app(settings: ServerSettings, state: ServerState | None = None) -> FastAPI:
    """The FastAPI application; see :func:`mnemolayer.server.create_app`.

    Args:
        settings: how the server runs.
        state: what :func:`open_state` opened for ``settings`` (``mnemolayer serve``
            opens it before the server starts, so that an error is one line, not a
            startup traceback); served once and closed at shutdown. Default: opened
            when the application starts.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        nonlocal state
        opened, state = state, None  # a state given is served once
        if opened is None:
            opened = await anyio.to_thread.run_sync(open_state, settings)
        # The default token vocabulary (context, working memory) takes a second or two to
        # load; it loads behind a lock, so requests that need it meanwhile just wait.
        threading.Thread(
            target=lambda: get_token_counter().count("warm up"), name="warm-tokens", daemon=True
        ).start()
        if opened.keys is not None and settings.auth and not opened.keys.list():
            where = "--database URL" if settings.database else f"--data-dir {settings.data_dir}"
            log.warning(
                "no API keys in %s: every request will get 401; make one with "
                "`mnemolayer keys create %s --tenant NAME` (or --operator "
                "for the operator's key)",
                settings.keys_where,
                where,
            )
        if settings.maintain_every_s is not None:
            opened.scheduler = MaintenanceScheduler(opened.pool, settings.maintain_every_s)
            opened.scheduler.start()
        app.state.mnemolayer = opened
        try:
            yield
        finally:
            if opened.scheduler is not None:  # before the stores close under it
                await anyio.to_thread.run_sync(opened.scheduler.stop)
            if opened.keys is not None:
                opened.keys.close()
            opened.pool.close()

    app = FastAPI(
        title="mnemolayer",
        version=__version__,
        summary="Long-term memory for LLM agents, over HTTP.",
        description=(
            "Every `/v1` route needs an API key (`Authorization: Bearer <key>` or "
            "`X-API-Key`) unless the server runs in single-user mode. Errors are JSON: "
            '`{"error": {"type", "message", "field"}}`.'
        ),
        lifespan=lifespan,
        docs_url=None,  # the Swagger page loads its assets from a CDN; mnemolayer is offline
        redoc_url=None,
        default_response_class=SafeJSONResponse,
        generate_unique_id_function=_operation_id,
        # Before any route reads them: ids that are not UTF-8 must not decode to one
        # replacement-character id (two users would become one).
        dependencies=[Depends(require_utf8)],
        **_without_fastapi_telemetry(),
    )
    install_handlers(app, detail_prefixes=(MEM0_PREFIX + "/",))
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    metrics = ServerMetrics(lambda: _pool(app)) if settings.metrics else None
    app.add_middleware(Observe, metrics=metrics)  # added last: outside the body limit

    @app.get("/healthz", response_model=Health, tags=["server"])
    async def health() -> Health:
        """Liveness: no key needed."""
        return Health(status="ok", version=__version__)

    if metrics is not None:

        @app.get("/metrics", include_in_schema=False)
        def prometheus_metrics(request: Request, who: Caller) -> Response:
            """Prometheus metrics, text exposition format (docs/observability.md): the
            operator's key when the server has keys, none in single-user mode.

            Raises:
                ApiError: 401 without a valid key, 403 for a key other than the
                    operator's (server-wide figures are no tenant's business).
            """
            if state_of(request).settings.auth and not who.operator:
                raise ApiError(403, "forbidden", "/metrics needs the operator's API key")
            return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    for router in ROUTERS:
        app.include_router(router)
    # Mem0's MemoryClient, pointed at http://HOST:PORT/mem0 (docs/integrations/mem0.md).
    app.include_router(mem0_router)
    # The web memory browser: static files at /ui, no key (it asks for one; docs/ui.md).
    mount_ui(app)
    return app

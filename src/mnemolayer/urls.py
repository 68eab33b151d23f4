"""URLs of the session stores, checked without connecting and without their driver: the
settings read them at the edge, the Redis session store opens them (so this sits below
both)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mnemolayer.errors import ValidationError

__all__ = ["check_prefix", "parse_sessions_url", "redact_url"]

_SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "rediss+cluster")
#: Schemes of a Redis Cluster (redis-py's ``RedisCluster``): any node's address.
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def redact_url(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` option) as ``***``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            user, _, host = netloc.rpartition("@")
            name, sep, _ = user.partition(":")
            netloc = f"{name}:***@{host}" if sep else f"***@{host}"
        query = "&".join(
            f"{k}=***" if k == "password" else f"{k}={v}" for k, v in parse_qsl(parts.query)
        )
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return url.partition("://")[0] + "://***"


def parse_sessions_url(url: str, field: str = "sessions") -> tuple[str, str | None, int | None]:
    """Check a Redis sessions URL and take mnemolayer's own options out of it.

    Args:
        url: ``redis://``, ``rediss://`` or ``unix://`` URL, or ``redis+cluster://`` /
            ``rediss+cluster://`` (any node of a Redis Cluster), optionally with
            ``prefix=`` and ``ttl=`` (seconds) query options.
        field: the field named in errors (``"MNEMOLAYER_SESSIONS"`` from the settings).

    Returns:
        ``(url for redis-py, prefix or None, ttl in seconds or None)``.

    Raises:
        ValidationError: another scheme, a bad port or database number, or a bad
            ``prefix`` / ``ttl`` (field ``field``). Messages never show the password.
    """
    shown = redact_url(url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (property access parses and range-checks the port)
    except ValueError as exc:
        raise ValidationError(field, f"not a valid Redis URL: {shown} ({exc})") from None
    if parts.scheme not in _SCHEMES:
        raise ValidationError(
            field,
            f"expected a redis://, rediss://, unix:// or redis+cluster:// URL, got {shown}",
        )
    if parts.scheme in CLUSTER_SCHEMES and parts.path.strip("/") not in ("", "0"):
        raise ValidationError(field, f"a Redis Cluster has only database 0, got {shown}")
    if parts.scheme != "unix" and parts.path.strip("/") and not parts.path.strip("/").isdigit():
        raise ValidationError(field, f"the database in {shown} must be a number, like /0")
    if parts.scheme == "unix" and not parts.path:
        raise ValidationError(field, f"no socket path in {shown}")
    options = parse_qsl(parts.query, keep_blank_values=True)
    prefix = ttl = None
    rest = []
    for key, value in options:
        if key == "prefix":
            prefix = check_prefix(value, field)
        elif key == "ttl":
            if not value.isdigit() or int(value) < 1:
                raise ValidationError(
                    field, f"ttl must be a whole number of seconds >= 1, got {value!r}"
                )
            ttl = int(value)
        else:
            rest.append((key, value))
    clean = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest), ""))
    return clean, prefix, ttl


def check_prefix(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 128:
        raise ValidationError(field, f"prefix must be 1 to 128 characters, got {value!r}")
    if any(c.isspace() for c in value):
        raise ValidationError(field, f"prefix must not contain whitespace, got {value!r}")
    return value

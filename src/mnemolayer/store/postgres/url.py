"""PostgreSQL URLs: recognising one, hiding its password, and taking mnemolayer's own
options (``pool_max``, ``hnsw``, ``tenant``) out of its query string before libpq sees it."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from mnemolayer.errors import ValidationError

__all__ = ["is_postgres_url", "redact_url", "split_options"]

_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(text: str) -> bool:
    """Whether ``text`` names a PostgreSQL database (``postgresql://`` or ``postgres://``,
    in any case)."""
    return text.lower().startswith(_SCHEMES)


def redact_url(url: str) -> str:
    """``url`` without its password (``user:password@`` and ``?password=``), for messages
    and ``Memory.path``.

    Raises:
        ValidationError: ``url`` is not a well-formed URL (field ``db``; the message does
            not repeat the URL, which may hold a password).
    """
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError as exc:
        raise ValidationError("db", f"malformed PostgreSQL URL ({exc})") from None
    netloc = parts.netloc
    if password:
        netloc = netloc.replace(f":{password}@", ":***@", 1)
    query = parts.query
    if "password=" in query.lower():
        query = "&".join(
            f"{item.split('=', 1)[0]}=***" if item.split("=", 1)[0].lower() == "password" else item
            for item in query.split("&")
        )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


_OPTIONS = ("pool_max", "hnsw", "tenant")


def split_options(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without mnemolayer's own options, and those options."""
    parts = urlsplit(url)
    ours: dict[str, str] = {}
    kept: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        (ours.__setitem__(key, value) if key in _OPTIONS else kept.append((key, value)))
    return urlunsplit(parts._replace(query=urlencode(kept, quote_via=quote))), ours

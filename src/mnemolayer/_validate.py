"""Input validation at the public API boundary: each check names the offending field."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from mnemolayer.errors import ValidationError
from mnemolayer.models import (
    MemoryKind,
    Message,
    to_utc,
    validate_content,
    validate_metadata,
    validate_text_value,
)

MAX_ID_CHARS = 256
MAX_MESSAGES = 10_000
_MEMORY_ID = re.compile(r"^[0-9A-Za-z_\-:.]{1,128}$")
_TENANT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
MODES = ("hybrid", "vector", "keyword")
ROLES = ("user", "assistant", "system", "tool")


def content(value: Any, field: str = "content") -> str:
    return validate_content(value, field)


#: Longest search query, in characters: a question or a message, not a document (the
#: embedder reads a few hundred tokens of it; a 250 KB query held a server for minutes).
MAX_QUERY_CHARS = 10_000


def query(value: Any, field: str = "query") -> str:
    """A search query: non-blank text (:func:`content`) of at most
    :data:`MAX_QUERY_CHARS` characters.

    Raises:
        ValidationError: names ``field``.
    """
    text = validate_content(value, field)
    if len(text) > MAX_QUERY_CHARS:
        raise ValidationError(
            field,
            f"must be at most {MAX_QUERY_CHARS} characters, got {len(text)} "
            "(search with the question, not a document)",
        )
    return text


def metadata(value: Any, field: str = "metadata") -> dict[str, Any]:
    """A metadata dict (:func:`mnemolayer.models.validate_metadata`), also rejecting an
    integer too long to write as JSON text (Python's ``sys.get_int_max_str_digits()``,
    4,300 digits by default), which would otherwise escape as a bare ``ValueError``."""
    try:
        return validate_metadata(value, field)
    except ValidationError:
        raise
    except ValueError as exc:
        where = _long_int_path(value, field, 0)
        if where is None:
            raise
        raise ValidationError(where, "integer too long to store as JSON") from exc


def _long_int_path(value: Any, field: str, depth: int) -> str | None:
    """The dotted path of the first integer whose decimal text is over Python's limit."""
    if depth > 17:  # validate_metadata has already refused anything deeper
        return None
    if isinstance(value, int):
        try:
            str(value)
        except ValueError:
            return field
        return None
    items: Iterable[tuple[str, Any]] = ()
    if isinstance(value, dict):
        items = ((f"{field}.{k}", item) for k, item in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{field}[{i}]", item) for i, item in enumerate(value))
    for path, item in items:
        found = _long_int_path(item, path, depth + 1)
        if found is not None:
            return found
    return None


def time(value: Any, field: str) -> datetime | None:
    return to_utc(value, field)


def utc_now(clock: Callable[[], datetime]) -> datetime:
    now = to_utc(clock(), "clock")
    assert now is not None
    return now


def scope_id(value: Any, field: str, *, required: bool = False) -> Any:
    """A user/agent/session id: a non-blank string of at most 256 characters."""
    if value is None:
        if required:
            raise ValidationError(field, "is required")
        return None
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValidationError(field, "must not be empty or whitespace only")
    if len(value) > MAX_ID_CHARS:
        raise ValidationError(field, f"is longer than {MAX_ID_CHARS} characters")
    validate_text_value(value, field)
    return value


def tenant(value: Any, field: str = "tenant") -> str:
    """A tenant name: 1-63 characters of ``a-z``, ``0-9``, ``_``, ``-``, starting with a
    letter or digit (it names a directory, a PostgreSQL setting's value and a Redis key
    prefix, so no case or path tricks).

    Raises:
        ValidationError: naming ``field``.
    """
    if not isinstance(value, str) or not _TENANT.match(value):
        raise ValidationError(
            field,
            f"not a tenant name: {value!r}; use 1-63 of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit",
        )
    return value


def memory_id(value: Any, field: str = "memory_id") -> str:
    if not isinstance(value, str) or not _MEMORY_ID.match(value):
        raise ValidationError(field, f"not a memory id: {value!r}")
    return value


def cursor(value: Any) -> str:
    """A page cursor: the ``next_cursor`` of a previous page, i.e. a memory id (32 hex
    digits for ids mnemolayer made)."""
    text = memory_id(value, "cursor")
    if not re.fullmatch(r"[0-9a-f]{32}", text):
        raise ValidationError("cursor", f"not a cursor from a previous page: {value!r}")
    return text


def kind(value: Any, field: str = "kind") -> MemoryKind:
    try:
        return MemoryKind(value)
    except ValueError as exc:
        known = ", ".join(k.value for k in MemoryKind)
        raise ValidationError(field, f"unknown kind {value!r}; use one of: {known}") from exc


def importance(value: Any) -> float | None:
    """A caller's importance in [0, 1], or ``None`` (not given: the write estimates it)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError("importance", f"must be a number in [0, 1], got {value!r}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValidationError("importance", f"must be in [0, 1], got {value!r}")
    return float(value)


def limit(value: Any, field: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, f"must be a non-negative integer, got {value!r}")
    if value < 0:
        raise ValidationError(field, f"must be ≥ 0, got {value}")
    return min(value, 10_000)


def threshold(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError("threshold", f"must be a finite number, got {value!r}")
    return float(value)


def mode(value: Any) -> Any:
    if value not in MODES:
        raise ValidationError("mode", f"must be one of {', '.join(MODES)}, got {value!r}")
    return value


def messages(value: Any) -> list[Message]:
    """Normalise ``add``'s input into validated :class:`Message` objects."""
    if isinstance(value, str | Message | dict):
        return [_message(value, None)]
    if isinstance(value, bytes | bytearray | memoryview):
        raise ValidationError("messages", "expected text, got bytes: decode it first (UTF-8)")
    if not isinstance(value, Sequence):
        raise ValidationError(
            "messages", f"expected text, a message or a list, got {type(value).__name__}"
        )
    if not value:
        raise ValidationError("messages", "must not be empty")
    if len(value) > MAX_MESSAGES:
        raise ValidationError("messages", f"at most {MAX_MESSAGES} messages per call")
    return [_message(item, f"messages[{i}]") for i, item in enumerate(value)]


def _message(item: Any, prefix: str | None) -> Message:
    """One message; errors name ``content`` for a lone message, ``messages[i].content`` in a list."""

    def name(sub: str) -> str:
        return f"{prefix}.{sub}" if prefix else sub

    field = prefix or "content"
    if isinstance(item, str):
        return Message(role="user", content=content(item, name("content")))
    if isinstance(item, Message):
        msg = item
    elif isinstance(item, dict):
        try:
            msg = Message.model_validate(item)
        except ValidationError as exc:  # raised by a field validator (timestamp)
            raise ValidationError(name(exc.field or ""), str(exc).split(": ", 1)[-1]) from exc
        except PydanticValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            cause = err.get("ctx", {}).get("error")
            why = (
                str(cause).split(": ", 1)[-1] if isinstance(cause, ValidationError) else err["msg"]
            )
            raise ValidationError(name(loc) if loc else field, why) from exc
    else:
        raise ValidationError(field, f"expected text or a message dict, got {type(item).__name__}")
    content(msg.content, name("content"))
    # A Message's fields can be assigned after it was built (pydantic does not check
    # assignments), so its time is checked and made aware UTC here as a dict's is.
    at = time(msg.timestamp, name("timestamp"))
    if at is not msg.timestamp:
        msg = msg.model_copy(update={"timestamp": at})
    if msg.role not in ROLES:
        raise ValidationError(name("role"), f"must be one of {', '.join(ROLES)}, got {msg.role!r}")
    if msg.name is not None:
        scope_id(msg.name, name("name"))
    if msg.id is not None:
        scope_id(msg.id, name("id"))
    return msg


def batch_size(value: Any, field: str = "batch_size") -> int:
    """A positive batch size (an int >= 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(field, f"must be an integer >= 1, got {value!r}")
    return value

"""Path and query text that is not UTF-8 is refused, naming the parameter.

An HTTP server percent-decodes the request target with replacement: ``%ED%A0%80`` and
``%ED%A0%81`` (two different lone surrogates, which UTF-8 does not encode) both become
``"\\ufffd\\ufffd\\ufffd"``, so two different user ids would name the same user and see
each other's memories. The bytes the client sent are in the ASGI scope (``raw_path``,
``query_string``); they are decoded here strictly, before any route runs, and a value
that does not decode is a 422 naming its path or query parameter.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from fastapi import Request

from mnemolayer.errors import ValidationError

__all__ = ["require_utf8"]

_WHY = "is not valid UTF-8 (its percent-encoded bytes do not decode)"


def _utf8(raw: bytes) -> bool:
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _path_field(template: str | None, raw_path: bytes, index: int) -> str:
    """The name of the path parameter at segment ``index`` of the route ``template``
    (``/v1/users/{user_id}/memories``), else ``"path"``."""
    if template is None:
        return "path"
    parts = template.split("/")
    if len(parts) != raw_path.count(b"/") + 1 or not parts[index].startswith("{"):
        return "path"
    return parts[index][1:-1].split(":")[0]


async def require_utf8(request: Request) -> None:
    """A dependency of every route: the raw path and query string decode as UTF-8.

    Raises:
        ValidationError: naming the path parameter (``user_id``, ``memory_id``...), the
            query parameter, or ``path`` / ``query`` when the name itself is not UTF-8.
    """
    scope = request.scope
    raw_path: bytes | None = scope.get("raw_path")
    if raw_path is None:  # a server that keeps no raw path: the decoded one must be clean
        raw_path = scope["path"].encode("utf-8", "surrogatepass")
    for index, segment in enumerate(raw_path.split(b"/")):
        if not _utf8(segment):
            route = scope.get("route")
            raise ValidationError(_path_field(getattr(route, "path", None), raw_path, index), _WHY)
    for pair in scope.get("query_string", b"").split(b"&"):
        name, _, value = pair.replace(b"+", b" ").partition(b"=")
        if not _utf8(name):
            raise ValidationError("query", f"a parameter name {_WHY}")
        if not _utf8(value):
            raise ValidationError(unquote_to_bytes(name).decode("utf-8"), _WHY)

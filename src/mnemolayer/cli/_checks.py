"""Checks a server command makes before it starts, so that a bad directory or an address
it cannot listen on is one ``error:`` line with its exit code, not a traceback (or, worse,
a server that starts and then fails every request).
"""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

from mnemolayer.errors import MnemolayerRuntimeError, ValidationError

__all__ = ["check_data_dir", "check_listen"]


def check_data_dir(path: Path, option: str = "--data-dir") -> Path:
    """A directory the command can write in, made if missing.

    Raises:
        ValidationError: naming ``option``: ``path`` is a file (or lies under one), cannot
            be made, or cannot be written in.
    """
    if path.exists() and not path.is_dir():
        raise ValidationError(option, f"{path} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValidationError(option, f"cannot create {path}: {exc.strerror}") from exc
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ValidationError(option, f"cannot write in {path}: {exc.strerror}") from exc
    return path


def check_listen(host: str, port: int) -> None:
    """Whether a server could listen on ``host:port`` now: binds a socket there (with
    ``SO_REUSEADDR``, as uvicorn does) and closes it.

    Raises:
        ValidationError: (``--host``) a host name that does not resolve.
        MnemolayerRuntimeError: the address is in use or not this machine's, or the port
            needs privileges (exit code 1: nothing was wrong with the command).
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise ValidationError("--host", f"cannot resolve {host!r}: {why}") from exc
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise MnemolayerRuntimeError(
                f"--port: cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from exc

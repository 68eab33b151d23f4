"""Master keys: where they come from and how they are checked.

A master key is 32 random bytes (AES-256). It is given either directly
(:class:`EncryptionConfig` ``master_key``: the raw bytes, or their standard base64 text)
or in a key file (``key_file``: 32 raw bytes, or the base64 text of 32 bytes, surrounding
whitespace ignored). ``Memory(path, encryption=True)`` reads the environment:
``MNEMOLAYER_MASTER_KEY`` (base64 of 32 bytes) or ``MNEMOLAYER_MASTER_KEY_FILE`` (a path).

The master key never encrypts data itself: it only wraps the per-user data keys kept in
the keyring file (:mod:`mnemolayer.crypto.keyring`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mnemolayer.errors import ValidationError

__all__ = [
    "ENV_KEY",
    "ENV_KEY_FILE",
    "KEY_BYTES",
    "EncryptionConfig",
    "env_requests_encryption",
    "generate_master_key",
    "key_check_value",
    "load_key_file",
    "parse_master_key",
    "resolve_encryption",
]

#: Environment variable holding the master key as base64 of 32 bytes.
ENV_KEY = "MNEMOLAYER_MASTER_KEY"
#: Environment variable naming a file that holds the master key.
ENV_KEY_FILE = "MNEMOLAYER_MASTER_KEY_FILE"
#: Length of every key (master and data keys): 256 bits.
KEY_BYTES = 32


@dataclass(frozen=True)
class EncryptionConfig:
    """Turns on encryption at rest for ``Memory(path, encryption=...)``.

    Give exactly one of ``master_key`` and ``key_file``.

    Attributes:
        master_key: 32 raw bytes, or the standard base64 text of 32 bytes.
        key_file: a file holding the key (32 raw bytes or base64 text).
        keyring_path: the keyring file; default ``<db>.keys`` beside the store
            (``":memory:"`` for a throwaway store).
    """

    master_key: bytes | str | None = None
    key_file: str | os.PathLike[str] | None = None
    keyring_path: str | os.PathLike[str] | None = None

    def load_key(self) -> bytes:
        """The 32-byte master key.

        Raises:
            ValidationError: neither or both of ``master_key`` / ``key_file`` given, the
                file is unreadable, or the key is not 32 bytes (field names the setting).
        """
        if (self.master_key is None) == (self.key_file is None):
            raise ValidationError(
                "encryption", "give exactly one of master_key and key_file in EncryptionConfig"
            )
        if self.master_key is not None:
            return parse_master_key(self.master_key, "encryption.master_key")
        assert self.key_file is not None
        return load_key_file(self.key_file, "encryption.key_file")


def generate_master_key() -> str:
    """A new random master key as base64 text (for ``MNEMOLAYER_MASTER_KEY`` or a key file)."""
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode("ascii")


def parse_master_key(value: bytes | str, field: str) -> bytes:
    """Decode a master key: 32 raw bytes as they are, else base64 text of 32 bytes.

    Raises:
        ValidationError: (``field``) not base64 or not 32 bytes once decoded.
    """
    if isinstance(value, bytes | bytearray) and len(value) == KEY_BYTES:
        return bytes(value)
    if isinstance(value, bytes | bytearray):
        try:
            value = bytes(value).decode("ascii")
        except UnicodeDecodeError:
            raise ValidationError(
                field, f"must be {KEY_BYTES} raw bytes or base64 text, got {len(value)} bytes"
            ) from None
    if not isinstance(value, str):
        raise ValidationError(field, f"must be bytes or base64 text, got {type(value).__name__}")
    text = "".join(value.split())
    if not text:
        raise ValidationError(field, "is empty")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError(field, f"is not base64 text of {KEY_BYTES} bytes") from None
    if len(raw) != KEY_BYTES:
        raise ValidationError(
            field, f"must decode to {KEY_BYTES} bytes (256 bits), got {len(raw)} bytes"
        )
    return raw


def load_key_file(path: str | os.PathLike[str], field: str) -> bytes:
    """Read a master key file: 32 raw bytes, or base64 text of 32 bytes.

    Raises:
        ValidationError: (``field``) missing or unreadable file, or a bad key in it.
    """
    if not isinstance(path, str | os.PathLike) or not str(path).strip():
        raise ValidationError(field, f"must be a file path, got {type(path).__name__} {path!r}")
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValidationError(field, f"cannot read key file {p}: {exc.strerror or exc}") from None
    if len(data) == KEY_BYTES and not _looks_base64(data):
        return data
    return parse_master_key(data, f"{field} ({p})")


def _looks_base64(data: bytes) -> bool:
    try:
        return len(base64.b64decode(b"".join(data.split()), validate=True)) == KEY_BYTES
    except (binascii.Error, ValueError):
        return False


def env_requests_encryption(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``MNEMOLAYER_MASTER_KEY`` or ``MNEMOLAYER_MASTER_KEY_FILE`` is set (non-blank)."""
    env = os.environ if env is None else env
    return bool(env.get(ENV_KEY, "").strip() or env.get(ENV_KEY_FILE, "").strip())


def resolve_encryption(
    spec: EncryptionConfig | bool | None, env: Mapping[str, str] | None = None
) -> EncryptionConfig | None:
    """``Memory(encryption=...)`` as a config: ``None``/``False`` → off; ``True`` → from
    ``MNEMOLAYER_MASTER_KEY`` (base64) or ``MNEMOLAYER_MASTER_KEY_FILE``; a config as is.

    Raises:
        ValidationError: ``True`` with neither (or both) variables set, or a value of
            another type (field ``"encryption"``).
    """
    if spec is None or spec is False:
        return None
    if isinstance(spec, EncryptionConfig):
        return spec
    if spec is True:
        env = os.environ if env is None else env
        key = env.get(ENV_KEY, "").strip()
        path = env.get(ENV_KEY_FILE, "").strip()
        if key and path:
            raise ValidationError("encryption", f"set only one of {ENV_KEY} and {ENV_KEY_FILE}")
        if key:
            parse_master_key(key, ENV_KEY)
            return EncryptionConfig(master_key=key)
        if path:
            load_key_file(path, ENV_KEY_FILE)
            return EncryptionConfig(key_file=path)
        raise ValidationError(
            "encryption",
            f"encryption=True needs {ENV_KEY} (base64 of 32 bytes) or {ENV_KEY_FILE}",
        )
    raise ValidationError(
        "encryption", f"expected an EncryptionConfig or a bool, got {type(spec).__name__}"
    )


def key_check_value(master_key: bytes) -> str:
    """A value that tells whether a master key is the right one without revealing it:
    HMAC-SHA256 of a fixed label under the key (hex)."""
    return hmac.new(master_key, b"mnemolayer/keyring/key-check/v1", hashlib.sha256).hexdigest()

"""Field encryption and blind indexes with a user's data key.

* Text fields: ``enc:v1:`` + base64(nonce (12 bytes) ‖ AES-256-GCM ciphertext ‖ tag),
  with associated data ``table.column \\0 user_id \\0 row id``: a ciphertext copied to
  another row, column or user fails to decrypt instead of showing up there (NIST SP
  800-38D).
* Blind index: a keyword term is stored as the first 8 bytes (16 hex characters) of
  HMAC-SHA256 under a per-user index key, and query terms are hashed the same way, so
  full-text search finds exact terms without any plaintext word in the file (the
  "blind index" of searchable encryption; equal terms of one user still look equal).
* Keyed hashes: the dedup key ``content_hash`` and normalised graph names become
  HMAC-SHA256 under per-user keys, so a dictionary of likely messages cannot be hashed
  and matched against the file.

The index and hash keys are derived from the data key with HKDF-SHA256 (RFC 5869) under
distinct labels, so no key serves two purposes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import threading
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mnemolayer.crypto.keyring import KeyRing, KeyUnavailableError
from mnemolayer.errors import StoreError

__all__ = ["PREFIX", "FieldCipher"]

#: Marks an encrypted field value.
PREFIX = "enc:v1:"
#: Marks a keyed hash (so hashing is idempotent: a value already hashed stays as is).
HASH_PREFIX = "k1:"
_NONCE = 12
_TERM_BYTES = 8


@dataclass(frozen=True)
class _UserKeys:
    data_key: bytes
    aead: AESGCM
    index_key: bytes
    hash_key: bytes


def _derive(data_key: bytes, label: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label).derive(data_key)


class FieldCipher:
    """Encrypts, decrypts and blinds the values of one store with its users' data keys.

    Args:
        keyring: where the data keys come from.

    The derived keys of each user are cached; a key destroyed through ``keyring`` is
    noticed at once (the cache is checked against the keyring's own).
    """

    def __init__(self, keyring: KeyRing) -> None:
        self.keyring = keyring
        self._keys: dict[str, _UserKeys] = {}
        self._lock = threading.Lock()

    def _user(self, user_id: str, *, create: bool) -> _UserKeys:
        key = self.keyring.data_key(user_id, create=create)
        if key is None:
            raise KeyUnavailableError(
                f"no data key for user {user_id!r} in keyring {self.keyring.path}: it was "
                "destroyed (crypto-shredded), so this user's encrypted data cannot be read"
            )
        cached = self._keys.get(user_id)
        if cached is not None and cached.data_key == key:
            return cached
        keys = _UserKeys(
            key,
            AESGCM(key),
            _derive(key, b"mnemolayer/blind-index/v1"),
            _derive(key, b"mnemolayer/keyed-hash/v1"),
        )
        with self._lock:
            self._keys[user_id] = keys
        return keys

    @staticmethod
    def _aad(user_id: str, field: str, row_id: str) -> bytes:
        return f"{field}\x00{user_id}\x00{row_id}".encode()

    # -- fields --------------------------------------------------------------------

    def encrypt(self, user_id: str, field: str, row_id: str, text: str) -> str:
        """Encrypt ``text`` for ``user_id``'s row ``row_id`` of ``field``
        (``"table.column"``); the user's data key is made on first use."""
        keys = self._user(user_id, create=True)
        nonce = secrets.token_bytes(_NONCE)
        sealed = keys.aead.encrypt(nonce, text.encode("utf-8"), self._aad(user_id, field, row_id))
        return PREFIX + base64.b64encode(nonce + sealed).decode("ascii")

    def encrypt_opt(self, user_id: str, field: str, row_id: str, text: str | None) -> str | None:
        """:meth:`encrypt`, passing ``None`` through."""
        return None if text is None else self.encrypt(user_id, field, row_id, text)

    def decrypt(self, user_id: str, field: str, row_id: str, value: str) -> str:
        """The plaintext of a value :meth:`encrypt` made.

        Raises:
            KeyUnavailableError: the user's data key was destroyed.
            StoreError: the value is not encrypted (plaintext in an encrypted store), is
                damaged, or belongs to another row, column or user.
        """
        if not isinstance(value, str) or not value.startswith(PREFIX):
            raise StoreError(
                f"{field} of {row_id!r} is not encrypted in an encrypted store "
                "(written without the key, or tampered with)"
            )
        try:
            raw = base64.b64decode(value[len(PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            raise StoreError(f"{field} of {row_id!r}: damaged ciphertext") from None
        keys = self._user(user_id, create=False)
        try:
            plain = keys.aead.decrypt(raw[:_NONCE], raw[_NONCE:], self._aad(user_id, field, row_id))
        except InvalidTag:
            raise StoreError(
                f"{field} of {row_id!r} does not decrypt: damaged, or moved from another "
                "row, column or user"
            ) from None
        return plain.decode("utf-8")

    def decrypt_opt(self, user_id: str, field: str, row_id: str, value: str | None) -> str | None:
        """:meth:`decrypt`, passing ``None`` through."""
        return None if value is None else self.decrypt(user_id, field, row_id, value)

    # -- blind index and keyed hashes -------------------------------------------------

    def blind_query(self, user_id: str, terms: list[str]) -> list[str]:
        """Query terms as 16 hex characters each (truncated HMAC-SHA256, per user).

        Returns ``[]`` when the user has no data key (nothing of theirs is indexed, or
        their key was destroyed): a read never makes a key."""
        if self.keyring.data_key(user_id, create=False) is None:
            return []
        key = self._user(user_id, create=False).index_key
        return [
            hmac.new(key, t.encode("utf-8"), hashlib.sha256).digest()[:_TERM_BYTES].hex()
            for t in terms
        ]

    def blind_terms(self, user_id: str, terms: str) -> str:
        """Space-separated terms (``textproc.index_terms``) as their blind forms."""
        key = self._user(user_id, create=True).index_key
        return " ".join(
            hmac.new(key, t.encode("utf-8"), hashlib.sha256).digest()[:_TERM_BYTES].hex()
            for t in terms.split()
        )

    def keyed_hash(self, user_id: str, purpose: str, value: str, *, create: bool = True) -> str:
        """HMAC-SHA256 of ``value`` under the user's hash key, labelled by ``purpose``
        (``"k1:"`` + hex). A value that already is a keyed hash is returned as is.

        With ``create`` false (look-ups) a user without a data key gets a value no row
        holds instead of a new key: a read never makes a key."""
        if value.startswith(HASH_PREFIX):
            return value
        if not create and self.keyring.data_key(user_id, create=False) is None:
            return HASH_PREFIX + "-"  # not a hex digest: matches nothing
        key = self._user(user_id, create=True).hash_key
        mac = hmac.new(key, f"{purpose}\x00{value}".encode(), hashlib.sha256).hexdigest()
        return HASH_PREFIX + mac

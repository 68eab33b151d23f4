"""Encryption at rest for the embedded SQLite store (``Memory(path, encryption=...)``).

* :mod:`~mnemolayer.crypto.keys`: master keys (settings, key files, environment).
* :mod:`~mnemolayer.crypto.keyring`: per-user data keys wrapped by the master key, in
  ``<db>.keys``; destroying one crypto-shreds that user's data.
* :mod:`~mnemolayer.crypto.cipher`: AES-256-GCM fields, blind keyword index, keyed hashes.
"""

from mnemolayer.crypto.cipher import FieldCipher
from mnemolayer.crypto.keyring import KeyRing, KeyUnavailableError
from mnemolayer.crypto.keys import (
    ENV_KEY,
    ENV_KEY_FILE,
    EncryptionConfig,
    env_requests_encryption,
    generate_master_key,
    load_key_file,
    parse_master_key,
    resolve_encryption,
)

__all__ = [
    "ENV_KEY",
    "ENV_KEY_FILE",
    "EncryptionConfig",
    "FieldCipher",
    "KeyRing",
    "KeyUnavailableError",
    "env_requests_encryption",
    "generate_master_key",
    "load_key_file",
    "parse_master_key",
    "resolve_encryption",
]

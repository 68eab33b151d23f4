"""Tombstones of deleted messages (``tombstones``), so that a replayed add stays deleted.

A message's identity is the caller's message id (the record's ``source_ids``) with the
message's dedup key (``content_hash``: its normalised content and scope, session
included). Deleting a memory keeps one tombstone per message id it holds; an add whose
message has a tombstoned identity is skipped (:meth:`Memory.add
<mnemolayer.layers.episodic.write.EpisodicWriter.add>`). The same words under another
message id or in another session are another identity, stored as usual.

A tombstone holds no content: only ``user_id`` (so that ``delete_all`` sweeps and counts
it with the user's other rows), when the message was deleted, and a keyed hash of the
identity, HMAC-SHA256 (RFC 2104) under

* the user's hash key on an encrypted store (:meth:`~mnemolayer.crypto.cipher.FieldCipher.keyed_hash`,
  so crypto-shredding the user leaves nothing that links a tombstone to a text);
* a random 256-bit secret of the store (``meta.tombstone_key``, made at the first
  deletion) on a plain one, so the table alone cannot be matched against a list of likely
  messages with their ids.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from mnemolayer.models import MemoryRecord
from mnemolayer.query import Scope
from mnemolayer.store.erase import EraseSQL
from mnemolayer.store.rows import iso
from mnemolayer.store.txn import Txn

__all__ = ["MessageIdentity", "TombstoneSQL"]

#: ``(message id, content hash)``: what a tombstone stands for.
MessageIdentity = tuple[str, str]

_SECRET = "tombstone_key"
_CHUNK = 500


class TombstoneSQL(EraseSQL):
    """Writing and looking up tombstones (``c`` is a transaction, or ``None`` for a plain
    read where the argument allows it)."""

    _tombstone_secret: bytes | None = None

    def _secret(self, c: Txn | None, *, create: bool) -> bytes | None:
        """The plain store's tombstone secret; made inside ``c`` when ``create`` and
        there is none yet (``None`` then otherwise: no tombstone exists)."""
        if self._tombstone_secret is not None:
            return self._tombstone_secret
        read = "SELECT value FROM meta WHERE key = ?"
        rows = self._rows(c, read, (_SECRET,))
        if not rows and create and c is not None:
            # Concurrent first deletions: one insert wins, the others read its value.
            c.execute(
                "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO NOTHING",
                (_SECRET, secrets.token_hex(32)),
            )
            rows = c.execute(read, (_SECRET,)).fetchall()
            # Not cached: the transaction that made it may still roll back.
            return bytes.fromhex(str(rows[0][0]))
        if not rows:
            return None
        self._tombstone_secret = bytes.fromhex(str(rows[0][0]))
        return self._tombstone_secret

    def _keyer(
        self, c: Txn | None, user_id: str, *, create: bool
    ) -> Callable[[MessageIdentity], str] | None:
        """A function from identity to tombstone key for ``user_id``, or ``None`` when no
        tombstone can exist (a plain store with no secret yet)."""
        crypto = self.crypto
        if crypto is not None:

            def sealed(identity: MessageIdentity) -> str:
                mid, h = identity
                # Prefixed, so that no message id can make the value look hashed already.
                value = f"message\x1f{mid}\x1f{self._hash(user_id, h, create=create)}"
                return crypto.keyed_hash(user_id, "tombstone", value, create=create)

            return sealed
        secret = self._secret(c, create=create)
        if secret is None:
            return None

        def plain(identity: MessageIdentity) -> str:
            mid, h = identity
            value = f"tombstone\x00{user_id}\x00{mid}\x1f{h}".encode()
            return hmac.new(secret, value, hashlib.sha256).hexdigest()

        return plain

    def deleted_messages(
        self, c: Txn | None, user_id: str, identities: Iterable[MessageIdentity]
    ) -> set[MessageIdentity]:
        """Which of ``identities`` (``(message id, content hash)``, the hash as
        :func:`~mnemolayer.models.message_hash` makes it or as the store holds it) have a
        tombstone of ``user_id``."""
        keyer = self._keyer(c, user_id, create=False)
        wanted = list(dict.fromkeys(identities))
        if keyer is None or not wanted:
            return set()
        by_key = {keyer(i): i for i in wanted}
        keys = list(by_key)
        found: set[MessageIdentity] = set()
        for start in range(0, len(keys), _CHUNK):
            part = keys[start : start + _CHUNK]
            rows = self._rows(
                c,
                f"SELECT key FROM tombstones WHERE user_id = ? AND key IN "
                f"({','.join('?' * len(part))})",
                [user_id, *part],
            )
            found.update(by_key[str(r[0])] for r in rows)
        return found

    def bury(self, c: Txn, records: Sequence[MemoryRecord], at: datetime) -> int:
        """Inside ``c``, before ``records`` are deleted: a tombstone for each message id
        of each record (its ``source_ids``) with the record's content hash. Returns how
        many identities were written (existing tombstones are kept as they are)."""
        return self._bury(c, [(r.user_id, r.source_ids, r.content_hash) for r in records], at)

    def bury_scope(self, c: Txn, scope: Scope, at: datetime) -> int:
        """:meth:`bury` for every record of ``scope``, read inside ``c`` before a
        deletion of the scope."""
        where, params, _whole = self._scope(scope)
        rows = self._rows(
            c, f"SELECT user_id, source_ids, content_hash FROM memories WHERE {where}", params
        )
        return self._bury(c, [(r[0], self._json_list(r[1]), r[2]) for r in rows], at)

    def _bury(self, c: Txn, rows: Sequence[tuple[str, Sequence[str], str]], at: datetime) -> int:
        written = 0
        keyers: dict[str, Callable[[MessageIdentity], str] | None] = {}
        for user_id, sources, content_hash in rows:
            if user_id not in keyers:
                keyers[user_id] = self._keyer(c, user_id, create=True)
            keyer = keyers[user_id]
            assert keyer is not None  # made on demand
            for mid in dict.fromkeys(sources):
                c.execute(
                    "INSERT INTO tombstones (user_id, key, deleted_at) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    (user_id, keyer((mid, content_hash)), iso(at)),
                )
                written += 1
        return written

    @staticmethod
    def _json_list(value: object) -> list[str]:
        """``source_ids`` as read from a row (JSON text) as a list of ids."""
        items = json.loads(value) if isinstance(value, str) else value
        return [str(i) for i in items] if isinstance(items, list) else []

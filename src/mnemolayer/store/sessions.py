""":class:`SQLiteSessionStore`: working-memory windows in the memory store's own file
(the tables of migration 4), through the store's transactions and retries."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemolayer.store.engine import Engine
from mnemolayer.store.sqlite.engine import from_iso, iso
from mnemolayer.store.txn import Txn
from mnemolayer.values import SessionInfo, WindowState, WorkingMessage

__all__ = ["SQLiteSessionStore"]


class SQLiteSessionStore:
    """:class:`SessionStore` in the memory store's SQLite file (tables of migration 4).

    Args:
        conn: the open store (``mem.store``); writes use its transactions and retries, so
            several threads and processes may share the file.
    """

    def __init__(self, conn: Engine) -> None:
        self.conn = conn

    def load(self, user_id: str, session_id: str, agent_id: str | None) -> WindowState | None:
        # One statement reads one snapshot, so a concurrent save is seen whole or not at all.
        rows = self.conn.read(
            "SELECT s.budget_tokens, s.encoding, s.summary, s.summary_rounds, "
            "s.evicted_count, m.id, m.role, m.content, m.created_at, m.pinned, "
            "m.archived_id FROM working_sessions s LEFT JOIN working_messages m "
            "ON m.user_id = s.user_id AND m.agent_key = s.agent_key "
            "AND m.session_id = s.session_id "
            "WHERE s.user_id = ? AND s.agent_key = ? AND s.session_id = ? ORDER BY m.seq",
            (user_id, agent_id or "", session_id),
        )
        if not rows:
            return None
        budget, encoding, summary, rounds, evicted = rows[0][:5]
        crypto = getattr(self.conn, "crypto", None)  # an encrypted store (mnemolayer.crypto)
        where = f"{agent_id or ''}\x00{session_id}"
        if crypto is not None:
            summary = crypto.decrypt(user_id, "working_sessions.summary", where, summary)
        messages = []
        for mid, role, content, created, pinned, archived in (r[5:] for r in rows):
            if mid is None:  # a window with no messages (LEFT JOIN)
                continue
            if crypto is not None:
                content = crypto.decrypt(
                    user_id, "working_messages.content", f"{where}\x00{mid}", content
                )
            at = from_iso(created)
            assert at is not None
            messages.append(WorkingMessage(mid, role, content, at, bool(pinned), archived))
        return WindowState(
            user_id=user_id, session_id=session_id, agent_id=agent_id,
            budget_tokens=int(budget), encoding=encoding, messages=messages, summary=summary,
            summary_rounds=int(rounds), evicted_count=int(evicted),
        )  # fmt: skip

    def save(self, state: WindowState) -> None:
        key = (state.user_id, state.agent_id or "", state.session_id)
        stamp = iso(datetime.now(UTC))
        crypto = getattr(self.conn, "crypto", None)  # an encrypted store (mnemolayer.crypto)
        where = f"{key[1]}\x00{key[2]}"
        summary, contents = state.summary, [m.content for m in state.messages]
        if crypto is not None:
            summary = crypto.encrypt(key[0], "working_sessions.summary", where, summary)
            contents = [
                crypto.encrypt(key[0], "working_messages.content", f"{where}\x00{m.id}", text)
                for m, text in zip(state.messages, contents, strict=True)
            ]

        def run(c: Txn) -> None:
            # An update, then an insert when there was no row (writers run one at a
            # time): an upsert that also runs on PostgreSQL foreign partitions, where
            # ON CONFLICT DO UPDATE cannot (mnemolayer.store.postgres.sharding).
            values = (state.budget_tokens, state.encoding, summary, state.summary_rounds,
                      state.evicted_count, stamp)  # fmt: skip
            c.execute(
                "UPDATE working_sessions SET budget_tokens = ?, encoding = ?, summary = ?, "
                "summary_rounds = ?, evicted_count = ?, updated_at = ? "
                "WHERE user_id = ? AND agent_key = ? AND session_id = ?",
                (*values, *key),
            )
            c.execute(
                "INSERT INTO working_sessions SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
                "(SELECT 1 FROM working_sessions "
                "WHERE user_id = ? AND agent_key = ? AND session_id = ?)",
                (*key, *values, *key),
            )
            c.execute(
                "DELETE FROM working_messages "
                "WHERE user_id = ? AND agent_key = ? AND session_id = ?",
                key,
            )
            c.executemany(
                "INSERT INTO working_messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (*key, i, m.id, m.role, text, iso(m.created_at), int(m.pinned),
                     m.archived_id)
                    for i, (m, text) in enumerate(zip(state.messages, contents, strict=True))
                ],
            )  # fmt: skip

        self.conn.transact(run)

    def delete(self, user_id: str, session_id: str, agent_id: str | None) -> bool:
        key = (user_id, agent_id or "", session_id)
        where = "user_id = ? AND agent_key = ? AND session_id = ?"

        def run(c: Txn) -> bool:
            c.execute(f"DELETE FROM working_messages WHERE {where}", key)
            return c.execute(f"DELETE FROM working_sessions WHERE {where}", key).rowcount > 0

        return self.conn.transact(run)

    def delete_user(self, user_id: str, c: Txn | None = None) -> int:
        """Forget every window of one user; how many there were. ``c``: an open write
        transaction to do it in (``Memory.delete_all`` removes a user in one)."""

        def run(c: Txn) -> int:
            c.execute("DELETE FROM working_messages WHERE user_id = ?", (user_id,))
            return c.execute("DELETE FROM working_sessions WHERE user_id = ?", (user_id,)).rowcount

        return run(c) if c is not None else self.conn.transact(run)

    def list_users(self) -> list[str]:
        rows = self.conn.read("SELECT DISTINCT user_id FROM working_sessions ORDER BY 1")
        return [str(r[0]) for r in rows]

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        rows = self.conn.read(
            "SELECT s.session_id, s.agent_key, s.budget_tokens, s.evicted_count, "
            "s.summary_rounds, s.updated_at, (SELECT count(*) FROM working_messages m "
            "WHERE m.user_id = s.user_id AND m.agent_key = s.agent_key "
            "AND m.session_id = s.session_id) FROM working_sessions s WHERE s.user_id = ? "
            "ORDER BY s.updated_at DESC, s.session_id, s.agent_key",
            (user_id,),
        )
        return [
            SessionInfo(
                user_id=user_id, session_id=session, agent_id=agent or None,
                budget_tokens=int(budget), messages=int(count), evicted_count=int(evicted),
                summary_rounds=int(rounds), updated_at=from_iso(updated),
            )
            for session, agent, budget, evicted, rounds, updated, count in rows
        ]  # fmt: skip

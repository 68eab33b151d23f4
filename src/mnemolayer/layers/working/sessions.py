"""The session lifecycle half of :class:`mnemolayer.Memory`: ending a session and listing
the saved working-memory windows.

A session is what one ``session_id`` groups: the turns stored under it (episodic
memory), its working-memory windows (one per agent, see :mod:`mnemolayer.layers.working.window`) and
its *session-only* memories (``Memory.add(..., session_only=True)``), which are
searchable like any other until the session ends.

:meth:`Sessions.end_session` closes a session in three steps, each safe to repeat:

1. every window of the session is closed: its turns not yet in episodic memory are
   archived there (:meth:`WorkingMemory.clear`), so no turn is lost;
2. one *session summary* is written into episodic memory: a ``"system"`` record of the
   session whose ``source_ids`` are the turns it covers, summarised oldest first by the
   memory's summariser (``Memory(summarizer=...)``) under ``summary_tokens`` tokens;
3. the session-only memories are deleted, and with them the facts only they stated
   (the delete path of :meth:`Memory.delete_all`, so the knowledge graph stays
   consistent and each gets a ``DELETE`` history event, without its content).

The session's permanent memories stay, and so do its archived turns.

A turn counts as covered once a session summary lists it in ``source_ids``, so ending a
session twice writes one summary, and a session that goes on after it was ended gets a
second summary of the later turns only.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemolayer import _validate as v
from mnemolayer.errors import ValidationError
from mnemolayer.extract.summarize import ExtractiveSummarizer
from mnemolayer.layers.working.window import (
    WindowServices,
    WindowState,
    WorkingMemory,
    open_window,
)
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import MemoryKind, MemoryRecord, content_hash
from mnemolayer.query import Scope
from mnemolayer.registry import get_token_counter
from mnemolayer.store.sqlite.engine import iso
from mnemolayer.text.tokens import TokenCounter

if TYPE_CHECKING:
    from mnemolayer.extract.summarize import Summarizer
    from mnemolayer.layers.episodic.write import EpisodicWriter
    from mnemolayer.layers.semantic.apply import SemanticLayer
    from mnemolayer.layers.working.window import SessionInfo, SessionStore
    from mnemolayer.privacy.redact import RedactionConfig
    from mnemolayer.protocols import Txn
    from mnemolayer.store.base import SQLStore

__all__ = [
    "MAX_SUMMARY_TOKENS",
    "MIN_SUMMARY_TOKENS",
    "SUMMARY_KEY",
    "SessionEnd",
    "Sessions",
    "is_session_summary",
]

#: Metadata key (value ``True``) that marks a session summary record.
SUMMARY_KEY = "session_summary"
#: Accepted range of ``end_session(summary_tokens=...)``, in tokens.
MIN_SUMMARY_TOKENS = 16
MAX_SUMMARY_TOKENS = 100_000
_ROLES = ("user", "assistant", "system", "tool")


@dataclass(frozen=True)
class SessionEnd:
    """What :meth:`Sessions.end_session` did.

    Attributes:
        session_id, user_id, agent_id: the scope that was ended (``agent_id`` ``None``:
            every agent of the session).
        summary: the session summary written now (episodic, role ``"system"``), or
            ``None`` when there was nothing new to summarise.
        archived: window turns archived into episodic memory by this call.
        cleared: session-only memories deleted (facts only they stated went with them).
        window_closed: whether at least one working-memory window was closed.
        turns: how many stored turns the summary covers (0 without a summary).
    """

    session_id: str
    user_id: str
    agent_id: str | None
    summary: MemoryRecord | None
    archived: int
    cleared: int
    window_closed: bool
    turns: int

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (``summary`` as a record dict or ``None``)."""
        return {
            "session_id": self.session_id,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "summary": self.summary.to_json() if self.summary is not None else None,
            "archived": self.archived,
            "cleared": self.cleared,
            "window_closed": self.window_closed,
            "turns": self.turns,
        }


def is_session_summary(record: MemoryRecord) -> bool:
    """Whether ``record`` is a session summary written by :meth:`Sessions.end_session`."""
    return record.role == "system" and record.metadata.get(SUMMARY_KEY) is True


def _summary_tokens(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("summary_tokens", f"must be an int, got {type(value).__name__}")
    if not MIN_SUMMARY_TOKENS <= value <= MAX_SUMMARY_TOKENS:
        raise ValidationError(
            "summary_tokens",
            f"must be between {MIN_SUMMARY_TOKENS} and {MAX_SUMMARY_TOKENS}, got {value}",
        )
    return value


def _line(record: MemoryRecord) -> str:
    """A stored turn as a role-labelled summariser line."""
    role = record.role if record.role in _ROLES else "user"
    return f"{role}: {record.content}"


def _unstored(
    running: builtins.list[str], turns: builtins.list[MemoryRecord]
) -> builtins.list[str]:
    """The lines of the windows' running summaries that no stored turn says.

    A line quoting a turn (an extractive summary is made of the turns' own sentences) is
    dropped, so the turn counts once and in its place in time; what is left (an
    LLM-written summary, sentences cut to fit) condenses the oldest turns, so it goes
    first.
    """
    said: dict[str, builtins.list[str]] = {}
    for t in turns:
        said.setdefault(t.role if t.role in _ROLES else "user", []).append(t.content)
    text = {role: "\n".join(contents) for role, contents in said.items()}
    out: builtins.list[str] = []
    for line in running:
        role, sep, body = line.partition(": ")
        if sep and role in _ROLES and body.strip() and body.strip() in text.get(role, ""):
            continue
        out.append(line)
    return out


class Sessions:
    """Sessions as the facade serves them: their saved working-memory windows, and their
    end (archive, summarise, clear).

    Args:
        store: the open store (the session's turns and session-only memories).
        sessions: where windows persist.
        summarizer: writes session summaries (and folds windows' evicted turns).
        writer: the write path summaries and archived turns are stored through.
        semantic: the semantic layer (facts only session-only memories stated go).
        privacy: what is redacted before a window holds a turn (``None``: off).
        lifecycle: the settings that decide which turns are still active (TTL).
        clock: returns "now" (aware UTC).
    """

    def __init__(
        self,
        store: SQLStore,
        sessions: SessionStore,
        summarizer: Summarizer,
        writer: EpisodicWriter,
        semantic: SemanticLayer,
        privacy: RedactionConfig | None,
        lifecycle: LifecycleConfig,
        clock: Callable[[], datetime],
    ) -> None:
        self.store = store
        self.sessions = sessions
        self.summarizer = summarizer
        self.writer = writer
        self.semantic = semantic
        self.lifecycle = lifecycle
        self.clock = clock
        self.windows = WindowServices(writer, summarizer, privacy, clock, sessions)

    def working(
        self,
        *,
        session_id: str,
        user_id: str,
        budget_tokens: int = 4000,
        agent_id: str | None = None,
        counter: TokenCounter | str | None = None,
        store: SessionStore | None = None,
    ) -> WorkingMemory:
        """The working memory (token-budgeted live window) of one session. The window
        persists in the store and resumes exactly in a new process.

        Args:
            session_id: the session; a required id (at most 256 characters).
            user_id: the session's user; a required id.
            budget_tokens: the window's budget in tokens (see
                :func:`mnemolayer.layers.working.window.working` for the bounds); a resumed
                window takes the new budget and is compacted at once if it no longer fits.
            agent_id: optional narrower scope.
            counter: the tokenizer (default ``"o200k_base"``).
            store: where the window persists; default the memory's session store.

        Raises:
            ValidationError: a bad id, budget or counter (naming the field).
        """
        return open_window(
            self.windows, session_id=session_id, user_id=user_id, budget_tokens=budget_tokens,
            agent_id=agent_id, counter=counter, store=store,
        )  # fmt: skip

    def list_sessions(self, user_id: str) -> builtins.list[SessionInfo]:
        """The saved working-memory windows of a user (see
        :meth:`mnemolayer.layers.working.window.SessionStore.list_sessions`).

        Raises:
            ValidationError: a bad ``user_id``.
        """
        return self.sessions.list_sessions(v.scope_id(user_id, "user_id", required=True))

    def session_window(
        self, session_id: str, user_id: str, *, agent_id: str | None = None
    ) -> WorkingMemory | None:
        """The saved working-memory window of a session as it is, or ``None``.

        Unlike :meth:`Memory.working` it never creates a window and never re-fits one:
        the window keeps its own budget and encoding (for inspecting it; its ``add``
        and ``pin`` work as usual).

        Raises:
            ValidationError: a bad id (fields ``"session_id"``, ``"user_id"``,
                ``"agent_id"``).
        """
        session_id = v.scope_id(session_id, "session_id", required=True)
        user_id = v.scope_id(user_id, "user_id", required=True)
        agent_id = v.scope_id(agent_id, "agent_id")
        state = self.sessions.load(user_id, session_id, agent_id)
        return self._window(state) if state is not None else None

    def end_session(
        self,
        session_id: str,
        user_id: str,
        *,
        agent_id: str | None = None,
        summary_tokens: int = 300,
        counter: TokenCounter | str | None = None,
    ) -> SessionEnd:
        """End a session: archive its windows, summarise it into episodic memory, and
        delete its session-only memories (see the module docstring for the steps).

        The summary is one episodic record (role ``"system"``, the session's
        ``session_id`` and ``agent_id``, ``occurred_at`` the time of its last turn) whose
        ``source_ids`` are the ids of the turns it covers and whose metadata reads
        ``{"session_summary": true, "turns": N, "started_at": ISO, "ended_at": ISO,
        "summarizer": NAME, "encoding": NAME}``; its text is redacted as
        ``Memory(privacy=...)`` says, whatever the summariser wrote. It summarises the
        session's stored episodic turns not covered by an earlier summary (session-only ones and
        summaries excluded), oldest first, labelled with their roles, after the running
        summaries of the closed windows; it is searchable like any memory and no facts
        are extracted from it.

        Args:
            session_id, user_id: the session; required ids.
            agent_id: end only this agent's part of the session (its window, its turns,
                its session-only memories); ``None`` ends the whole session, every agent.
            summary_tokens: the summary's budget in tokens, between
                :data:`MIN_SUMMARY_TOKENS` and :data:`MAX_SUMMARY_TOKENS`.
            counter: the tokenizer that measures ``summary_tokens`` (anything
                :func:`mnemolayer.registry.get_token_counter` accepts); default the closed
                window's encoding, else ``"o200k_base"``.

        Returns:
            A :class:`SessionEnd`. Ending an ended or unknown session changes nothing and
            returns zeros (``summary`` ``None``); so does a session without turns.

        Raises:
            ValidationError: a bad id (fields ``"session_id"``, ``"user_id"``,
                ``"agent_id"``), ``summary_tokens`` or ``counter`` (``"encoding"``).
        """
        session_id = v.scope_id(session_id, "session_id", required=True)
        user_id = v.scope_id(user_id, "user_id", required=True)
        agent_id = v.scope_id(agent_id, "agent_id")
        budget = _summary_tokens(summary_tokens)
        tok = get_token_counter(counter) if counter is not None else None
        windows = self._session_windows(user_id, session_id, agent_id)
        if tok is None:
            tok = get_token_counter(windows[0].encoding if windows else None)
        archived = 0
        running: builtins.list[str] = []
        for state in windows:
            archived += sum(1 for m in state.messages if m.archived_id is None)
            running.extend(line for line in state.summary.split("\n") if line.strip())
            self._window(state).clear()
        summary, turns = self._write_summary(user_id, session_id, agent_id, running, budget, tok)
        cleared = self._clear_session_only(user_id, session_id, agent_id)
        return SessionEnd(
            session_id=session_id, user_id=user_id, agent_id=agent_id, summary=summary,
            archived=archived, cleared=cleared, window_closed=bool(windows), turns=turns,
        )  # fmt: skip

    # -- internals -----------------------------------------------------------------------

    def _window(self, state: WindowState) -> WorkingMemory:
        counter = get_token_counter(state.encoding)
        return WorkingMemory(self.windows, state, counter=counter, store=self.sessions)

    def _session_windows(
        self, user_id: str, session_id: str, agent_id: str | None
    ) -> builtins.list[WindowState]:
        """The saved windows of the session: the agent's one, or every agent's."""
        if agent_id is not None:
            agents: builtins.list[str | None] = [agent_id]
        else:
            agents = [
                info.agent_id
                for info in self.sessions.list_sessions(user_id)
                if info.session_id == session_id
            ]
        found = (self.sessions.load(user_id, session_id, agent) for agent in agents)
        return [state for state in found if state is not None]

    def _uncovered_turns(
        self, user_id: str, session_id: str, agent_id: str | None
    ) -> builtins.list[MemoryRecord]:
        """The session's episodic turns (of ``agent_id`` when given) that no session
        summary covers yet, oldest first; session-only and expired records left out."""
        rows = self.store.session_turns(
            user_id, session_id, now=self.clock(), lifecycle=self.lifecycle
        )
        # Summaries of any agent count: a whole-session summary covers every agent's turns.
        covered = {sid for r in rows if is_session_summary(r) for sid in r.source_ids}
        return [
            r
            for r in rows
            if not is_session_summary(r)
            and r.id not in covered
            and (agent_id is None or r.agent_id == agent_id)
        ]

    def _write_summary(
        self,
        user_id: str,
        session_id: str,
        agent_id: str | None,
        running: builtins.list[str],
        budget: int,
        tok: TokenCounter,
    ) -> tuple[MemoryRecord | None, int]:
        """Summarise the uncovered turns into one stored record; ``(record, turns)``."""
        turns = self._uncovered_turns(user_id, session_id, agent_id)
        if not turns:
            return None, 0
        lines = [*_unstored(running, turns), *(_line(t) for t in turns)]
        text = self._summarize(lines, budget, tok)
        times = [t.occurred_at or t.created_at for t in turns]
        started, ended = min(times), max(times)
        meta = {
            SUMMARY_KEY: True, "turns": len(turns), "started_at": iso(started),
            "ended_at": iso(ended), "summarizer": self.summarizer.name, "encoding": tok.name,
        }  # fmt: skip
        [draft] = self.writer.records(
            [{"role": "system", "content": text, "timestamp": ended}],
            user_id=user_id, agent_id=agent_id, session_id=session_id, metadata=meta,
        )  # fmt: skip
        ids = [t.id for t in turns]
        # Keyed by the turns it covers, not its words: two concurrent ends of one session
        # store one summary, and a later summary of other turns is a record of its own.
        keyed = draft.model_copy(
            update={
                "source_ids": ids,
                "content_hash": content_hash(
                    " ".join(ids), agent_id, session_id, MemoryKind.EPISODIC.value, SUMMARY_KEY
                ),
            }
        )
        # Given no facts: a summary restates what the turns said, which is stored already.
        [stored] = self.writer.insert([keyed], facts={keyed.id: []})
        return stored, len(stored.source_ids)

    def _summarize(self, lines: builtins.list[str], budget: int, tok: TokenCounter) -> str:
        """The summariser's text; the extractive one when it returns nothing usable."""
        text = self.summarizer.summarize(lines, budget, tok).strip()
        if not text or tok.count(text) > budget:
            text = ExtractiveSummarizer().summarize(lines, budget, tok).strip()
        return text or tok.truncate(lines[-1], budget)

    def _clear_session_only(self, user_id: str, session_id: str, agent_id: str | None) -> int:
        """Delete the session-only memories of the scope in one transaction; how many."""
        scope = Scope(user_id, agent_id=agent_id, session_id=session_id)
        now = self.clock()

        def write(c: Txn) -> int:
            gone = self.store.delete_session_only(c, scope)
            for _rowid, mid, uid in gone:
                # No content in the event: a temporary memory does not outlive its session.
                self.store.add_history(c, mid, uid, "DELETE", None, None, now)
            # Facts only these memories stated go with them; facts they closed reopen.
            self.semantic.forget(c, user_id, [mid for _r, mid, _u in gone], now)
            return len(gone)

        return self.store.transact(write)

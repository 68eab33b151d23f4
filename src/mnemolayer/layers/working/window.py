"""Working memory: the token-budgeted message window of one conversation session.

A :class:`WorkingMemory` holds what the next model call should see for one session:
pinned messages (a system prompt, user instructions, decisions), a running summary of
older turns, and the latest turns, all under ``budget_tokens`` real tokenizer tokens
(see :mod:`mnemolayer.text.tokens`). Costs use the chat framing of
:func:`mnemolayer.text.tokens.count_messages`, so ``wm.tokens == count_messages(wm.messages())``.

When an :meth:`WorkingMemory.add` makes the window overflow, the oldest unpinned turns
are evicted: each is stored in episodic memory (``Memory.add`` with its original role,
time, session and user, so nothing is ever just dropped) and its most informative
sentences are folded into the running summary. The summary is extractive and offline
(:func:`summarize`); when it outgrows its share of the budget it is summarised again
(each such round counts in :attr:`WorkingMemory.summary_rounds`). The window never
exceeds its budget and never ends empty: the newest turn always stays, cut with the
token counter when it alone is larger than the room left beside the pinned messages
(its full text then goes to episodic memory at once).

Windows persist through a :class:`SessionStore`; :class:`SQLiteSessionStore` keeps them
in the memory store's own file, so ``working(mem, ...)`` in a new process returns the
same window (messages, pins, summary, token count).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.extract.summarize import ExtractiveSummarizer
from mnemolayer.models import new_id
from mnemolayer.privacy.redact import redact
from mnemolayer.store.sqlite.engine import SQLiteConnection, from_iso, iso
from mnemolayer.text.tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    REPLY_PRIMER_TOKENS,
    TokenCounter,
    get_token_counter,
)

if TYPE_CHECKING:
    from mnemolayer.memory import Memory

__all__ = [
    "COMPACTION_SLACK",
    "MAX_BUDGET_TOKENS",
    "MIN_BUDGET_TOKENS",
    "PINNED_SHARE",
    "SUMMARY_PREFIX",
    "SUMMARY_SHARE",
    "CompactionEvent",
    "SQLiteSessionStore",
    "SessionInfo",
    "SessionStore",
    "WindowState",
    "WorkingMemory",
    "WorkingMessage",
    "get_session_store",
    "summarize",
    "working",
]

#: Smallest accepted window, in tokens: room for the reply primer and one short turn.
MIN_BUDGET_TOKENS = 64
#: Largest accepted window, in tokens (beyond any current model's context).
MAX_BUDGET_TOKENS = 10_000_000
#: Share of the budget the running summary may use.
SUMMARY_SHARE = 0.25
#: Share of the budget pinned messages may use together (the rest is for the summary and
#: the latest turns, so the newest turn always has room).
PINNED_SHARE = 0.5
#: The running summary is shown to the model as a system message starting with this.
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
#: Share of the budget a compaction frees beyond what the summary needs, so that the next
#: few turns fit without compacting again.
COMPACTION_SLACK = 0.1
#: A summary budget smaller than this (tokens) is not worth a message; it is left empty.
_MIN_SUMMARY_TOKENS = 16
_ROLES = ("user", "assistant", "system", "tool")


# -- data --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkingMessage:
    """One message in a working-memory window.

    Attributes:
        id: the message id (hex), stable across resumes; pass it to
            :meth:`WorkingMemory.pin`.
        role: ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"``.
        content: the text as the model sees it (cut to fit when ``truncated``).
        created_at: when it was added (aware UTC).
        pinned: kept through every compaction.
        archived_id: id of the episodic record already holding the full text (set for
            a truncated turn, which is archived as soon as it is added), else ``None``.
    """

    id: str
    role: str
    content: str
    created_at: datetime
    pinned: bool = False
    archived_id: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether ``content`` is a cut of a longer turn (archived in full)."""
        return self.archived_id is not None

    def as_dict(self) -> dict[str, str]:
        """``{"role": ..., "content": ...}``, the chat-completion message shape."""
        return {"role": self.role, "content": self.content}


@dataclass
class WindowState:
    """Everything a :class:`SessionStore` persists for one window.

    Attributes:
        user_id, session_id: the scope (required); agent_id: optional narrower scope.
        budget_tokens: the window's budget, in tokens.
        encoding: the token counter's name (``"o200k_base"``).
        messages: pinned and recent messages, oldest first.
        summary: the running summary text (``""`` when nothing was compacted yet).
        summary_rounds: how many times the summary was itself re-summarised.
        evicted_count: how many turns were compacted out of the window so far.
    """

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    encoding: str
    messages: list[WorkingMessage] = field(default_factory=list)
    summary: str = ""
    summary_rounds: int = 0
    evicted_count: int = 0


@dataclass(frozen=True)
class CompactionEvent:
    """What one compaction did, handed to the ``before`` and ``after`` hooks.

    Attributes:
        session_id, user_id, agent_id: the window's scope.
        evicted: the turns leaving the window, oldest first (their full text).
        summary_before: the running summary before folding them in.
        summary_after: the summary afterwards; ``None`` in the ``before`` hook.
        archived_ids: ids of the episodic records holding the evicted turns, in the
            order of ``evicted``; empty in the ``before`` hook.
        tokens_before: the window's cost, in tokens, at the moment of overflow (may be
            above the budget); tokens_after: its cost afterwards (``None`` before).
    """

    session_id: str
    user_id: str
    agent_id: str | None
    evicted: tuple[WorkingMessage, ...]
    summary_before: str
    summary_after: str | None
    archived_ids: tuple[str, ...]
    tokens_before: int
    tokens_after: int | None


CompactionHook = Callable[[CompactionEvent], Any]


@dataclass(frozen=True)
class SessionInfo:
    """One saved window, as :meth:`SessionStore.list_sessions` describes it.

    Attributes:
        user_id, session_id, agent_id: the window's scope.
        budget_tokens: its budget, in tokens.
        messages: how many messages it holds (pinned and recent; the summary not counted).
        evicted_count: how many turns were compacted out of it so far.
        summary_rounds: how many times its summary was re-summarised.
        updated_at: when it was last saved (aware UTC), ``None`` when the store does not
            know.
    """

    user_id: str
    session_id: str
    agent_id: str | None
    budget_tokens: int
    messages: int
    evicted_count: int
    summary_rounds: int
    updated_at: datetime | None


# -- session stores ----------------------------------------------------------------------


@runtime_checkable
class SessionStore(Protocol):
    """Where working-memory windows persist. One window per (user, agent, session).

    Implementations must make :meth:`save` atomic: a reader sees the old window or the new
    one, never a mix.
    """

    def load(self, user_id: str, session_id: str, agent_id: str | None) -> WindowState | None:
        """The saved window of this scope, or ``None`` when there is none."""
        ...

    def save(self, state: WindowState) -> None:
        """Replace the saved window of ``state``'s scope with ``state``."""
        ...

    def delete(self, user_id: str, session_id: str, agent_id: str | None) -> bool:
        """Forget the window of this scope; ``True`` when one existed."""
        ...

    def delete_user(self, user_id: str) -> int:
        """Forget every window of one user; how many there were."""
        ...

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        """The saved windows of one user, most recently saved first."""
        ...

    def list_users(self) -> list[str]:
        """Every user with at least one saved window, sorted (whole-store export)."""
        ...


class SQLiteSessionStore:
    """:class:`SessionStore` in the memory store's SQLite file (tables of migration 4).

    Args:
        conn: the open store (``mem.store``); writes use its transactions and retries, so
            several threads and processes may share the file.
    """

    def __init__(self, conn: SQLiteConnection) -> None:
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

        def run(c: sqlite3.Connection) -> None:
            c.execute(
                "INSERT INTO working_sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (user_id, agent_key, session_id) DO UPDATE SET "
                "budget_tokens = excluded.budget_tokens, encoding = excluded.encoding, "
                "summary = excluded.summary, summary_rounds = excluded.summary_rounds, "
                "evicted_count = excluded.evicted_count, "
                "updated_at = excluded.updated_at",
                (*key, state.budget_tokens, state.encoding, summary,
                 state.summary_rounds, state.evicted_count, stamp),
            )  # fmt: skip
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

        def run(c: sqlite3.Connection) -> bool:
            c.execute(f"DELETE FROM working_messages WHERE {where}", key)
            return c.execute(f"DELETE FROM working_sessions WHERE {where}", key).rowcount > 0

        return self.conn.transact(run)

    def delete_user(self, user_id: str, c: sqlite3.Connection | None = None) -> int:
        """Forget every window of one user; how many there were. ``c``: an open write
        transaction to do it in (``Memory.delete_all`` removes a user in one)."""

        def run(c: sqlite3.Connection) -> int:
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


# -- extractive summariser ---------------------------------------------------------------

# Sentence ends: Latin punctuation followed by space, CJK full stops, or line breaks.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；!?])|\n+")
_NUMBER = re.compile(r"\d|[零一二三四五六七八九十百千万亿两]+[点个岁元块号月日年天次]")
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|\b(?:today|tomorrow|yesterday|tonight|next week|last week|next month|deadline)\b"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}[:/]\d{2}"
    r"|[今明昨前后]天|星期|周[一二三四五六日末]|[上下这本]个?月|\d+[年月日号点]",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decid\w*|agree\w*|chose|choose|chosen|will|won't|going to|let's|plan\w*|"
    r"confirm\w*|prefer\w*|always|never|must|should|need to|please|remember|don't|do not|"
    r"make sure|instead|allerg\w*|important)\b"
    r"|决定|同意|确定|选择|计划|打算|记住|请|必须|一定|不要|别|应该|需要|总是|从不|喜欢|讨厌|过敏|重要",
    re.IGNORECASE,
)
# A capitalised word that is not the first of its sentence (names, places, products).
_NAME = re.compile(r"(?<=[\w,;:] )[A-Z][a-zA-Z'-]+")
_CJK_NAME_HINT = re.compile(
    r"[叫是跟和与给][\u4e00-\u9fff]{2,3}|[\u4e00-\u9fff]{1,3}(?:先生|女士|老师|经理)"
)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _score(sentence: str) -> float:
    """How much a sentence is worth keeping: names, numbers, dates, decisions, instructions."""
    score = 0.0
    if _NUMBER.search(sentence):
        score += 2.0
    if _DATE.search(sentence):
        score += 2.0
    if _DECISION.search(sentence):
        score += 2.0
    score += min(3, len(_NAME.findall(sentence)) + len(_CJK_NAME_HINT.findall(sentence))) * 1.5
    if len(sentence) < 12 and score == 0:
        score -= 1.0  # "ok", "thanks!", "好的"
    return score


def summarize(
    lines: Sequence[str], max_tokens: int, counter: TokenCounter | str | None = None
) -> str:
    """Extractive summary of lines of text, at most ``max_tokens`` tokens, offline.

    Each line is split into sentences (English and Chinese punctuation); a line may start
    with a ``"role: "`` label, which is kept on each of its sentences. Sentences are scored
    for names, numbers, dates, decisions and instructions; later sentences win ties.
    The best are kept greedily by score per token until the budget is spent, duplicates
    dropped, and returned in their original order, one per line.

    Args:
        lines: texts, oldest first (``"user: I moved to Porto on May 3."``).
        max_tokens: the summary's budget in tokens, ``>= 0``.
        counter: the tokenizer (anything :func:`mnemolayer.text.tokens.get_token_counter`
            accepts).

    Returns:
        The summary (``""`` when nothing fits); ``counter.count(result) <= max_tokens``.

    Raises:
        ValidationError: ``max_tokens`` is not a non-negative int (field ``"max_tokens"``).
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise ValidationError("max_tokens", f"expected an int >= 0, got {max_tokens!r}")
    tok = get_token_counter(counter)
    candidates: list[str] = []
    seen: set[str] = set()
    for line in lines:
        label, _, body = line.partition(": ")
        if not body or label not in _ROLES:
            label, body = "", line
        for sentence in _sentences(body):
            text = f"{label}: {sentence}" if label else sentence
            if text not in seen:
                seen.add(text)
                candidates.append(text)
    if not candidates or max_tokens == 0:
        return ""
    costs = tok.count_many(candidates)
    n = len(candidates)
    # Score per token, plus a small recency term so later sentences win ties.
    order = sorted(
        range(n),
        key=lambda i: ((_score(candidates[i]) + 1.0 + i / n) / max(costs[i], 1), i),
        reverse=True,
    )
    chosen: set[int] = set()
    used = 0
    for i in order:
        cost = costs[i] + 1  # the joining newline
        if used + cost <= max_tokens:
            chosen.add(i)
            used += cost
    if not chosen:  # every sentence is too long alone: cut the best one
        return tok.truncate(candidates[order[0]], max_tokens)
    text = "\n".join(candidates[i] for i in sorted(chosen))
    # Joining can merge tokens differently; cut if that ever tips it over.
    return text if tok.count(text) <= max_tokens else tok.truncate(text, max_tokens)


# -- the window ----------------------------------------------------------------------------


def _budget(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("budget_tokens", f"must be an int, got {type(value).__name__}")
    if not MIN_BUDGET_TOKENS <= value <= MAX_BUDGET_TOKENS:
        raise ValidationError(
            "budget_tokens",
            f"must be between {MIN_BUDGET_TOKENS} and {MAX_BUDGET_TOKENS}, got {value}",
        )
    return value


class WorkingMemory:
    """The token-budgeted window of one session. Make one with :func:`working`.

    Not safe for concurrent use from several threads; each change is saved to the
    session store before the call returns.

    Attributes:
        user_id, session_id, agent_id: the scope.
        budget_tokens: the budget in tokens; :attr:`tokens` never exceeds it.
        counter: the token counter used for every cost.
    """

    def __init__(
        self,
        mem: Memory,
        state: WindowState,
        *,
        counter: TokenCounter,
        store: SessionStore,
    ) -> None:
        self._mem = mem
        self._state = state
        self._store = store
        self.counter = counter
        self._before: list[CompactionHook] = []
        self._after: list[CompactionHook] = []
        self._cost_cache: dict[tuple[str, str], int] = {}

    # -- read ------------------------------------------------------------------------

    @property
    def user_id(self) -> str:
        return self._state.user_id

    @property
    def session_id(self) -> str:
        return self._state.session_id

    @property
    def agent_id(self) -> str | None:
        return self._state.agent_id

    @property
    def budget_tokens(self) -> int:
        return self._state.budget_tokens

    @property
    def summary(self) -> str:
        """The running summary of compacted turns (``""`` before the first compaction)."""
        return self._state.summary

    @property
    def summary_rounds(self) -> int:
        """How many times the summary has been re-summarised (hierarchical rounds)."""
        return self._state.summary_rounds

    @property
    def evicted_count(self) -> int:
        """How many turns have been compacted out of the window (all in episodic memory)."""
        return self._state.evicted_count

    @property
    def tokens(self) -> int:
        """Cost of :meth:`messages` as a chat request, in tokens (``<= budget_tokens``)."""
        return self._total(self._state.messages, self._state.summary)

    def window(self) -> list[WorkingMessage]:
        """The pinned and recent messages held, oldest first (the summary not included)."""
        return list(self._state.messages)

    def messages(self) -> list[dict[str, str]]:
        """What the next model call should see, within the budget.

        Returns:
            Chat messages (``{"role", "content"}`` dicts): the pinned messages, then the
            running summary as a ``"system"`` message starting with
            :data:`SUMMARY_PREFIX` (when there is one), then the latest turns, oldest
            first. Pinned messages added after the summary began keep their place among
            the latest turns.
        """
        state = self._state
        out: list[dict[str, str]] = []
        summary_at = 0
        for i, m in enumerate(state.messages):
            if not m.pinned:
                break
            summary_at = i + 1
        out = [m.as_dict() for m in state.messages[:summary_at]]
        if state.summary:
            out.append({"role": "system", "content": SUMMARY_PREFIX + state.summary})
        out.extend(m.as_dict() for m in state.messages[summary_at:])
        return out

    def __len__(self) -> int:
        return len(self._state.messages)

    def __repr__(self) -> str:
        return (
            f"WorkingMemory(session_id={self.session_id!r}, user_id={self.user_id!r}, "
            f"messages={len(self)}, tokens={self.tokens}/{self.budget_tokens})"
        )

    # -- hooks -----------------------------------------------------------------------

    def on_compact(
        self, *, before: CompactionHook | None = None, after: CompactionHook | None = None
    ) -> None:
        """Register hooks called around each compaction with a :class:`CompactionEvent`.

        ``before`` runs when turns are about to leave the window (nothing archived yet);
        ``after`` runs once they are archived and folded into the summary, and the window
        saved. Several hooks may be registered; they run in registration order. A hook's
        exception propagates: from ``before`` it aborts the ``add`` and the window stays
        as it was (only a turn too large for the window has already been archived whole);
        from ``after`` the compaction has already happened. Hooks run only when turns leave
        the window.

        Raises:
            ValidationError: a hook that is not callable (field ``"before"``/``"after"``).
        """
        for name, hook in (("before", before), ("after", after)):
            if hook is not None and not callable(hook):
                raise ValidationError(name, f"must be callable, got {type(hook).__name__}")
        if before is not None:
            self._before.append(before)
        if after is not None:
            self._after.append(after)

    # -- write -----------------------------------------------------------------------

    def add(
        self, role: str, content: str, *, pin: bool = False, timestamp: datetime | str | None = None
    ) -> WorkingMessage:
        """Append one turn, compacting older turns if the window overflows.

        Args:
            role: ``"user"``, ``"assistant"``, ``"system"`` or ``"tool"``.
            content: non-blank text; personal data and secrets in it are redacted as
                the memory's ``privacy`` setting says before it is held.
            pin: keep it through every compaction (see :meth:`pin`).
            timestamp: when it was said (naive → UTC); default: the memory's clock.

        Returns:
            The message as held. When the turn alone is larger than the room beside the
            pinned messages, its content is cut to fit (``truncated`` is then true) and the
            full text is stored in episodic memory at once.

        Raises:
            ValidationError: a bad role, blank content or timestamp (fields ``"role"``,
                ``"content"``, ``"timestamp"``); ``pin=True`` for a turn that would put
                the pinned messages over their share of the budget (field ``"pin"``).
        """
        if role not in _ROLES:
            raise ValidationError("role", f"must be one of {', '.join(_ROLES)}, got {role!r}")
        content = v.content(content, "content")
        if self._mem.privacy is not None:  # before it is held, counted or archived
            content = redact(content, self._mem.privacy).text
        if not isinstance(pin, bool):
            raise ValidationError("pin", f"must be a bool, got {type(pin).__name__}")
        at = v.time(timestamp, "timestamp") or self._mem.now()
        msg = WorkingMessage(new_id(), role, content, at, pin)
        if pin:
            self._check_pin_room(msg)
        room = self._room_for_newest()
        if self._cost(msg) > room:
            cut = self._cut(role, content, room)
            record = self._archive([msg])[0]
            msg = replace(msg, content=cut, archived_id=record)
        state = self._state
        messages = [*state.messages, msg]
        self._fit(messages)
        return msg

    def pin(self, message_id: str) -> WorkingMessage:
        """Keep a message in the window through every compaction.

        Args:
            message_id: the id of a message still in the window.

        Returns:
            The pinned message (unchanged if it was pinned already).

        Raises:
            NotFoundError: no message with that id is in the window (it may have been
                compacted into episodic memory already).
            ValidationError: pinning it would put pinned messages over their share
                (:data:`PINNED_SHARE`) of the budget (field ``"message_id"``).
        """
        message_id = v.memory_id(message_id, "message_id")
        msgs = self._state.messages
        for i, m in enumerate(msgs):
            if m.id == message_id:
                if m.pinned:
                    return m
                self._check_pin_room(m, field_name="message_id")
                pinned = replace(m, pinned=True)
                self._fit([*msgs[:i], pinned, *msgs[i + 1 :]])
                return pinned
        raise NotFoundError(f"message_id: no message {message_id!r} in the window")

    def unpin(self, message_id: str) -> WorkingMessage:
        """Let a pinned message be compacted like any other turn.

        Raises:
            NotFoundError: no message with that id is in the window.
        """
        message_id = v.memory_id(message_id, "message_id")
        msgs = self._state.messages
        for i, m in enumerate(msgs):
            if m.id == message_id:
                free = replace(m, pinned=False)
                self._fit([*msgs[:i], free, *msgs[i + 1 :]])
                return free
        raise NotFoundError(f"message_id: no message {message_id!r} in the window")

    def clear(self) -> None:
        """Archive every turn still in the window to episodic memory and forget the window.

        The saved window is deleted; the object is left empty (it may be used again).
        """
        state = self._state
        pending = [m for m in state.messages if m.archived_id is None]
        if pending:
            self._archive(pending)
        self._store.delete(state.user_id, state.session_id, state.agent_id)
        state.messages = []
        state.summary = ""
        state.summary_rounds = 0

    # -- internals -------------------------------------------------------------------

    def _cost(self, m: WorkingMessage) -> int:
        return self._message_cost(m.role, m.content)

    def _message_cost(self, role: str, content: str) -> int:
        key = (role, content)
        cost = self._cost_cache.get(key)
        if cost is None:
            if len(self._cost_cache) > 4096:
                self._cost_cache.clear()
            cost = self.counter.count(role) + self.counter.count(content) + MESSAGE_OVERHEAD_TOKENS
            self._cost_cache[key] = cost
        return cost

    def _summary_cost(self, summary: str) -> int:
        return self._message_cost("system", SUMMARY_PREFIX + summary) if summary else 0

    def _total(self, messages: Sequence[WorkingMessage], summary: str) -> int:
        if not messages and not summary:
            return 0
        body = sum(self._cost(m) for m in messages) + self._summary_cost(summary)
        return body + REPLY_PRIMER_TOKENS

    def _pinned_cost(self, messages: Sequence[WorkingMessage]) -> int:
        return sum(self._cost(m) for m in messages if m.pinned)

    def _check_pin_room(self, msg: WorkingMessage, field_name: str = "pin") -> None:
        share = int(self.budget_tokens * PINNED_SHARE)
        total = self._pinned_cost(self._state.messages) + self._cost(msg)
        if total > share:
            raise ValidationError(
                field_name,
                f"pinning it would make pinned messages cost {total} tokens, over their "
                f"share of {share} of the {self.budget_tokens}-token budget",
            )

    def _room_for_newest(self) -> int:
        """Tokens the newest turn may cost: the budget less the primer and pinned ones."""
        return self.budget_tokens - REPLY_PRIMER_TOKENS - self._pinned_cost(self._state.messages)

    def _cut(self, role: str, content: str, room: int) -> str:
        framing = self.counter.count(role) + MESSAGE_OVERHEAD_TOKENS
        return self.counter.truncate(content, max(room - framing, 1))

    def _archive(self, turns: Sequence[WorkingMessage]) -> list[str]:
        """Store turns in episodic memory with their role, time and scope; their record ids."""
        full = [m for m in turns if m.archived_id is None]
        ids = {m.id: m.archived_id for m in turns if m.archived_id is not None}
        if full:
            records = self._mem.add(
                [
                    {
                        "role": m.role,
                        "content": m.content,
                        "timestamp": m.created_at,
                        "id": m.id,
                        "metadata": {"working_message_id": m.id},
                    }
                    for m in full
                ],
                user_id=self.user_id,
                agent_id=self.agent_id,
                session_id=self.session_id,
            )
            ids.update((m.id, r.id) for m, r in zip(full, records, strict=True))
        return [ids[m.id] or "" for m in turns]

    def _fit(self, messages: list[WorkingMessage]) -> None:
        """Make ``messages`` the window, compacting until it fits the budget, and save."""
        state = self._state
        budget = state.budget_tokens
        summary = state.summary
        over = self._total(messages, summary)
        if over <= budget:
            state.messages = messages
            self._save()
            return
        # Reserve the summary's share while evicting, so folding turns in cannot overflow.
        summary_cap = int(budget * SUMMARY_SHARE)
        newest = messages[-1]
        kept = list(messages)
        evicted: list[WorkingMessage] = []
        reserve = REPLY_PRIMER_TOKENS + summary_cap + int(budget * COMPACTION_SLACK)
        while sum(self._cost(m) for m in kept) + reserve > budget:
            victim = next((m for m in kept if not m.pinned and m is not newest), None)
            if victim is None:
                break
            kept.remove(victim)
            evicted.append(victim)
        # Only after a budget cut on resume can pinned messages alone overflow: then the
        # oldest pinned ones leave too (archived like any turn), and last the newest is cut.
        while sum(self._cost(m) for m in kept) + REPLY_PRIMER_TOKENS > budget and len(kept) > 1:
            victim = next(m for m in kept if m is not newest)
            kept.remove(victim)
            evicted.append(victim)
        room = budget - REPLY_PRIMER_TOKENS - sum(self._cost(m) for m in kept if m is not newest)
        if self._cost(newest) > room:
            cut = self._cut(newest.role, newest.content, room)
            archived_id = newest.archived_id or self._archive([newest])[0]
            kept[-1] = replace(newest, content=cut, archived_id=archived_id)
        event = CompactionEvent(
            session_id=self.session_id, user_id=self.user_id, agent_id=self.agent_id,
            evicted=tuple(evicted), summary_before=summary, summary_after=None,
            archived_ids=(), tokens_before=over, tokens_after=None,
        )  # fmt: skip
        hooks = bool(evicted)  # a summary trimmed to make room evicts no turn: no hooks
        for hook in self._before if hooks else ():
            hook(event)
        archived = self._archive(evicted) if evicted else []
        room = budget - REPLY_PRIMER_TOKENS - sum(self._cost(m) for m in kept)
        target = min(summary_cap, room) - self._summary_cost("x") + self.counter.count("x")
        new_summary, rounds = self._fold(summary, evicted, target)
        if new_summary and self._mem.privacy is not None:  # a summariser may restate
            new_summary = redact(new_summary, self._mem.privacy).text
        # Tokens can merge across the prefix boundary; trim until the message fits the room.
        while new_summary and self._summary_cost(new_summary) > room:
            excess = self._summary_cost(new_summary) - room
            trimmed = self.counter.count(new_summary) - excess
            new_summary = self.counter.truncate(new_summary, max(trimmed, 0)).rstrip()
        state.messages = kept
        state.summary = new_summary
        state.summary_rounds += rounds
        state.evicted_count += len(evicted)
        self._save()
        done = replace(
            event,
            summary_after=new_summary,
            archived_ids=tuple(archived),
            tokens_after=self.tokens,
        )
        for hook in self._after if hooks else ():
            hook(done)

    def _fold(
        self, summary: str, evicted: Sequence[WorkingMessage], target: int
    ) -> tuple[str, int]:
        """The summary with ``evicted`` folded in, within ``target`` tokens; and 1 if the old
        summary itself had to be re-summarised (a hierarchical round), else 0."""
        if target < _MIN_SUMMARY_TOKENS:
            return "", 1 if summary else 0
        new_lines = [f"{m.role}: {m.content}" for m in evicted]
        summarizer = self._mem.summarizer
        if not isinstance(summarizer, ExtractiveSummarizer):
            return self._fold_generative(summary, new_lines, target)
        fresh = summarizer.summarize(new_lines, target, self.counter) if new_lines else ""
        if summary and fresh:  # a sentence already in the summary is not repeated
            known = set(summary.split("\n"))
            fresh = "\n".join(line for line in fresh.split("\n") if line not in known)
        joined = f"{summary}\n{fresh}" if summary and fresh else summary or fresh
        if self.counter.count(joined) <= target:
            return joined, 0
        # Over its share: summarise the old summary and the new lines together, giving
        # the new lines at least half the room so recent detail is not crowded out.
        fresh_part = summarizer.summarize(new_lines, target // 2, self.counter) if new_lines else ""
        rest = target - (self.counter.count(fresh_part) + 1 if fresh_part else 0)
        old_part = (
            summarizer.summarize(summary.split("\n"), max(rest, 0), self.counter) if summary else ""
        )
        merged = f"{old_part}\n{fresh_part}" if old_part and fresh_part else old_part or fresh_part
        if self.counter.count(merged) > target:
            merged = self.counter.truncate(merged, target)
        return merged, 1 if summary else 0

    def _fold_generative(self, summary: str, new_lines: list[str], target: int) -> tuple[str, int]:
        """:meth:`_fold` for a summariser that writes (an LLM): one request per compaction.

        The new turns get the room the summary leaves; when that is too little, the old
        summary's lines and the new turns are summarised together (a hierarchical round).
        """
        summarizer = self._mem.summarizer
        if not new_lines:
            return summary, 0
        room = target - (self.counter.count(summary) + 1 if summary else 0)
        if room >= _MIN_SUMMARY_TOKENS * 2:
            fresh = summarizer.summarize(new_lines, room, self.counter)
            joined = f"{summary}\n{fresh}" if summary and fresh else summary or fresh
            if self.counter.count(joined) <= target:
                return joined, 0
        merged = summarizer.summarize([*summary.split("\n"), *new_lines], target, self.counter)
        if self.counter.count(merged) > target:
            merged = self.counter.truncate(merged, target)
        return merged, 1 if summary else 0

    def _save(self) -> None:
        self._store.save(self._state)


def get_session_store(spec: SessionStore | str | None, conn: SQLiteConnection) -> SessionStore:
    """Resolve ``Memory(sessions=...)``.

    Args:
        spec: ``None`` or ``"sqlite"`` → :class:`SQLiteSessionStore` over ``conn`` (the
            memory's own file); a ``redis://``, ``rediss://`` or ``unix://`` URL, with
            optional ``prefix=`` and ``ttl=`` (seconds) options →
            :class:`mnemolayer.store.redis_sessions.RedisSessionStore` (needs the ``redis``
            extra); a :class:`SessionStore` is used as is.
        conn: the memory's store.

    Raises:
        ValidationError: an unknown name or URL scheme, a malformed URL, the ``redis``
            package missing, or an object that is not a session store (field
            ``"sessions"``).
        StoreError: Redis cannot be reached (the message names the URL without its
            password).
    """
    if spec is None or spec == "sqlite":
        return SQLiteSessionStore(conn)
    if isinstance(spec, str):
        if spec.startswith(("redis://", "rediss://", "unix://")):
            from mnemolayer.store.redis_sessions import RedisSessionStore

            return RedisSessionStore(spec)
        raise ValidationError("sessions", f"expected 'sqlite' or a redis:// URL, got {spec!r}")
    if not isinstance(spec, SessionStore):
        raise ValidationError("sessions", f"expected a SessionStore, got {type(spec).__name__}")
    return spec


def working(
    mem: Memory,
    *,
    session_id: str,
    user_id: str,
    budget_tokens: int = 4000,
    agent_id: str | None = None,
    counter: TokenCounter | str | None = None,
    store: SessionStore | None = None,
) -> WorkingMemory:
    """Open (or resume) the working-memory window of one session.

    Args:
        mem: the :class:`~mnemolayer.memory.Memory` whose episodic layer receives compacted
            turns (and whose SQLite file holds the window by default).
        session_id, user_id: the scope; required non-blank ids (at most 256 characters).
        budget_tokens: the window's budget in tokens, between :data:`MIN_BUDGET_TOKENS`
            and :data:`MAX_BUDGET_TOKENS`. A resumed window takes the new budget and is
            compacted at once if it no longer fits.
        agent_id: optional narrower scope.
        counter: the tokenizer (anything :func:`mnemolayer.text.tokens.get_token_counter`
            accepts; default ``"o200k_base"``).
        store: where the window persists; default ``mem.sessions`` (the memory's session
            store: its own SQLite file unless configured otherwise).

    Returns:
        The window: a saved one for this scope resumes exactly (messages, pins, summary,
        token count); otherwise an empty one.

    Raises:
        ValidationError: a bad id (fields ``"session_id"``, ``"user_id"``,
            ``"agent_id"``), budget (``"budget_tokens"``), encoding (``"encoding"``) or
            store (``"store"``).
    """
    session_id = v.scope_id(session_id, "session_id", required=True)
    user_id = v.scope_id(user_id, "user_id", required=True)
    agent_id = v.scope_id(agent_id, "agent_id")
    budget = _budget(budget_tokens)
    tok = get_token_counter(counter)
    if store is None:
        store = mem.sessions
    elif not isinstance(store, SessionStore):
        raise ValidationError("store", f"expected a SessionStore, got {type(store).__name__}")
    state = store.load(user_id, session_id, agent_id)
    if state is None:
        state = WindowState(
            user_id=user_id, session_id=session_id, agent_id=agent_id,
            budget_tokens=budget, encoding=tok.name,
        )  # fmt: skip
        return WorkingMemory(mem, state, counter=tok, store=store)
    changed = state.budget_tokens != budget or state.encoding != tok.name
    state.budget_tokens = budget
    state.encoding = tok.name
    wm = WorkingMemory(mem, state, counter=tok, store=store)
    if changed and state.messages:
        wm._fit(list(state.messages))
    return wm

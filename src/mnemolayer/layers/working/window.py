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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.extract.summarize import summarize
from mnemolayer.layers.working.compact import evict, fold
from mnemolayer.layers.working.state import (
    COMPACTION_SLACK,
    MAX_BUDGET_TOKENS,
    MIN_BUDGET_TOKENS,
    PINNED_SHARE,
    ROLES,
    SUMMARY_PREFIX,
    SUMMARY_SHARE,
    CompactionEvent,
    CompactionHook,
    SessionInfo,
    SessionStore,
    WindowState,
    WorkingMessage,
    check_budget,
)
from mnemolayer.models import MemoryRecord, new_id
from mnemolayer.privacy.redact import redact
from mnemolayer.registry import get_token_counter
from mnemolayer.store.sessions import SQLiteSessionStore
from mnemolayer.text.tokens import MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMER_TOKENS, TokenCounter

if TYPE_CHECKING:
    from mnemolayer.extract.summarize import Summarizer
    from mnemolayer.privacy.redact import RedactionConfig
    from mnemolayer.protocols import EpisodicSink

# The data types, the SQLite session store and the extractive summariser live in their
# own modules; their names stay importable from here, the working-memory face.
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
    "WindowServices",
    "WindowState",
    "WorkingHost",
    "WorkingMemory",
    "WorkingMessage",
    "open_window",
    "summarize",
    "working",
]


@dataclass(frozen=True)
class WindowServices:
    """What a window needs from the memory around it.

    Attributes:
        episodic: where turns leaving the window are stored (``add``, as
            :meth:`mnemolayer.Memory.add`).
        summarizer: folds evicted turns into the running summary.
        privacy: what is redacted before a turn is held (``None``: off).
        clock: returns "now" (aware UTC), the time of a turn given none.
        sessions: the session store windows persist in unless told otherwise.
    """

    episodic: EpisodicSink
    summarizer: Summarizer
    privacy: RedactionConfig | None
    clock: Callable[[], datetime]
    sessions: SessionStore


class WorkingHost(Protocol):
    """What :func:`working` takes a window's services from: a :class:`mnemolayer.Memory`."""

    sessions: SessionStore
    summarizer: Summarizer
    privacy: RedactionConfig | None

    def now(self) -> datetime: ...

    def add(
        self,
        messages: Any,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[MemoryRecord]: ...


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
        services: WindowServices,
        state: WindowState,
        *,
        counter: TokenCounter,
        store: SessionStore,
    ) -> None:
        self._services = services
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
        if role not in ROLES:
            raise ValidationError("role", f"must be one of {', '.join(ROLES)}, got {role!r}")
        content = v.content(content, "content")
        if self._services.privacy is not None:  # before it is held, counted or archived
            content = redact(content, self._services.privacy).text
        if not isinstance(pin, bool):
            raise ValidationError("pin", f"must be a bool, got {type(pin).__name__}")
        at = v.time(timestamp, "timestamp") or self._services.clock()
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

    def pop(self) -> WorkingMessage | None:
        """Take the newest message out of the window (an undo of the last :meth:`add`).

        The rest of the window and the running summary stay as they are, and the window
        is saved. The message is not archived; a truncated one keeps the episodic record
        of its full text that was stored when it was added. A pinned newest message is
        taken out too.

        Returns:
            The message taken out, or ``None`` when the window holds none.
        """
        messages = self._state.messages
        if not messages:
            return None
        newest = messages[-1]
        self._fit(messages[:-1])
        return newest

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
            records = self._services.episodic.add(
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
            # A turn whose memory was deleted before is skipped by add (it stays deleted):
            # it then has no archived record.
            skipped = {s.index for s in getattr(records, "skipped", ())}
            stored = iter(records)
            ids.update((m.id, "" if i in skipped else next(stored).id) for i, m in enumerate(full))
        return [ids[m.id] or "" for m in turns]

    def _fit(self, messages: list[WorkingMessage]) -> None:
        """Make ``messages`` the window, compacting until it fits the budget, and save.
        A save that fails (the session store down) leaves the window as it was, so a turn
        whose call raised is not saved later along with the next one."""
        state = self._state
        before = replace(state)  # shallow: _compact assigns fields, never mutates them
        try:
            self._compact(messages)
        except BaseException:
            for name in vars(before):
                setattr(state, name, getattr(before, name))
            raise

    def _compact(self, messages: list[WorkingMessage]) -> None:
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
        reserve = REPLY_PRIMER_TOKENS + summary_cap + int(budget * COMPACTION_SLACK)
        kept, evicted = evict(messages, self._cost, budget, reserve)
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
        new_summary, rounds = fold(
            self._services.summarizer, self.counter, summary, evicted, target
        )
        if new_summary and self._services.privacy is not None:  # a summariser may restate
            new_summary = redact(new_summary, self._services.privacy).text
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

    def _save(self) -> None:
        self._store.save(self._state)


def working(
    mem: WorkingHost,
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
        counter: the tokenizer (anything :func:`mnemolayer.registry.get_token_counter`
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
    services = WindowServices(mem, mem.summarizer, mem.privacy, mem.now, mem.sessions)
    return open_window(
        services, session_id=session_id, user_id=user_id, budget_tokens=budget_tokens,
        agent_id=agent_id, counter=counter, store=store,
    )  # fmt: skip


def open_window(
    services: WindowServices,
    *,
    session_id: str,
    user_id: str,
    budget_tokens: int = 4000,
    agent_id: str | None = None,
    counter: TokenCounter | str | None = None,
    store: SessionStore | None = None,
) -> WorkingMemory:
    """:func:`working` over the services themselves (the session service's way in)."""
    session_id = v.scope_id(session_id, "session_id", required=True)
    user_id = v.scope_id(user_id, "user_id", required=True)
    agent_id = v.scope_id(agent_id, "agent_id")
    budget = check_budget(budget_tokens)
    tok = get_token_counter(counter)
    if store is None:
        store = services.sessions
    elif not isinstance(store, SessionStore):
        raise ValidationError("store", f"expected a SessionStore, got {type(store).__name__}")
    state = store.load(user_id, session_id, agent_id)
    if state is None:
        state = WindowState(
            user_id=user_id, session_id=session_id, agent_id=agent_id,
            budget_tokens=budget, encoding=tok.name,
        )  # fmt: skip
        return WorkingMemory(services, state, counter=tok, store=store)
    changed = state.budget_tokens != budget or state.encoding != tok.name
    state.budget_tokens = budget
    state.encoding = tok.name
    wm = WorkingMemory(services, state, counter=tok, store=store)
    if changed and state.messages:
        wm._fit(list(state.messages))
    return wm

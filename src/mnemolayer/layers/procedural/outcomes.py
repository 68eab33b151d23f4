"""Recording outcomes and reading them back (:class:`OutcomeLog`): each report is one
``procedural`` memory written through the normal write path, its fields in the metadata."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemolayer import _validate as v
from mnemolayer.errors import ValidationError
from mnemolayer.layers.procedural.types import (
    MAX_DETAIL_CHARS,
    MAX_STRATEGY_CHARS,
    MAX_TASK_CHARS,
    RESERVED_KEYS,
    Outcome,
    as_outcome,
    checked_text,
    outcome_content,
)
from mnemolayer.lifecycle.config import LifecycleConfig
from mnemolayer.models import MemoryKind, MemoryRecord, content_hash, new_id
from mnemolayer.query import Scope

if TYPE_CHECKING:
    from mnemolayer.layers.episodic.write import EpisodicWriter
    from mnemolayer.store.base import SQLStore

__all__ = ["OutcomeLog"]


class OutcomeLog:
    """The outcomes of strategies, as memories: :meth:`record_outcome` and :meth:`outcomes`.

    Args:
        store: the open store.
        writer: the write path outcomes are stored through.
        clock: returns "now" (aware UTC).
        lifecycle: the settings that decide which outcomes are still active (TTL).
    """

    def __init__(
        self,
        store: SQLStore,
        writer: EpisodicWriter,
        clock: Callable[[], datetime],
        lifecycle: LifecycleConfig,
    ) -> None:
        self.store = store
        self.writer = writer
        self.clock = clock
        self.lifecycle = lifecycle

    # -- write -------------------------------------------------------------------------

    def record_outcome(
        self,
        *,
        user_id: str,
        task: str,
        strategy: str,
        success: bool,
        detail: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        timestamp: datetime | str | None = None,
        outcome_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        """Record that ``strategy`` succeeded or failed at ``task``.

        Stored as one ``procedural`` memory (role ``assistant``) whose content reads
        ``"Task: …\\nStrategy: …\\nOutcome: success|failure[\\nDetail: …]"`` and whose
        metadata holds ``task``, ``strategy``, ``success``, ``detail`` (when given) and
        ``outcome_id`` over the caller's ``metadata``. Personal data and secrets in the
        task, strategy, detail and metadata are redacted first, as ``Memory(privacy=...)``
        says (the outcome's strategy is then identified by its redacted text).

        Args:
            user_id: the tenant; required.
            task: what was attempted (non-blank, at most 2,000 characters); compared with
                other tasks by meaning.
            strategy: how (non-blank, at most 500 characters); identified by its
                normalised text (:func:`normalize_strategy`).
            success: ``True`` or ``False`` (a real ``bool``).
            detail: an optional note (error message, what went right), non-blank, at most
                100,000 characters.
            agent_id, session_id: narrower scope, as for :meth:`Memory.add`.
            timestamp: when the attempt happened (naive → UTC); default now.
            outcome_id: an idempotency key: recording the same ``outcome_id`` again (in
                the same user and agent scope) returns the first record unchanged. Without
                it every call is a new outcome, even with identical fields, so five
                identical successes count five times.
            metadata: extra JSON data; must not use the keys ``task``, ``strategy``,
                ``success``, ``detail`` or ``outcome_id``.

        Returns:
            The stored memory (or the earlier one for a repeated ``outcome_id``).

        Raises:
            ValidationError: blank or over-long ``task``/``strategy``, ``success`` not a
                bool, blank ``detail``, reserved metadata keys, bad ids, time or metadata.
        """
        task = checked_text(task, "task", MAX_TASK_CHARS)
        strategy = checked_text(strategy, "strategy", MAX_STRATEGY_CHARS)
        if not isinstance(success, bool):
            raise ValidationError("success", f"must be True or False, got {success!r}")
        if detail is not None:
            detail = checked_text(detail, "detail", MAX_DETAIL_CHARS)
        if outcome_id is not None:
            outcome_id = v.scope_id(outcome_id, "outcome_id")
        extra = v.metadata(metadata)
        for key in RESERVED_KEYS:
            if key in extra:
                raise ValidationError(
                    f"metadata.{key}", "is set by record_outcome; pass it as an argument"
                )
        oid = outcome_id or new_id()
        fields: dict[str, Any] = {"task": task, "strategy": strategy, "success": success}
        if detail is not None:
            fields["detail"] = detail
        fields["outcome_id"] = oid
        message = {
            "role": "assistant",
            "content": outcome_content(task, strategy, success, detail),
            "id": oid,
        }
        records = self.writer.records(
            [message], user_id=user_id, agent_id=agent_id, session_id=session_id,
            timestamp=timestamp, metadata={**extra, **fields}, kind=MemoryKind.PROCEDURAL.value,
        )  # fmt: skip
        # The idempotency key is the outcome, not its words: identical reports are
        # separate attempts unless the caller says they are one.
        record = records[0]
        keyed = record.model_copy(
            update={
                "content_hash": content_hash(
                    oid, record.agent_id, None, MemoryKind.PROCEDURAL.value, "record_outcome"
                )
            }
        )
        return self.writer.insert([keyed])[0]

    # -- read --------------------------------------------------------------------------

    def outcomes(self, *, user_id: str, agent_id: str | None = None) -> builtins.list[Outcome]:
        """Every recorded outcome of a user (and agent, when given), oldest first.

        Expired and superseded memories are left out, and so are ``procedural`` memories
        not written by :meth:`record_outcome`.

        Raises:
            ValidationError: bad ``user_id`` or ``agent_id``.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        agent_id = v.scope_id(agent_id, "agent_id")
        scope = Scope(user_id, agent_id=agent_id, kinds=(MemoryKind.PROCEDURAL.value,))
        records = self.store.active_records(scope, now=self.clock(), lifecycle=self.lifecycle)
        found = (as_outcome(r) for r in records)
        outs = [o for o in found if o is not None]
        outs.sort(key=lambda o: (o.occurred_at, o.id))
        return outs

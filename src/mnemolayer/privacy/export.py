"""Export and import of a store's memories and history as JSON-ready rows.

The row format (JSON Lines on disk) is ``{"type": "header" | "memory" | "entity" | "fact"
| "session" | "history", ...}``; memories (with their ``session_only`` flag), the
knowledge graph (entities with aliases, facts with their validity and provenance), the
working-memory windows of the memory's session store and history events are dumped
field for field, so an export imported into a new store reproduces the same ids, times,
metadata, facts, windows and audit trail.

A ``session`` row is one window: ``user_id``, ``session_id``, ``agent_id``,
``budget_tokens``, ``encoding``, ``summary``, ``summary_rounds``, ``evicted_count`` and
``messages`` (oldest first, each ``{"id", "role", "content", "created_at", "pinned",
"archived_id"}``).

A ``fact`` row may carry ``stated_at``: ``{source_id: ISO time}`` for the sources that
stated the fact for another time than its ``valid_from`` (a restatement that placed it
differently), so that provenance round-trips exactly.

A window's ``updated_at`` (when it was last saved) is not exported: an imported window
counts as saved at the import.

A ``memory`` row carries the record's ``source`` and ``flags`` (:mod:`mnemolayer.trust`),
so an import keeps where each memory came from and what was flagged in it.

Versions: 1 (no graph rows), 2 (no session rows, no ``session_only`` field), 3 (no
``stated_at`` on facts), 4 (no ``source`` or ``flags`` on memories: each gets the source
of its role, as migration 11 gives the records of an older store, and no flags) and 5
(the current one) are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from mnemolayer import _validate as v
from mnemolayer.errors import ValidationError
from mnemolayer.layers.working.window import (
    MAX_BUDGET_TOKENS,
    MIN_BUDGET_TOKENS,
    WindowState,
    WorkingMessage,
)
from mnemolayer.models import (
    Entity,
    Fact,
    HistoryEvent,
    MemoryKind,
    MemoryRecord,
    to_utc,
    validate_text_value,
)
from mnemolayer.query import Scope
from mnemolayer.retrieval.index import embed_records, keyword_terms
from mnemolayer.text.tokens import resolve_encoding
from mnemolayer.trust import default_source

if TYPE_CHECKING:
    from mnemolayer.embed.base import Embedder
    from mnemolayer.layers.working.window import SessionStore
    from mnemolayer.protocols import Progress, Txn
    from mnemolayer.store.base import SQLStore
    from mnemolayer.store.graph import GraphStore

__all__ = ["EXPORT_VERSION", "Transfer", "export_rows", "import_rows"]

#: The export format written; 1 (no graph rows), 2 (no windows), 3 (no ``stated_at``),
#: 4 (no ``source`` and ``flags`` on memories) and 5 are read.
EXPORT_VERSION = 5
_READ_VERSIONS = (1, 2, 3, 4, 5)
_ROW_TYPES = ("header", "memory", "entity", "fact", "session", "history")


class Transfer:
    """Export and import as the facade serves them: :meth:`export` and :meth:`import_rows`.

    Args:
        store: the open store.
        graph: the knowledge graph (entity and fact rows).
        sessions: the session store (window rows).
        embedder: re-embeds imported memories.
        require_model: raises while the store's vectors are another model's.
    """

    def __init__(
        self,
        store: SQLStore,
        graph: GraphStore,
        sessions: SessionStore,
        embedder: Embedder,
        require_model: Callable[[], None],
    ) -> None:
        self.store = store
        self.graph = graph
        self.sessions = sessions
        self.embedder = embedder
        self.require_model = require_model

    def export(self, *, user_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Yield JSON-ready rows: a ``header``, then ``memory``, ``entity``, ``fact``,
        ``session`` (working-memory windows, from :attr:`sessions`) and ``history`` rows;
        the format is described in :mod:`mnemolayer.privacy.export` (the header says
        ``"version": 5``, :data:`EXPORT_VERSION`; import reads versions 1 to 4 too).

        ``user_id`` limits the export to one user; ``None`` exports the whole store.
        """
        return export_rows(self, user_id=user_id)

    def import_rows(
        self, rows: Iterable[dict[str, Any]], *, progress: Progress | None = None
    ) -> int:
        """Import rows from :meth:`export` exactly (same ids, times, metadata, history,
        working-memory windows, each memory's source and flags); files of versions 1
        to 4 are read (their memories get the source of their role).

        Memories are re-embedded with the configured model, every one of them before
        the first is written (``progress(done, total)`` counts memories embedded), so an
        embedder that fails or answers wrongly leaves the store as it was. A memory whose
        id or content already exists is skipped (and so is its history), and so is a
        window whose scope already has one in :attr:`sessions`, so importing twice
        changes nothing.

        Returns:
            How many memories were imported.

        Raises:
            ValidationError: a row is malformed (names the row number and field); nothing
                is written then.
            EmbedderError: the embedder failed, or returned the wrong number of vectors,
                vectors of another dimension than its ``dim`` or non-finite values;
                nothing is written then.
        """
        return import_rows(self, rows, progress=progress)


def export_rows(transfer: Transfer, *, user_id: str | None = None) -> Iterator[dict[str, Any]]:
    """Yield JSON-ready rows: a ``header``, then ``memory``, ``entity``, ``fact``,
    ``session`` and ``history`` rows.

    ``user_id`` limits the export to one user; ``None`` exports the whole store.
    """
    uid = v.scope_id(user_id, "user_id") if user_id is not None else None
    yield {"type": "header", "format": "mnemolayer-export", "version": EXPORT_VERSION,
           "embedding_model": transfer.store.get_meta("embedding_model")}  # fmt: skip
    scope = Scope(uid) if uid is not None else None
    last: str | None = None
    transfer.store.flush_access(wait_s=1.0)
    while True:
        page = transfer.store.records_page(scope, after=last, limit=500)
        if not page:
            break
        for rec in page:
            yield {"type": "memory", **rec.to_json()}
        last = page[-1].id
    for entity in transfer.graph.export_entities(uid):
        # The row's "type" is the row kind, so the entity's own type is "entity_type".
        body = entity.model_dump(mode="json")
        yield {"type": "entity", "entity_type": body.pop("type"), **body}
    stated = transfer.graph.stated_times(uid)
    for fact in transfer.graph.export_facts(uid):
        row = {"type": "fact", **fact.model_dump(mode="json")}
        when = {
            source: at for source, at in stated.get(fact.id, {}).items() if at != fact.valid_from
        }
        if when:
            row["stated_at"] = {source: at.isoformat() for source, at in sorted(when.items())}
        yield row
    for state in _windows(transfer, uid):
        yield {"type": "session", **_window_row(state)}
    for event in transfer.store.history_rows(uid):
        yield {"type": "history", **event.model_dump(mode="json")}


def import_rows(
    transfer: Transfer, rows: Iterable[dict[str, Any]], *, progress: Progress | None = None
) -> int:
    """Import rows from :meth:`export` exactly (same ids, times, metadata, history,
    windows).

    Memories are re-embedded with the configured model, all before the first is written.
    A memory whose id or content already exists is skipped, and so is a window whose scope (user, agent, session)
    has one already, so importing twice changes nothing. Windows go to the memory's
    session store (``mem.sessions``) after the memories, graph and history.

    Returns:
        How many memories were imported.

    Raises:
        ValidationError: a row is malformed (names the row number and field).
    """
    if isinstance(rows, str | bytes | dict) or not isinstance(rows, Iterable):
        raise ValidationError(
            "rows", f"expected an iterable of row dicts, got {type(rows).__name__}"
        )
    transfer.require_model()
    records: list[MemoryRecord] = []
    entities: list[Entity] = []
    facts: list[tuple[int, Fact]] = []
    stated: dict[str, dict[str, datetime]] = {}
    events: list[HistoryEvent] = []
    event_rows: list[int] = []
    windows: list[WindowState] = []
    version = EXPORT_VERSION  # a file without a header is read as the current format
    for n, row in enumerate(rows):
        if not isinstance(row, dict) or row.get("type") not in _ROW_TYPES:
            raise ValidationError(f"rows[{n}].type", f"expected one of {', '.join(_ROW_TYPES)}")
        body = {k: val for k, val in row.items() if k != "type"}
        try:
            if row["type"] == "header":
                _check_header(row, f"rows[{n}]")
                version = int(row["version"])
            elif row["type"] == "memory":
                if version < 5 and "source" not in body:  # before sources were recorded
                    body["source"] = default_source(body.get("role"))
                rec = MemoryRecord.model_validate(body)
                _check_record(rec, f"rows[{n}]")
                records.append(rec)
            elif row["type"] == "entity":
                if "entity_type" in body:
                    body["type"] = body.pop("entity_type")
                entity = Entity.model_validate(body)
                v.scope_id(entity.user_id, f"rows[{n}].user_id", required=True)
                entities.append(entity)
            elif row["type"] == "fact":
                when = body.pop("stated_at", None)
                fact = Fact.model_validate(body)
                if when is not None:
                    stated[fact.id] = _stated_from_row(when, fact, f"rows[{n}].stated_at")
                v.scope_id(fact.user_id, f"rows[{n}].user_id", required=True)
                facts.append((n, fact))
            elif row["type"] == "session":
                windows.append(_window_from_row(body, f"rows[{n}]"))
            elif row["type"] == "history":
                event = HistoryEvent.model_validate(body)
                v.memory_id(event.memory_id, f"rows[{n}].memory_id")
                v.scope_id(event.user_id, f"rows[{n}].user_id", required=True)
                events.append(event)
                event_rows.append(n)
        except PydanticValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise ValidationError(f"rows[{n}].{loc}", err["msg"]) from exc
    _check_history_owners(transfer, records, events, event_rows)
    _check_fact_entities(transfer, entities, facts)
    skipped = _already_stored(transfer, records)
    # Facts drawn only from skipped messages are skipped with them: the store holds
    # those messages under other ids, and their facts already.
    derived_from_skipped = {
        r.id
        for r in records
        if r.kind == MemoryKind.SEMANTIC and r.source_ids and set(r.source_ids) <= skipped
    }
    skipped |= derived_from_skipped
    records = [r for r in records if r.id not in skipped]
    facts = [
        (n, f)
        for n, f in facts
        if f.memory_id not in skipped and not (f.source_ids and set(f.source_ids) <= skipped)
    ]
    # A message is also keyword-indexed with the sentences of the facts drawn from it.
    extra: dict[str, list[str]] = {}
    for r in records:
        if r.kind == MemoryKind.SEMANTIC and r.superseded_by is None:
            for source in r.source_ids:
                extra.setdefault(source, []).append(r.content)
    # Every memory is embedded before the first is written: an embedder that fails or
    # answers wrongly (check_vectors) part-way would otherwise leave the earlier batches
    # stored, and a retry would skip them and the facts drawn from them.
    total = len(records)
    batches: list[tuple[list[MemoryRecord], list[Any], list[str]]] = []
    for start in range(0, total, 64):
        part = records[start : start + 64]
        vectors = embed_records(transfer.embedder, part)
        terms = [keyword_terms(r, " ".join(extra.get(r.id, []))) for r in part]
        batches.append((part, vectors, terms))
        if progress:
            progress(min(start + 64, total), total)
    imported = 0
    for part, vectors, terms in batches:

        def write(c: Txn, part=part, vectors=vectors, terms=terms) -> int:
            done = 0
            for r, t, vec in zip(part, terms, vectors, strict=True):
                # Embedded here: only a pending extraction may still be pending.
                r2 = r.model_copy(
                    update={
                        "embedding_model": transfer.embedder.name,
                        "pending": [k for k in r.pending if k != "embedding"],
                    }
                )
                if transfer.store.insert(c, r2, t, vec, history=False) is None:
                    skipped.add(r.id)  # another writer stored the same content meanwhile
                else:
                    done += 1
            return done

        imported += transfer.store.transact(write)

    def write_graph_and_history(c: Txn) -> None:
        for entity in entities:
            transfer.graph.import_entity(c, entity)
        for n, fact in facts:
            try:
                new = transfer.graph.import_fact(c, fact)
            except ValidationError as exc:
                raise ValidationError(f"rows[{n}].{exc.field}", exc.message) from None
            if new and fact.id in stated:
                transfer.graph.set_stated_at(c, fact, stated[fact.id])
        for e in events:
            if e.memory_id not in skipped:
                transfer.store.insert_history(c, e)

    transfer.store.transact(write_graph_and_history)
    for state in windows:
        if transfer.sessions.load(state.user_id, state.session_id, state.agent_id) is None:
            transfer.sessions.save(state)
    return imported


# -- working-memory windows --------------------------------------------------------------


class _MessageRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    role: str
    content: str
    created_at: str
    pinned: bool = False
    archived_id: str | None = None


class _WindowRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str
    session_id: str
    agent_id: str | None = None
    budget_tokens: int
    encoding: str
    summary: str = ""
    summary_rounds: int = 0
    evicted_count: int = 0
    messages: list[_MessageRow] = []


def _windows(transfer: Transfer, user_id: str | None) -> Iterator[WindowState]:
    """The saved windows of one user, or of every user the store knows (by their
    memories, history or windows in the store's file), in a stable order."""
    if user_id is not None:
        users = [user_id]
    else:
        users = sorted(set(transfer.store.known_users()).union(transfer.sessions.list_users()))
    for user in users:
        infos = sorted(
            transfer.sessions.list_sessions(user), key=lambda i: (i.session_id, i.agent_id or "")
        )
        for info in infos:
            state = transfer.sessions.load(user, info.session_id, info.agent_id)
            if state is not None:
                yield state


def _stated_from_row(value: Any, fact: Fact, where: str) -> dict[str, datetime]:
    """A fact row's ``stated_at``: a mapping of the fact's own source ids to times.

    Raises:
        ValidationError: naming ``where`` (and the source id).
    """
    if not isinstance(value, dict):
        raise ValidationError(where, "expected an object of source id → ISO time")
    out: dict[str, datetime] = {}
    for source, at in value.items():
        if source not in fact.source_ids:
            raise ValidationError(f"{where}.{source}", "not one of the fact's source_ids")
        when = to_utc(at, f"{where}.{source}")
        if when is None:
            raise ValidationError(f"{where}.{source}", "expected an ISO-8601 time")
        out[source] = when
    return out


def _window_row(state: WindowState) -> dict[str, Any]:
    return {
        "user_id": state.user_id, "session_id": state.session_id, "agent_id": state.agent_id,
        "budget_tokens": state.budget_tokens, "encoding": state.encoding,
        "summary": state.summary, "summary_rounds": state.summary_rounds,
        "evicted_count": state.evicted_count,
        "messages": [
            {"id": m.id, "role": m.role, "content": m.content,
             "created_at": m.created_at.isoformat(), "pinned": m.pinned,
             "archived_id": m.archived_id}
            for m in state.messages
        ],
    }  # fmt: skip


def _window_from_row(body: dict[str, Any], where: str) -> WindowState:
    """A ``session`` row as a window, held to the rules of :func:`mnemolayer.layers.working.window.working`.

    Raises:
        ValidationError: naming ``where`` and the field.
        PydanticValidationError: a field of the wrong type (mapped by the caller).
    """
    row = _WindowRow.model_validate(body)
    v.scope_id(row.user_id, f"{where}.user_id", required=True)
    v.scope_id(row.session_id, f"{where}.session_id", required=True)
    v.scope_id(row.agent_id, f"{where}.agent_id")
    if not MIN_BUDGET_TOKENS <= row.budget_tokens <= MAX_BUDGET_TOKENS:
        raise ValidationError(
            f"{where}.budget_tokens",
            f"must be between {MIN_BUDGET_TOKENS} and {MAX_BUDGET_TOKENS}",
        )
    try:
        encoding = resolve_encoding(row.encoding)
    except ValidationError as exc:
        raise ValidationError(f"{where}.encoding", exc.message) from None
    for name in ("summary_rounds", "evicted_count"):
        if getattr(row, name) < 0:
            raise ValidationError(f"{where}.{name}", "must be ≥ 0")
    validate_text_value(row.summary, f"{where}.summary")
    messages: list[WorkingMessage] = []
    for i, m in enumerate(row.messages):
        at = f"{where}.messages[{i}]"
        v.memory_id(m.id, f"{at}.id")
        if m.role not in v.ROLES:
            raise ValidationError(f"{at}.role", f"must be one of {', '.join(v.ROLES)}")
        if m.archived_id is not None:
            v.memory_id(m.archived_id, f"{at}.archived_id")
        created = to_utc(m.created_at, f"{at}.created_at")
        assert created is not None
        content = v.content(m.content, f"{at}.content")
        messages.append(WorkingMessage(m.id, m.role, content, created, m.pinned, m.archived_id))
    return WindowState(
        user_id=row.user_id, session_id=row.session_id, agent_id=row.agent_id,
        budget_tokens=row.budget_tokens, encoding=encoding, messages=messages,
        summary=row.summary, summary_rounds=row.summary_rounds,
        evicted_count=row.evicted_count,
    )  # fmt: skip


def _already_stored(transfer: Transfer, records: list[MemoryRecord]) -> set[str]:
    """Ids of records the store holds already: the same id, or the same content in the
    same scope under another id."""
    skipped: set[str] = set()
    for start in range(0, len(records), 500):
        part = records[start : start + 500]
        skipped.update(transfer.store.owners([r.id for r in part])[0])
        by_user: dict[str, list[MemoryRecord]] = {}
        for r in part:
            if r.id not in skipped:
                by_user.setdefault(r.user_id, []).append(r)
        for user, recs in by_user.items():
            found = transfer.store.find_by_hash(None, user, [r.content_hash for r in recs])
            skipped.update(r.id for r in recs if r.content_hash in found)
    return skipped


def _check_record(rec: MemoryRecord, where: str) -> None:
    """Hold an imported record to the same rules as :meth:`Memory.add`."""
    v.memory_id(rec.id, f"{where}.id")
    v.scope_id(rec.user_id, f"{where}.user_id", required=True)
    v.scope_id(rec.agent_id, f"{where}.agent_id")
    v.scope_id(rec.session_id, f"{where}.session_id")
    v.content(rec.content, f"{where}.content")
    v.metadata(rec.metadata, f"{where}.metadata")
    if not 0.0 <= rec.importance <= 1.0:
        raise ValidationError(f"{where}.importance", f"must be in [0, 1], got {rec.importance}")
    if rec.access_count < 0:
        raise ValidationError(f"{where}.access_count", "must be ≥ 0")
    if rec.session_only and rec.session_id is None:
        raise ValidationError(f"{where}.session_only", "a session-only memory needs a session_id")


def _check_header(row: dict[str, Any], where: str) -> None:
    if row.get("format") != "mnemolayer-export":
        raise ValidationError(
            f"{where}.format", f"expected 'mnemolayer-export', got {row.get('format')!r}"
        )
    if row.get("version") not in _READ_VERSIONS:
        raise ValidationError(
            f"{where}.version",
            f"unsupported export version {row.get('version')!r}; "
            f"this mnemolayer reads versions {', '.join(map(str, _READ_VERSIONS))}",
        )


def _check_fact_entities(
    transfer: Transfer, entities: list[Entity], facts: list[tuple[int, Fact]]
) -> None:
    """A fact must link entities of its own user, from the file or from the store."""
    in_file = {e.id: e.user_id for e in entities}
    for n, fact in facts:
        for field, entity_id in (("subject_id", fact.subject_id), ("object_id", fact.object_id)):
            if entity_id is None:
                continue
            owner = in_file.get(entity_id)
            if owner is None:
                stored = transfer.graph.entity_by_id(None, fact.user_id, entity_id)
                owner = stored.user_id if stored is not None else None
            if owner != fact.user_id:
                raise ValidationError(
                    f"rows[{n}].{field}", f"no entity {entity_id} of user {fact.user_id!r}"
                )


def _check_history_owners(
    transfer: Transfer,
    records: list[MemoryRecord],
    events: list[HistoryEvent],
    event_rows: list[int],
) -> None:
    """A history event must belong to a memory of the same user in the file, or to a memory
    the store has never held (a deleted memory's trail): never to someone else's memory."""
    in_file = {r.id: r.user_id for r in records}
    stored, past = transfer.store.owners(sorted({e.memory_id for e in events} - set(in_file)))
    for n, e in zip(event_rows, events, strict=True):
        owner = in_file.get(e.memory_id) or stored.get(e.memory_id) or past.get(e.memory_id)
        if owner is not None and owner != e.user_id:
            raise ValidationError(
                f"rows[{n}].user_id", f"history of memory {e.memory_id} belongs to another user"
            )
        if e.memory_id in stored:
            raise ValidationError(
                f"rows[{n}].memory_id",
                f"memory {e.memory_id} is stored already and not in this file; "
                "its history cannot be changed by an import",
            )

"""``MEMORY.md``: one user's memories as a Markdown file a person can read and edit.

:meth:`mnemolayer.Memory.export_markdown` (CLI: ``mnemolayer export --user U --format
markdown``) writes the file; :meth:`mnemolayer.Memory.import_markdown` (CLI: ``mnemolayer
import MEMORY.md --user U``) applies the person's edits to the store.

The format::

    # Memory of ana

    <!-- mnemolayer:memory-md version=1 user="ana" exported=2024-05-08T12:00:00+00:00 -->

    ## Profile and preferences
    - Ana prefers jasmine tea <!-- id:0190c2... -->

    ## Facts
    - `2024-03-01 → now` Ana lives in Lisbon <!-- id:0190c3... -->

    ## Episodic memories
    ### 2024-03-01
    - `09:30 Ana` I bought a red bike <!-- id:0190c4... -->

    ## Procedural strategies
    - Ask for the budget before suggesting a bike <!-- id:0190c5... -->

    ## Summaries
    _(none)_

Rules:

* ``## `` headings name the sections, one per memory kind (``preference``,
  ``semantic``, ``episodic``, ``procedural``, ``summary``); in the episodic section
  ``### YYYY-MM-DD`` headings group memories by the day they happened (UTC).
* An item is a ``- `` bullet; a memory of several lines continues on lines indented by
  two spaces. The HTML comment ``<!-- id:... -->`` at its end (invisible when rendered)
  ties it to a stored memory. Facts and episodic memories start with a code span
  (validity; time and speaker) that is information only: it is ignored on import.
* Any other line (notes, ``_(none)_``, blank lines) is ignored.

Importing an edited file (:func:`apply_markdown`):

* an item whose text changed updates that memory (``Memory.update``; the history keeps
  the old text). A fact's sentence cannot be edited in place (its fact would disagree), so
  an edited fact is replaced: the old fact is deleted and the new line is stored as a
  message of the user, from which the fact is extracted anew;
* an item that was removed deletes its memory (``Memory.delete``; a ``DELETE`` event
  stays in the history). Only memories the file showed can be deleted so: those of the
  sections' kinds, current (not superseded, archived, merged or session-only) and not
  created or changed after the ``exported`` time of the header. A file without the header
  deletes nothing;
* a new bullet without an id adds a memory of its section's kind (a new line under Facts
  is stored as a message of the user, so the fact is extracted from it; under a ``###``
  date it happened on that day);
* an id that is not one of the user's memories, or a memory changed in the store since
  the export, is skipped and reported (``MarkdownImport.skipped``), never applied.

The file is parsed whole before anything is written, so a malformed file changes
nothing; the edits are then applied one by one.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from mnemolayer import _validate as v
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.layers.episodic.read import get_record
from mnemolayer.models import Fact, MemoryKind, MemoryRecord, to_utc

if TYPE_CHECKING:
    from mnemolayer.layers.episodic.write import EpisodicWriter
    from mnemolayer.store.base import SQLStore
    from mnemolayer.store.graph import GraphStore

__all__ = [
    "MarkdownImport",
    "MarkdownView",
    "apply_markdown",
    "parse_markdown",
    "render_markdown",
]

FORMAT_VERSION = 1
_SECTIONS: tuple[tuple[MemoryKind, str], ...] = (
    (MemoryKind.PREFERENCE, "Profile and preferences"),
    (MemoryKind.SEMANTIC, "Facts"),
    (MemoryKind.EPISODIC, "Episodic memories"),
    (MemoryKind.PROCEDURAL, "Procedural strategies"),
    (MemoryKind.SUMMARY, "Summaries"),
)
_TITLES = {title.lower(): kind for kind, title in _SECTIONS}
_ANNOTATED = (MemoryKind.SEMANTIC, MemoryKind.EPISODIC)
_HEADER = re.compile(
    r"<!--\s*mnemolayer:memory-md\s+version=(\d+)\s+user=(\"(?:[^\"\\]|\\.)*\")"
    r"\s+exported=(\S+)\s*-->"
)
_MARKER = re.compile(r"\s*<!--\s*id:(\S+?)\s*-->\s*$")
_NOTE = re.compile(r"^`[^`\n]*`\s?")
_BULLET = re.compile(r"^[-*]\s")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class MarkdownImport(BaseModel):
    """What :meth:`mnemolayer.Memory.import_markdown` did.

    Attributes:
        added: ids of the memories added (new bullets; for a new fact line, the message
            and the fact records extracted from it).
        updated: ids of memories whose text was changed.
        deleted: ids of memories deleted (their item was removed).
        replaced: ``{old fact record id: new message id}`` for edited facts.
        unchanged: items left as they were.
        skipped: items not applied, each ``{"line": n, "id": id, "reason": text}``.
    """

    model_config = ConfigDict(extra="forbid")

    added: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    replaced: dict[str, str] = Field(default_factory=dict)
    unchanged: int = 0
    skipped: list[dict[str, Any]] = Field(default_factory=list)


@dataclass
class _Item:
    line: int
    kind: MemoryKind
    text: str
    memory_id: str | None
    day: datetime | None


@dataclass
class _Parsed:
    user_id: str | None
    exported: datetime | None
    items: list[_Item]


# -- rendering ---------------------------------------------------------------------------


class MarkdownView:
    """``MEMORY.md`` as the facade serves it: :meth:`export_markdown` and
    :meth:`import_markdown`.

    Args:
        store: the open store.
        graph: the knowledge graph (a fact's validity is shown; an edited fact is
            replaced, not updated).
        writer: the write path edits are applied through (add, update, delete).
        clock: returns "now" (aware UTC), the file's export time.
    """

    def __init__(
        self,
        store: SQLStore,
        graph: GraphStore,
        writer: EpisodicWriter,
        clock: Callable[[], datetime],
    ) -> None:
        self.store = store
        self.graph = graph
        self.writer = writer
        self.clock = clock

    def export_markdown(self, *, user_id: str) -> str:
        """One user's memories as ``MEMORY.md``, a Markdown file a person can read and
        edit: sections per kind (profile and preferences, facts with their validity,
        episodic memories by day, procedural strategies, summaries), each item marked
        with its id in an HTML comment. The format is in :mod:`mnemolayer.privacy.markdown`.

        Raises:
            ValidationError: ``user_id`` is not a valid id.
        """
        return render_markdown(self, v.scope_id(user_id, "user_id", required=True))

    def import_markdown(self, text: str, *, user_id: str) -> MarkdownImport:
        """Apply a person's edits of :meth:`export_markdown`'s file: an edited item
        updates its memory (history kept; an edited fact is replaced), a removed item
        deletes it, a new bullet without an id adds one (rules in
        :mod:`mnemolayer.privacy.markdown`).

        Returns:
            What was added, updated, deleted, replaced and skipped.

        Raises:
            ValidationError: the file is malformed (nothing is written) or another
                user's.
        """
        user_id = v.scope_id(user_id, "user_id", required=True)
        return apply_markdown(self, text, user_id)


def shown_records(view: MarkdownView, user_id: str) -> list[MemoryRecord]:
    """The memories ``MEMORY.md`` shows: the user's current records of every kind
    (not superseded, archived, merged or session-only), oldest first."""
    out: list[MemoryRecord] = []
    last: str | None = None
    while True:
        page = view.store.current_records_page(user_id, after=last, limit=500)
        if not page:
            return out
        out += page
        last = page[-1].id


def render_markdown(view: MarkdownView, user_id: str) -> str:
    """``MEMORY.md`` of one user (the format is in this module's docstring)."""
    records = shown_records(view, user_id)
    facts: dict[str, Fact] = {
        f.memory_id: f for f in view.graph.export_facts(user_id) if f.memory_id
    }
    now = view.clock().astimezone(UTC)
    lines = [
        f"# Memory of {user_id}",
        "",
        f"<!-- mnemolayer:memory-md version={FORMAT_VERSION} "
        f"user={json.dumps(user_id, ensure_ascii=False)} exported={now.isoformat()} -->",
        "<!-- Edit freely: change an item's text to update it, delete an item to delete "
        "it, add a '- ' line to a section to add a memory. Keep the id comments. -->",
    ]
    for kind, title in _SECTIONS:
        lines += ["", f"## {title}"]
        mine = [r for r in records if r.kind == kind]
        if not mine:
            lines.append("_(none)_")
            continue
        if kind == MemoryKind.EPISODIC:
            mine.sort(key=lambda r: (_when(r), r.id))
            day = None
            for r in mine:
                when = _when(r)
                if when.date() != day:
                    day = when.date()
                    lines.append(f"### {day.isoformat()}")
                who = r.speaker or r.role or ""
                lines += _item(f"{when.strftime('%H:%M')} {who}".strip(), r)
        else:
            mine.sort(key=lambda r: (r.created_at, r.id))
            for r in mine:
                note = _validity(facts.get(r.id)) if kind == MemoryKind.SEMANTIC else None
                lines += _item(note, r)
    return "\n".join(lines) + "\n"


def _when(r: MemoryRecord) -> datetime:
    return (r.occurred_at or r.created_at).astimezone(UTC)


def _validity(fact: Fact | None) -> str:
    if fact is None:
        return "fact"
    start = fact.valid_from.date().isoformat()
    end = fact.valid_to.date().isoformat() if fact.valid_to is not None else "now"
    return f"{start} → {end}"


def _item(note: str | None, r: MemoryRecord) -> list[str]:
    """One bullet: the optional note as a code span, the content (continuation lines
    indented by two spaces) and the id marker."""
    body = r.content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if note is not None:
        clean = note.replace("`", "'")
        body[0] = f"`{clean}` {body[0]}"
    out = [f"- {body[0]}"] + [f"  {line}" for line in body[1:]]
    out[-1] += f" <!-- id:{r.id} -->"
    return out


# -- parsing -----------------------------------------------------------------------------


def parse_markdown(text: str) -> _Parsed:
    """Read a ``MEMORY.md`` (the format is in this module's docstring).

    Raises:
        ValidationError: ``markdown`` is not text, or a line is malformed (the field is
            ``markdown:<line number>``); an id that occurs twice.
    """
    if not isinstance(text, str):
        raise ValidationError("markdown", f"expected text, got {type(text).__name__}")
    user_id: str | None = None
    exported: datetime | None = None
    header = _HEADER.search(text)
    if header is not None:
        if int(header.group(1)) != FORMAT_VERSION:
            raise ValidationError("markdown", f"unsupported MEMORY.md version {header.group(1)}")
        try:
            user_id = json.loads(header.group(2))
        except ValueError:  # a control character or bad escape inside the quotes
            raise ValidationError(
                "markdown", f"the header's user {header.group(2)!r} is not a JSON string"
            ) from None
        exported = to_utc(header.group(3), "markdown.exported")
    items: list[_Item] = []
    kind: MemoryKind | None = None
    day: datetime | None = None
    open_item: list[str] | None = None
    start = 0

    def close() -> None:
        nonlocal open_item
        if open_item is not None:
            assert kind is not None
            items.append(_finish(start, kind, open_item, day))
        open_item = None

    for n, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        if open_item is not None and line.startswith("  "):
            open_item.append(line[2:])
            continue
        close()
        stripped = line.strip()
        if line.startswith("## "):
            title = stripped[3:].strip().lower()
            if title not in _TITLES:
                known = ", ".join(t for _, t in _SECTIONS)
                raise ValidationError(
                    f"markdown:{n}", f"unknown section {stripped[3:].strip()!r}; known: {known}"
                )
            kind, day = _TITLES[title], None
        elif line.startswith("### "):
            label = stripped[4:].strip()
            if kind != MemoryKind.EPISODIC or not _DAY.match(label):
                raise ValidationError(
                    f"markdown:{n}", "a '### YYYY-MM-DD' heading belongs in the episodic section"
                )
            day = to_utc(label, f"markdown:{n}")
        elif _BULLET.match(line):
            if kind is None:
                raise ValidationError(f"markdown:{n}", "an item before the first '## ' section")
            open_item, start = [line[2:]], n
    close()
    seen: dict[str, int] = {}
    for item in items:
        if item.memory_id is not None:
            if item.memory_id in seen:
                raise ValidationError(
                    f"markdown:{item.line}",
                    f"id {item.memory_id} is also on line {seen[item.memory_id]}",
                )
            seen[item.memory_id] = item.line
    return _Parsed(user_id, exported, items)


def _finish(line: int, kind: MemoryKind, body: list[str], day: datetime | None) -> _Item:
    memory_id = None
    marker = _MARKER.search(body[-1])
    if marker is not None:
        memory_id = marker.group(1)
        body[-1] = body[-1][: marker.start()]
    if kind in _ANNOTATED:
        body[0] = _NOTE.sub("", body[0], count=1)
    return _Item(line, kind, "\n".join(body).strip(), memory_id, day)


# -- applying ----------------------------------------------------------------------------


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _repair_ids(
    view: MarkdownView, user_id: str, items: list[_Item], shown: dict[str, MemoryRecord]
) -> None:
    """Give an item whose id comment names no memory of the user (a typo in the id) the
    id of the shown memory with exactly its text, when that memory is not listed under
    its own id: otherwise the memory would count as removed from the file and be
    deleted although its line is still there."""
    listed = {i.memory_id for i in items if i.memory_id is not None}
    by_text: dict[str, str] = {}
    for r in shown.values():
        if r.id not in listed:
            by_text.setdefault(" ".join(r.content.split()), r.id)
    for item in items:
        if item.memory_id is None or item.memory_id in shown:
            continue
        try:
            get_record(view.store, item.memory_id, user_id)
            continue  # a memory of the user that the file does not show (archived, say)
        except (NotFoundError, ValidationError):
            pass
        match = by_text.pop(" ".join(item.text.split()), None)
        if match is not None:
            item.memory_id = match


def apply_markdown(view: MarkdownView, text: str, user_id: str) -> MarkdownImport:
    """Apply the edits of a ``MEMORY.md`` to ``user_id``'s memories (rules in this
    module's docstring).

    Raises:
        ValidationError: the file is malformed (nothing is written), or it is another
            user's (``user_id``).
    """
    parsed = parse_markdown(text)
    if parsed.user_id is not None and parsed.user_id != user_id:
        raise ValidationError(
            "user_id", f"this MEMORY.md is user {parsed.user_id!r}'s, not {user_id!r}'s"
        )
    result = MarkdownImport()
    shown = {r.id: r for r in shown_records(view, user_id)}
    _repair_ids(view, user_id, parsed.items, shown)
    listed = {i.memory_id for i in parsed.items if i.memory_id is not None}
    exported = parsed.exported

    def changed_since(r: MemoryRecord) -> bool:
        return exported is None or r.created_at > exported or r.updated_at > exported

    def delete(memory_id: str) -> None:
        # A fact's record goes with the last message that stated it, so it may be gone
        # already when its own line comes: what the person asked for either way.
        with contextlib.suppress(NotFoundError):
            view.writer.delete(memory_id, user_id=user_id)
        result.deleted.append(memory_id)

    # Deletions first, so that an item moved to another line under a new text is no clash.
    for r in shown.values():
        if r.id not in listed and not changed_since(r):
            delete(r.id)
    for item in parsed.items:
        if item.memory_id is None:
            if item.text:
                result.added += _add(view, user_id, item)
            continue
        skip = {"line": item.line, "id": item.memory_id}
        try:
            rec = shown.get(item.memory_id) or get_record(view.store, item.memory_id, user_id)
        except (NotFoundError, ValidationError):
            result.skipped.append({**skip, "reason": "no such memory of this user"})
            continue
        if _same(item.text, rec.content):
            result.unchanged += 1
            continue
        if changed_since(rec):
            result.skipped.append({**skip, "reason": "changed in the store since the export"})
            continue
        if not item.text:
            delete(rec.id)
            continue
        try:
            if view.graph.fact_by_memory_id(user_id, rec.id) is not None:
                delete(rec.id)
                new = _add(view, user_id, _Item(item.line, MemoryKind.SEMANTIC, item.text, None,
                                               None))  # fmt: skip
                result.added += new
                if new:
                    result.replaced[rec.id] = new[0]
            else:
                view.writer.update(rec.id, content=item.text, user_id=user_id)
                result.updated.append(rec.id)
        except NotFoundError:
            # Deleted above with the message it came from (its source line was removed).
            result.skipped.append({**skip, "reason": "deleted with the message it came from"})
        except ValidationError as exc:
            result.skipped.append({**skip, "reason": str(exc)})
    return result


def _add(view: MarkdownView, user_id: str, item: _Item) -> list[str]:
    """Store a new item; the ids of the records that are new."""
    started = view.clock()
    if item.kind == MemoryKind.SEMANTIC:
        message: dict[str, Any] = {"role": "user", "content": item.text}
        if item.day is not None:
            message["timestamp"] = item.day
        records = view.writer.add(message, user_id=user_id)
    else:
        records = view.writer.add(
            item.text, user_id=user_id, kind=item.kind.value, timestamp=item.day
        )
    return [r.id for r in records if r.created_at >= started]

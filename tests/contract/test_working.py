"""Working memory (mnemolayer.layers.working.window): the budgeted window, compaction into a running
summary and episodic memory, pins, hooks, persistence and resume, input validation."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import Memory
from mnemolayer.errors import NotFoundError, ValidationError
from mnemolayer.layers.working.window import (
    SUMMARY_PREFIX,
    CompactionEvent,
    SessionInfo,
    SessionStore,
    SQLiteSessionStore,
    WindowState,
    WorkingMemory,
    summarize,
    working,
)
from mnemolayer.text.tokens import count_messages, get_token_counter

EN = [
    "I moved to Porto on May 3.",
    "Let's decide to use Postgres 16 for the billing service.",
    "ok thanks",
    "My sister Alice lives in Berlin and works at Siemens.",
    "Please remember that I am allergic to peanuts.",
    "The weather is nice today, so I went for a walk by the river.",
    "Sure, I can help with that.",
    "We agreed the launch is on Friday at 10:30.",
]
ZH = [
    "我下周三要去上海出差。",
    "好的",
    "请记住我对花生过敏。",
    "我们决定用 Redis 做缓存。",
    "今天天气不错，我去公园散步了。",
    "王经理说预算是三万元。",
]


def _turn(rng: random.Random, i: int) -> str:
    parts = [rng.choice(EN + ZH) for _ in range(rng.randint(1, 10))]
    return f"[turn {i}] " + " ".join(parts)


def _all_records(mem: Memory, user_id: str, session_id: str) -> list[Any]:
    items: list[Any] = []
    cursor = None
    while True:
        page = mem.list(user_id=user_id, session_id=session_id, limit=500, cursor=cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


def _snapshot(wm: WorkingMemory) -> dict[str, Any]:
    return {
        "messages": wm.messages(),
        "window": [(m.id, m.role, m.content, m.pinned, m.created_at.isoformat(), m.archived_id)
                   for m in wm.window()],
        "summary": wm.summary,
        "tokens": wm.tokens,
        "summary_rounds": wm.summary_rounds,
        "evicted_count": wm.evicted_count,
    }  # fmt: skip


# -- the bar ---------------------------------------------------------------------


def test_500_random_turns_through_a_1000_token_window(
    wsmem: Memory, sessions: str, clock: Any, db_path: Path
) -> None:
    smem = wsmem
    rng = random.Random(20240508)
    wm = working(smem, session_id="s1", user_id="u1", budget_tokens=1000)
    befores: list[CompactionEvent] = []
    afters: list[CompactionEvent] = []
    wm.on_compact(before=befores.append, after=afters.append)
    system = wm.add(
        "system", "You are a careful assistant. Answer in the user's language.", pin=True
    )
    pinned = {system.id}
    added: dict[str, tuple[str, str]] = {}  # message id -> (role, content)
    elapsed = 0.0
    for i in range(500):
        clock.advance(seconds=30)
        role = "user" if i % 2 == 0 else "assistant"
        content = _turn(rng, i)
        pin = rng.random() < 0.01 and len(pinned) < 6
        start = time.perf_counter()
        msg = wm.add(role, content, pin=pin)
        if rng.random() < 0.01 and len(pinned) < 6:  # pin an earlier turn still in the window
            candidates = [m for m in wm.window() if not m.pinned]
            if candidates:
                pinned.add(wm.pin(rng.choice(candidates).id).id)
        elapsed += time.perf_counter() - start
        if pin:
            pinned.add(msg.id)
        added[msg.id] = (role, content)

        assert wm.tokens <= 1000
        assert count_messages(wm.messages()) == wm.tokens  # the reported cost is exact
        window = wm.window()
        assert window and window[-1].id == msg.id  # never empty; the newest turn stays
        assert pinned <= {m.id for m in window}  # pinned never lost

    backend = sessions.partition(":")[0]
    print(f"\n500 turns ({backend}): {elapsed / 500 * 1000:.2f} ms per add (incl. pins)")
    assert wm.evicted_count > 300
    assert wm.summary and wm.summary_rounds > 0  # hierarchical: the summary was re-summarised
    summaries = [m for m in wm.messages() if m["content"].startswith(SUMMARY_PREFIX)]
    assert summaries == [{"role": "system", "content": SUMMARY_PREFIX + wm.summary}]
    assert wm.messages()[0]["content"] == system.content

    # Hooks: before and after see the same turns; every evicted turn is archived once.
    assert len(befores) == len(afters) > 0
    for b, a in zip(befores, afters, strict=True):
        assert b.evicted == a.evicted and b.summary_after is None and b.archived_ids == ()
        assert a.summary_after is not None and len(a.archived_ids) == len(a.evicted)
        assert a.tokens_after is not None and a.tokens_after <= 1000 < b.tokens_before
    evicted_ids = [m.id for e in afters for m in e.evicted]
    assert len(evicted_ids) == len(set(evicted_ids)) == wm.evicted_count

    # Every turn that left the window is in episodic memory with its role and time.
    in_window = {m.id for m in wm.window()}
    records = _all_records(smem, "u1", "s1")
    by_content = {(r.role, r.content): r for r in records}
    left = [mid for mid in added if mid not in in_window]
    assert len(left) == wm.evicted_count
    times = {m.id: m.created_at for e in afters for m in e.evicted}
    for mid in left:
        rec = by_content[added[mid]]
        assert rec.session_id == "s1" and rec.occurred_at is not None
        if rec.metadata.get("working_message_id") == mid:  # repeated texts share a record
            assert rec.occurred_at == times[mid]
    # ... and found by search.
    for mid in rng.sample(left, 5):
        role, content = added[mid]
        hits = smem.search(content, user_id="u1", session_id="s1", limit=5)
        assert any(h.memory.content == content for h in hits)

    # Resume on a new Memory over the same file and session backend: the same window.
    before = _snapshot(wm)
    smem.close()
    with Memory(db_path, embedder="hashing", clock=clock, sessions=sessions) as again:
        resumed = working(again, session_id="s1", user_id="u1", budget_tokens=1000)
        assert _snapshot(resumed) == before


def test_resume_in_a_new_process_is_identical(wmem: Memory, sessions: str, db_path: Path) -> None:
    mem = wmem
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=300)
    wm.add("system", "Keep answers short.", pin=True)
    rng = random.Random(7)
    for i in range(40):
        wm.add("user" if i % 2 == 0 else "assistant", _turn(rng, i))
    expected = {"messages": wm.messages(), "summary": wm.summary, "tokens": wm.tokens,
                "pins": [m.id for m in wm.window() if m.pinned]}  # fmt: skip
    mem.close()
    script = textwrap.dedent(
        f"""
        import json
        from mnemolayer import Memory
        from mnemolayer.layers.working.window import working
        mem = Memory({str(db_path)!r}, embedder="hashing", extractor=None,
                     sessions={sessions!r})
        wm = working(mem, session_id="s1", user_id="u1", budget_tokens=300)
        print(json.dumps({{"messages": wm.messages(), "summary": wm.summary,
                          "tokens": wm.tokens,
                          "pins": [m.id for m in wm.window() if m.pinned]}}))
        mem.close()
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == expected


# -- overflow edge cases -------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit", ["The quarterly report covers revenue and costs. ", "季度报告涵盖收入和成本。"]
)
def test_a_single_huge_turn_is_cut_to_fit_and_archived_whole(mem: Memory, unit: str) -> None:
    counter = get_token_counter()
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=200)
    pin = wm.add("system", "Be brief.", pin=True)
    wm.add("user", "hello there")
    huge = unit * 400
    assert counter.count(huge) > 2000
    msg = wm.add("user", huge)
    assert msg.truncated and huge.startswith(msg.content) and len(msg.content) < len(huge)
    assert wm.tokens <= 200 and count_messages(wm.messages()) == wm.tokens
    assert [m.id for m in wm.window()] == [pin.id, msg.id]
    assert msg.archived_id is not None
    assert mem.get(msg.archived_id).content == huge  # the full text is in episodic memory
    # Once it leaves the window it is not archived a second time.
    wm.add("assistant", "Noted.")
    wm.add("user", "thanks")
    contents = [r.content for r in _all_records(mem, "u1", "s1")]
    assert contents.count(huge) == 1
    assert "hello there" in contents


def test_huge_turn_in_a_fresh_window(mem: Memory) -> None:
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=64)
    msg = wm.add("user", "word " * 5000)
    assert msg.truncated and 0 < wm.tokens <= 64 and len(wm.window()) == 1


def test_no_compaction_while_it_fits(mem: Memory) -> None:
    calls: list[CompactionEvent] = []
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=4000)
    wm.on_compact(before=calls.append, after=calls.append)
    for i in range(10):
        wm.add("user", f"message number {i}")
    assert calls == [] and wm.summary == "" and len(wm.window()) == 10
    assert _all_records(mem, "u1", "s1") == []  # nothing archived yet


def test_a_raising_before_hook_leaves_the_window_unchanged(wmem: Memory) -> None:
    mem = wmem
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=100)

    def refuse(event: CompactionEvent) -> None:
        raise RuntimeError("not now")

    wm.on_compact(before=refuse)
    i = 0
    while True:
        snap = _snapshot(wm)
        try:
            wm.add("user", f"note {i}: the meeting moved to room {i}.")
        except RuntimeError:
            break
        i += 1
    assert _snapshot(wm) == snap
    assert _snapshot(working(mem, session_id="s1", user_id="u1", budget_tokens=100)) == snap
    assert _all_records(mem, "u1", "s1") == []


def test_resume_with_a_smaller_budget_compacts_at_once(wmem: Memory) -> None:
    mem = wmem
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=2000)
    wm.add("system", "Rules: " + "be kind. " * 100, pin=True)
    for i in range(30):
        wm.add("user", f"On day {i} I paid {i * 7} euros for lunch with Bob.")
    small = working(mem, session_id="s1", user_id="u1", budget_tokens=100)
    assert 0 < small.tokens <= 100
    assert small.window()[-1].content.startswith("On day 29")
    contents = {r.content for r in _all_records(mem, "u1", "s1")}
    assert "On day 0 I paid 0 euros for lunch with Bob." in contents
    assert any(c.startswith("Rules: ") for c in contents)  # the pin left, archived


# -- pins, scope, stores -------------------------------------------------------------------


def test_pin_and_unpin(mem: Memory) -> None:
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=120)
    first = wm.add("user", "My name is Zoe and I live in Lyon.")
    pinned = wm.pin(first.id)
    assert pinned.pinned and wm.pin(first.id) == pinned
    for i in range(20):
        wm.add("assistant", f"Reply {i} with some filler text to fill the window.")
    assert first.id in {m.id for m in wm.window()}
    assert wm.messages()[0]["content"] == first.content
    wm.unpin(first.id)
    for i in range(20):
        wm.add("assistant", f"More filler {i} so the window overflows again.")
    assert first.id not in {m.id for m in wm.window()}
    with pytest.raises(NotFoundError, match="message_id"):
        wm.pin(first.id)


def test_pinning_past_the_pinned_share_is_refused(mem: Memory) -> None:
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=100)
    big = wm.add("user", "alpha beta gamma delta " * 20)
    with pytest.raises(ValidationError) as err:
        wm.pin(big.id)
    assert err.value.field == "message_id"
    with pytest.raises(ValidationError) as err:
        wm.add("system", "alpha beta gamma delta " * 20, pin=True)
    assert err.value.field == "pin"


def test_windows_are_separate_per_scope(wmem: Memory) -> None:
    mem = wmem
    a = working(mem, session_id="s1", user_id="u1")
    b = working(mem, session_id="s2", user_id="u1")
    c = working(mem, session_id="s1", user_id="u2")
    d = working(mem, session_id="s1", user_id="u1", agent_id="bot")
    for wm, text in ((a, "a"), (b, "b"), (c, "c"), (d, "d")):
        wm.add("user", f"hello from {text}")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"session_id": "s1", "user_id": "u1"}, "a"),
        ({"session_id": "s2", "user_id": "u1"}, "b"),
        ({"session_id": "s1", "user_id": "u2"}, "c"),
        ({"session_id": "s1", "user_id": "u1", "agent_id": "bot"}, "d"),
    ]
    for args, text in cases:
        assert working(mem, **args).messages() == [
            {"role": "user", "content": f"hello from {text}"}
        ]


def test_sqlite_session_store_and_clear(mem: Memory) -> None:
    store = SQLiteSessionStore(mem.store)
    assert isinstance(store, SessionStore)
    wm = working(mem, session_id="s1", user_id="u1", store=store)
    wm.add("user", "Remember: the code word is Falcon.")
    state = store.load("u1", "s1", None)
    assert state is not None and [m.content for m in state.messages] == [
        "Remember: the code word is Falcon."
    ]
    wm.clear()
    assert store.load("u1", "s1", None) is None and wm.messages() == [] and wm.tokens == 0
    assert [r.content for r in _all_records(mem, "u1", "s1")] == [
        "Remember: the code word is Falcon."
    ]
    assert store.delete("u1", "s1", None) is False
    working(mem, session_id="a", user_id="u1").add("user", "one")
    working(mem, session_id="b", user_id="u1").add("user", "two")
    working(mem, session_id="a", user_id="u2").add("user", "three")
    assert store.delete_user("u1") == 2
    assert store.load("u1", "a", None) is None and store.load("u2", "a", None) is not None


class DictStore:
    """A session store in a dict: shows the protocol is all a backend needs."""

    def __init__(self) -> None:
        self.saved: dict[tuple[str, str, str | None], WindowState] = {}
        self.updated: dict[tuple[str, str, str | None], datetime] = {}

    def load(self, user_id: str, session_id: str, agent_id: str | None) -> WindowState | None:
        return self.saved.get((user_id, session_id, agent_id))

    def save(self, state: WindowState) -> None:
        key = (state.user_id, state.session_id, state.agent_id)
        self.saved[key] = state
        self.updated[key] = datetime.now(UTC)

    def list_sessions(self, user_id: str) -> list[SessionInfo]:
        infos = [
            SessionInfo(user_id=u, session_id=s, agent_id=a, budget_tokens=st.budget_tokens,
                        messages=len(st.messages), evicted_count=st.evicted_count,
                        summary_rounds=st.summary_rounds, updated_at=self.updated[(u, s, a)])
            for (u, s, a), st in self.saved.items()
            if u == user_id
        ]  # fmt: skip
        return sorted(
            infos, key=lambda i: self.updated[(user_id, i.session_id, i.agent_id)], reverse=True
        )

    def delete(self, user_id: str, session_id: str, agent_id: str | None) -> bool:
        return self.saved.pop((user_id, session_id, agent_id), None) is not None

    def list_users(self) -> list[str]:
        return sorted({k[0] for k in self.saved})

    def delete_user(self, user_id: str) -> int:
        keys = [k for k in self.saved if k[0] == user_id]
        for k in keys:
            del self.saved[k]
        return len(keys)


def test_a_custom_session_store(mem: Memory) -> None:
    store = DictStore()
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=80, store=store)
    for i in range(12):
        wm.add("user", f"Fact {i}: Tom bought {i} apples on Monday.")
    assert ("u1", "s1", None) in store.saved and wm.evicted_count > 0
    assert mem.store.read("SELECT count(*) FROM working_sessions")[0][0] == 0
    [info] = store.list_sessions("u1")
    assert (info.session_id, info.evicted_count) == ("s1", wm.evicted_count)


def test_list_sessions_newest_first(wmem: Memory) -> None:
    mem = wmem
    assert mem.sessions.list_sessions("u1") == []
    a = working(mem, session_id="a", user_id="u1", budget_tokens=80)
    for i in range(8):
        a.add("user", f"Fact {i}: Tom bought {i} apples on Monday.")
    working(mem, session_id="b", user_id="u1", agent_id="bot", budget_tokens=500).add(
        "user", "hello"
    )
    working(mem, session_id="a", user_id="u2").add("user", "someone else")
    infos = mem.sessions.list_sessions("u1")
    assert [(i.session_id, i.agent_id) for i in infos] == [("b", "bot"), ("a", None)]
    b_info, a_info = infos
    assert (b_info.budget_tokens, b_info.messages, b_info.evicted_count) == (500, 1, 0)
    assert a_info == SessionInfo(
        user_id="u1", session_id="a", agent_id=None, budget_tokens=80,
        messages=len(a.window()), evicted_count=a.evicted_count,
        summary_rounds=a.summary_rounds, updated_at=a_info.updated_at,
    )  # fmt: skip
    assert a.evicted_count > 0
    assert a_info.updated_at is not None and b_info.updated_at is not None
    assert a_info.updated_at.tzinfo is not None and a_info.updated_at <= b_info.updated_at
    a.add("user", "one more")  # saving again makes it the newest
    assert [i.session_id for i in mem.sessions.list_sessions("u1")] == ["a", "b"]
    a.clear()
    assert [i.session_id for i in mem.sessions.list_sessions("u1")] == ["b"]


# -- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, -5, 63, 10_000_001, True, 1000.0, "1000", None])
def test_budget_validation(mem: Memory, budget: Any) -> None:
    with pytest.raises(ValidationError) as err:
        working(mem, session_id="s1", user_id="u1", budget_tokens=budget)
    assert err.value.field == "budget_tokens"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"session_id": "", "user_id": "u1"}, "session_id"),
        ({"session_id": None, "user_id": "u1"}, "session_id"),
        ({"session_id": "s1", "user_id": "  "}, "user_id"),
        ({"session_id": "s1", "user_id": 7}, "user_id"),
        ({"session_id": "s1", "user_id": "u1", "agent_id": ""}, "agent_id"),
        ({"session_id": "s1", "user_id": "u1", "counter": "no-such-encoding"}, "encoding"),
        ({"session_id": "s1", "user_id": "u1", "store": object()}, "store"),
    ],
)
def test_scope_validation(mem: Memory, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        working(mem, **kwargs)
    assert err.value.field == field


def test_add_and_hook_validation(mem: Memory) -> None:
    wm = working(mem, session_id="s1", user_id="u1")
    cases: list[tuple[tuple[Any, ...], dict[str, Any], str]] = [
        (("robot", "hi"), {}, "role"),
        (("user", "   "), {}, "content"),
        (("user", 5), {}, "content"),
        (("user", "hi"), {"pin": "yes"}, "pin"),
        (("user", "hi"), {"timestamp": "not a time"}, "timestamp"),
    ]
    for args, kwargs, field in cases:
        with pytest.raises(ValidationError) as err:
            wm.add(*args, **kwargs)
        assert err.value.field == field
    with pytest.raises(ValidationError) as err:
        wm.on_compact(after=42)  # type: ignore[arg-type]
    assert err.value.field == "after"
    assert wm.messages() == []


# -- the summariser ------------------------------------------------------------------------


def test_summarize_prefers_names_numbers_dates_and_decisions() -> None:
    lines = [
        "user: ok. thanks. sounds good.",
        "assistant: I see. That is interesting.",
        "user: We decided to ship version 2.4 on March 14.",
        "user: My manager Priya Shah approved it.",
        "assistant: 好的。我们决定下周三发布。",
    ]
    counter = get_token_counter()
    text = summarize(lines, 45, counter)
    assert counter.count(text) <= 45
    assert "user: We decided to ship version 2.4 on March 14." in text
    assert "Priya Shah" in text and "下周三" in text
    assert "sounds good" not in text
    # Original order is kept.
    assert text.index("March 14") < text.index("Priya") < text.index("下周三")


def test_summarize_edges() -> None:
    counter = get_token_counter()
    assert summarize([], 100) == ""
    assert summarize(["user: hello. hello. hello."], 100) == "user: hello."
    long_sentence = "The deployment on 2024-05-01 " + "really " * 200 + "failed."
    cut = summarize([long_sentence], 10, counter)
    assert 0 < counter.count(cut) <= 10 and long_sentence.startswith(cut)
    with pytest.raises(ValidationError) as err:
        summarize(["x"], -1)
    assert err.value.field == "max_tokens"


def test_delete_all_of_a_user_removes_their_windows(wmem: Memory) -> None:
    mem = wmem
    for session in ("s1", "s2"):
        wm = mem.working(session_id=session, user_id="gone", budget_tokens=200)
        wm.add("user", "remember that my locker code is 4512")
    mem.working(session_id="s1", user_id="kept", budget_tokens=200).add("user", "hi")
    assert len(mem.sessions.list_sessions("gone")) == 2
    mem.delete_all(user_id="gone")
    assert mem.sessions.list_sessions("gone") == []
    assert mem.sessions.load("gone", "s2", None) is None
    again = mem.working(session_id="s1", user_id="gone", budget_tokens=200)
    assert again.messages() == []
    assert [i.user_id for i in mem.sessions.list_sessions("kept")] == ["kept"]


def test_async_memory_gives_the_window(new_db: Callable[[str], Any], tmp_path) -> None:
    import anyio

    from mnemolayer import AsyncMemory

    async def main() -> list:
        async with AsyncMemory(new_db("a"), embedder="hashing") as am:
            wm = await am.working(session_id="s1", user_id="u1", budget_tokens=200)
            wm.add("user", "hello there")
            return wm.messages()

    assert anyio.run(main) == [{"role": "user", "content": "hello there"}]


def test_pop_takes_the_newest_message_back_and_is_saved(mem: Memory) -> None:
    wm = working(mem, session_id="s1", user_id="u1", budget_tokens=4000)
    assert wm.pop() is None  # an empty window
    first = wm.add("user", "hello")
    second = wm.add("assistant", "hi there")
    assert wm.pop() == second
    assert [m.id for m in wm.window()] == [first.id]
    assert count_messages(wm.messages()) == wm.tokens
    again = working(mem, session_id="s1", user_id="u1", budget_tokens=4000)
    assert [m.id for m in again.window()] == [first.id]  # the pop was saved
    assert _all_records(mem, "u1", "s1") == []  # a popped message is not archived

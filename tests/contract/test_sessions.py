"""Session lifecycle (mnemolayer.layers.working.sessions): session-only memories, ``end_session`` (window
archived, one findable summary, session-only memories and their facts cleared),
idempotence, agent scopes, validation, the async wrapper."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mnemolayer import AsyncMemory, Memory, ValidationError
from mnemolayer.layers.working.sessions import SessionEnd, is_session_summary
from mnemolayer.layers.working.window import SUMMARY_PREFIX, WorkingMemory
from mnemolayer.text.tokens import TokenCounter, get_token_counter

CHAT = [
    ("user", "We are planning the team offsite for Friday, June 14."),
    ("assistant", "Great, how many people are coming?"),
    ("user", "Twelve people. Marta Silva booked the Quinta do Lago venue for 2,400 euros."),
    ("assistant", "Noted: 12 people at Quinta do Lago, 2,400 euros."),
    ("user", "Please remember that Jonas is allergic to peanuts."),
    ("assistant", "I will tell the caterer about the peanut allergy."),
    ("user", "The bus leaves Lisbon at 8:30 from the Oriente station."),
    ("assistant", "Bus at 8:30 from Oriente, got it."),
    ("user", "ok thanks"),
    ("assistant", "You're welcome!"),
]


def run_chat(
    mem: Memory, clock: Any, *, session: str = "s1", budget: int = 120, **kw: Any
) -> WorkingMemory:
    wm = mem.working(session_id=session, user_id="u1", budget_tokens=budget, **kw)
    wm.add("system", "You are the offsite planning assistant.", pin=True)
    for role, text in CHAT:
        clock.advance(minutes=1)
        wm.add(role, text)
    return wm


def all_records(mem: Memory, user: str = "u1", **scope: Any) -> list[Any]:
    out: list[Any] = []
    cursor = None
    while True:
        page = mem.list(user_id=user, cursor=cursor, **scope)
        out.extend(page.items)
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


def zeros(end: SessionEnd) -> bool:
    return (end.summary, end.archived, end.cleared, end.window_closed, end.turns) == (
        None,
        0,
        0,
        False,
        0,
    )


# -- session-only memories -----------------------------------------------------------------


def test_session_only_memories_are_searchable_while_the_session_lives(mem: Memory) -> None:
    [temp] = mem.add("The guest wifi password is tulip-42", user_id="u1", session_id="s1",
                     session_only=True)  # fmt: skip
    assert temp.session_only and temp.to_json()["session_only"] is True
    assert mem.get(temp.id).session_only
    assert [h.id for h in mem.search("wifi password", user_id="u1")] == [temp.id]
    assert [r.id for r in mem.list(user_id="u1", session_id="s1")] == [temp.id]
    [permanent] = mem.add("a permanent note", user_id="u1", session_id="s1")
    assert not permanent.session_only


def test_session_only_and_permanent_copies_are_kept_apart(mem: Memory) -> None:
    text = "Meet at the north entrance"
    [temp] = mem.add(text, user_id="u1", session_id="s1", session_only=True)
    assert mem.add(text, user_id="u1", session_id="s1", session_only=True) == [temp]
    [kept] = mem.add(text, user_id="u1", session_id="s1")
    assert kept.id != temp.id and not kept.session_only
    assert mem.add(text, user_id="u1", session_id="s1") == [kept]
    end = mem.end_session("s1", "u1")
    assert end.cleared == 1 and end.summary is not None
    assert end.summary.source_ids == [kept.id]  # session-only turns are not summarised
    assert [r.id for r in all_records(mem)] == [kept.id, end.summary.id]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"session_only": True}, "session_only"),
        ({"session_only": 1, "session_id": "s1"}, "session_only"),
        ({"session_only": "yes", "session_id": "s1"}, "session_only"),
    ],
)
def test_session_only_validation(mem: Memory, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        mem.add("text", user_id="u1", **kwargs)
    assert err.value.field == field
    assert all_records(mem) == []


# -- end_session -------------------------------------------------------------------------


def test_end_session_archives_the_window_and_writes_one_findable_summary(
    mem: Memory, clock: Any
) -> None:
    wm = run_chat(mem, clock)
    assert wm.evicted_count > 0  # the budget forced compaction: some turns are stored already
    pending = [m for m in wm.window() if m.archived_id is None]
    last_turn_at = wm.window()[-1].created_at
    end = mem.end_session("s1", "u1", summary_tokens=120)

    assert end.window_closed and end.archived == len(pending) > 0
    assert mem.sessions.load("u1", "s1", None) is None and mem.list_sessions("u1") == []
    turns = [r for r in all_records(mem) if not is_session_summary(r)]
    said = {text for _role, text in CHAT} | {"You are the offsite planning assistant."}
    assert {r.content for r in turns} == said  # no turn lost
    summary = end.summary
    assert summary is not None and end.turns == len(turns) == len(summary.source_ids)
    assert set(summary.source_ids) == {r.id for r in turns}
    assert (summary.kind.value, summary.role, summary.session_id) == ("episodic", "system", "s1")
    assert not summary.session_only and summary.occurred_at == last_turn_at
    assert summary.metadata == {
        "session_summary": True, "turns": len(turns),
        "started_at": min(r.occurred_at for r in turns).isoformat(timespec="microseconds"),
        "ended_at": last_turn_at.isoformat(timespec="microseconds"),
        "summarizer": "extractive", "encoding": "o200k_base",
    }  # fmt: skip
    assert get_token_counter("o200k_base").count(summary.content) <= 120
    for kept in ("Marta Silva", "2,400", "8:30", "peanuts"):
        assert kept in summary.content
    assert summary.content.startswith(("system: ", "user: ", "assistant: "))
    # Findable: by search and by its metadata.
    hits = mem.search("Quinta do Lago venue price", user_id="u1", limit=20)
    assert summary.id in [h.id for h in hits]
    only = mem.search("offsite", user_id="u1", filters={"session_summary": True})
    assert [h.id for h in only] == [summary.id]


def test_ending_twice_or_an_unknown_session_changes_nothing(mem: Memory, clock: Any) -> None:
    run_chat(mem, clock)
    assert not zeros(mem.end_session("s1", "u1"))
    before = all_records(mem)
    stats = mem.stats()
    again = mem.end_session("s1", "u1")
    assert zeros(again) and (again.session_id, again.user_id, again.agent_id) == ("s1", "u1", None)
    assert all_records(mem) == before and mem.stats()["history_events"] == stats["history_events"]
    assert zeros(mem.end_session("never-seen", "u1"))
    assert zeros(mem.end_session("s1", "someone-else"))


def test_a_session_without_turns_gets_no_summary(mem: Memory) -> None:
    [temp] = mem.add("scratch: try the blue theme", user_id="u1", session_id="s1",
                     session_only=True)  # fmt: skip
    mem.working(session_id="s1", user_id="u1", budget_tokens=500)  # opened, never saved
    end = mem.end_session("s1", "u1")
    assert (end.summary, end.cleared, end.turns, end.window_closed) == (None, 1, 0, False)
    assert all_records(mem) == []
    [event] = [e for e in mem.history(temp.id) if e.event == "DELETE"]
    assert event.old_content is None  # a temporary memory leaves no copy in the audit trail


def test_a_window_of_pending_turns_only_is_archived_whole(mem: Memory, clock: Any) -> None:
    wm = mem.working(session_id="s1", user_id="u1", budget_tokens=4000)
    for role, text in CHAT[:4]:
        clock.advance(minutes=1)
        wm.add(role, text)
    assert all_records(mem) == []
    end = mem.end_session("s1", "u1")
    assert (end.archived, end.turns, end.window_closed) == (4, 4, True)
    assert [r.content for r in all_records(mem) if not is_session_summary(r)] == [
        t for _r, t in CHAT[:4]
    ]


def test_session_only_memories_and_their_facts_are_cleared(smem: Memory, clock: Any) -> None:
    smem.add("I live in Lisbon", user_id="u1", session_id="s0")
    clock.advance(days=1)
    smem.add("I work at Siemens", user_id="u1", session_id="s0")
    clock.advance(days=1)
    temp = smem.add(
        ["I live in Porto now", "I have a dog named Rex", "I work at Siemens"],
        user_id="u1", session_id="s1", session_only=True,
    )  # fmt: skip
    other = smem.add("I play the cello", user_id="u1", session_id="s2", session_only=True)
    current = {(f.predicate, f.object) for f in smem.facts(user_id="u1")}
    assert {("lives_in", "Porto"), ("works_at", "Siemens")} <= current
    assert ("lives_in", "Lisbon") not in current  # the session-only move closed it

    end = smem.end_session("s1", "u1")
    assert end.cleared == 3 and end.summary is None  # nothing permanent was said in s1
    current = {(f.predicate, f.object) for f in smem.facts(user_id="u1")}
    assert ("lives_in", "Lisbon") in current  # reopened: the move was temporary
    assert ("lives_in", "Porto") not in current
    assert not any(f.object == "Rex" for f in smem.facts(user_id="u1", include_history=True))
    assert ("works_at", "Siemens") in current  # stated permanently too: it stays
    [works] = [f for f in smem.facts(user_id="u1") if f.predicate == "works_at"]
    assert temp[2].id not in works.source_ids
    ids = {r.id for r in all_records(smem)}
    assert not ids & {r.id for r in temp} and other[0].id in ids  # s2 untouched
    for r in temp:
        assert [e.event for e in smem.history(r.id)][-1] == "DELETE"
    # Search no longer finds what only the session knew.
    assert not any("Porto" in h.content for h in smem.search("Porto", user_id="u1"))


def test_the_summary_states_no_facts_of_its_own(smem: Memory, clock: Any) -> None:
    wm = smem.working(session_id="s1", user_id="u1", budget_tokens=4000)
    wm.add("user", "I live in Porto and my sister Alice lives in Berlin.")
    wm.add("assistant", "Porto and Berlin, noted.")
    end = smem.end_session("s1", "u1")
    assert end.summary is not None and "Porto" in end.summary.content
    facts = smem.facts(user_id="u1", include_history=True)
    assert facts and all(end.summary.id not in f.source_ids for f in facts)
    assert smem.extract_facts(user_id="u1") == 0  # and nothing left to mine in it


def test_permanent_memories_and_other_sessions_stay(mem: Memory, clock: Any) -> None:
    [note] = mem.add("Remember the projector", user_id="u1", session_id="s1")
    [elsewhere] = mem.add("Draft for s2", user_id="u1", session_id="s2", session_only=True)
    [other_user] = mem.add("Secret", user_id="u2", session_id="s1", session_only=True)
    run_chat(mem, clock, session="s2")
    end = mem.end_session("s1", "u1")
    assert end.cleared == 0 and end.summary is not None and end.summary.source_ids == [note.id]
    assert mem.get(note.id) and mem.get(elsewhere.id) and mem.get(other_user.id)
    assert [i.session_id for i in mem.list_sessions("u1")] == ["s2"]


def test_a_session_that_goes_on_gets_a_summary_of_the_later_turns(mem: Memory, clock: Any) -> None:
    run_chat(mem, clock)
    first = mem.end_session("s1", "u1").summary
    assert first is not None
    clock.advance(hours=1)
    wm = mem.working(session_id="s1", user_id="u1", budget_tokens=500)
    wm.add("user", "Change of plan: the bus leaves at 9:15 instead.")
    second = mem.end_session("s1", "u1")
    assert second.summary is not None and second.summary.id != first.id
    assert second.turns == 1 and "9:15" in second.summary.content
    assert not set(second.summary.source_ids) & set(first.source_ids)


def test_ending_one_agents_part_then_the_rest(mem: Memory, clock: Any) -> None:
    a = mem.working(session_id="s1", user_id="u1", agent_id="planner", budget_tokens=500)
    b = mem.working(session_id="s1", user_id="u1", agent_id="booker", budget_tokens=500)
    a.add("user", "Plan the offsite for June 14.")
    b.add("user", "Book the Quinta do Lago venue.")
    mem.add("planner scratch", user_id="u1", session_id="s1", agent_id="planner",
            session_only=True)  # fmt: skip
    mem.add("booker scratch", user_id="u1", session_id="s1", agent_id="booker",
            session_only=True)  # fmt: skip

    first = mem.end_session("s1", "u1", agent_id="planner")
    assert (first.archived, first.cleared, first.turns, first.agent_id) == (1, 1, 1, "planner")
    assert first.summary is not None and first.summary.agent_id == "planner"
    assert [(i.session_id, i.agent_id) for i in mem.list_sessions("u1")] == [("s1", "booker")]

    rest = mem.end_session("s1", "u1")  # every agent: only the booker's part is left
    assert (rest.archived, rest.cleared, rest.turns, rest.window_closed) == (1, 1, 1, True)
    assert rest.summary is not None and "Quinta do Lago" in rest.summary.content
    assert mem.list_sessions("u1") == [] and zeros(mem.end_session("s1", "u1"))


def test_end_session_on_each_session_backend(wmem: Memory, clock: Any) -> None:
    run_chat(wmem, clock)
    assert [i.session_id for i in wmem.list_sessions("u1")] == ["s1"]
    window = wmem.session_window("s1", "u1")
    assert window is not None and window.budget_tokens == 120
    end = wmem.end_session("s1", "u1")
    assert end.window_closed and end.summary is not None and end.turns == len(CHAT) + 1
    assert wmem.list_sessions("u1") == [] and wmem.session_window("s1", "u1") is None
    assert zeros(wmem.end_session("s1", "u1"))


def test_session_window_does_not_change_the_window(mem: Memory, clock: Any) -> None:
    assert mem.session_window("s1", "u1") is None
    wm = run_chat(mem, clock, budget=200)
    seen = mem.session_window("s1", "u1")
    assert seen is not None
    assert (seen.messages(), seen.tokens, seen.budget_tokens) == (wm.messages(), wm.tokens, 200)
    assert mem.sessions.load("u1", "s1", None) == wm._state


class RecordingSummarizer:
    """Writes ``"S: <first words of each line>"``; records what it was given."""

    name = "recording"

    def __init__(self, answer: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.answer = answer

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        self.calls.append(list(lines))
        if self.answer is not None:
            return self.answer
        text = " / ".join(" ".join(line.split()[:3]) for line in lines)
        return counter.truncate(f"S: {text}", max_tokens)


def test_the_configured_summarizer_gets_labelled_turns_and_the_running_summary(
    db_path: Path, clock: Any
) -> None:
    fake = RecordingSummarizer()
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, summarizer=fake) as m:
        wm = run_chat(m, clock)
        running = wm.summary
        assert running.startswith("S: ")  # the window folded turns with it too
        m.add("temporary", user_id="u1", session_id="s1", session_only=True)
        fake.calls.clear()
        end = m.end_session("s1", "u1")
        [lines] = fake.calls
        turns = [f"{role}: {text}" for role, text in CHAT]
        # The running summary (no stored turn says it) first, then every turn, in order.
        assert lines == [*running.split("\n"), "system: You are the offsite planning assistant.",
                         *turns]  # fmt: skip
        assert end.summary is not None and end.summary.metadata["summarizer"] == "recording"


def test_an_empty_answer_falls_back_to_the_extractive_summary(db_path: Path, clock: Any) -> None:
    fake = RecordingSummarizer(answer="  ")
    with Memory(db_path, embedder="hashing", clock=clock, extractor=None, summarizer=fake) as m:
        m.add("Marta booked the venue for 2,400 euros.", user_id="u1", session_id="s1")
        end = m.end_session("s1", "u1")
        assert end.summary is not None
        assert end.summary.content == "user: Marta booked the venue for 2,400 euros."


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        ((None, "u1"), {}, "session_id"),
        (("  ", "u1"), {}, "session_id"),
        (("s1", None), {}, "user_id"),
        (("s1", "u1"), {"agent_id": ""}, "agent_id"),
        (("s1", "u1"), {"summary_tokens": 0}, "summary_tokens"),
        (("s1", "u1"), {"summary_tokens": 15}, "summary_tokens"),
        (("s1", "u1"), {"summary_tokens": 100_001}, "summary_tokens"),
        (("s1", "u1"), {"summary_tokens": True}, "summary_tokens"),
        (("s1", "u1"), {"summary_tokens": "300"}, "summary_tokens"),
        (("s1", "u1"), {"counter": "no-such-encoding"}, "encoding"),
    ],
)
def test_end_session_validation(
    mem: Memory, clock: Any, args: tuple[Any, ...], kwargs: dict[str, Any], field: str
) -> None:
    run_chat(mem, clock)
    before = all_records(mem)
    with pytest.raises(ValidationError) as err:
        mem.end_session(*args, **kwargs)
    assert err.value.field == field
    assert all_records(mem) == before and len(mem.list_sessions("u1")) == 1


def test_list_sessions_validation(mem: Memory) -> None:
    with pytest.raises(ValidationError) as err:
        mem.list_sessions(" ")
    assert err.value.field == "user_id"


def test_a_summary_counts_tokens_with_the_given_counter(mem: Memory, clock: Any) -> None:
    run_chat(mem, clock)
    end = mem.end_session("s1", "u1", summary_tokens=40, counter="cl100k_base")
    assert end.summary is not None and end.summary.metadata["encoding"] == "cl100k_base"
    assert get_token_counter("cl100k_base").count(end.summary.content) <= 40
    assert SUMMARY_PREFIX not in end.summary.content


def test_async_end_session(new_db: Callable[[str], Any], tmp_path: Path) -> None:
    async def main() -> tuple[SessionEnd, SessionEnd, list[Any]]:
        async with AsyncMemory(new_db("a"), embedder="hashing", extractor=None) as m:
            wm = await m.working(session_id="s1", user_id="u1", budget_tokens=500)
            wm.add("user", "The offsite is on June 14.")
            listed = await m.list_sessions("u1")
            first = await m.end_session("s1", "u1")
            return first, await m.end_session("s1", "u1"), listed

    first, second, listed = asyncio.run(main())
    assert [i.session_id for i in listed] == ["s1"]
    assert first.summary is not None and first.to_json()["summary"]["id"] == first.summary.id
    assert zeros(second) and second.to_json()["summary"] is None

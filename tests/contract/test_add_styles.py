"""The same conversation added the ways callers pass speakers and dates: speaker as
``name``, as a ``"Caroline: ..."`` label, as role/name dicts, one call per session or
per turn. Each way must give the same records' attribution, index text and ranking
(issue 15, item 2), on every engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mnemolayer import Memory
from mnemolayer.models import Message
from mnemolayer.retrieval.index import index_text, keyword_terms

START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
TURNS = [
    ("Caroline", "I went to the LGBTQ support group yesterday and it was powerful."),
    ("Melanie", "That's great! I painted a lake sunrise last week."),
    ("Caroline", "The transgender stories were so inspiring."),
    ("Melanie", "I'm going camping with my kids next month."),
    ("Caroline", "Thanks!"),
    ("Melanie", "Thanks!"),
]
QUESTIONS = [
    "What did Melanie paint?",
    "When did Caroline go to the support group?",
    "Where is Melanie going with her kids?",
    "What inspired Caroline?",
]


def _meta(i: int) -> dict[str, Any]:
    return {"dia_id": f"D1:{i + 1}", "session": 1}


def _add(memory: Memory, style: str, user_id: str) -> list[Any]:
    scope: dict[str, Any] = {"user_id": user_id, "session_id": "s1"}
    if style == "name":
        msgs: list[Any] = [
            Message(content=t, name=s, timestamp=START + timedelta(seconds=i), metadata=_meta(i))
            for i, (s, t) in enumerate(TURNS)
        ]
        return memory.add(msgs, **scope)
    if style == "role":
        msgs = [
            {"role": "user" if s == "Caroline" else "assistant", "name": s, "content": t,
             "metadata": _meta(i)}
            for i, (s, t) in enumerate(TURNS)
        ]  # fmt: skip
        return memory.add(msgs, timestamp=START, **scope)
    labelled = [{"content": f"{s}: {t}", "metadata": _meta(i)} for i, (s, t) in enumerate(TURNS)]
    if style == "prefix":
        return memory.add(labelled, timestamp=START, **scope)
    return [r for m in labelled for r in memory.add(m, timestamp=START, **scope)]


STYLES = ("name", "prefix", "role", "per-turn")


def test_every_way_attributes_and_indexes_the_turns_alike(mem: Memory) -> None:
    added = {style: _add(mem, style, f"u-{style}") for style in STYLES}
    for style, records in added.items():
        assert [r.speaker for r in records] == [s for s, _ in TURNS], style
        assert [r.metadata["dia_id"] for r in records] == [f"D1:{i + 1}" for i in range(6)]
        # Same speaker, same day: the same text for the indexes.
        assert [index_text(r) for r in records] == [index_text(r) for r in added["name"]]
        assert [keyword_terms(r) for r in records] == [keyword_terms(r) for r in added["name"]]
    # A label is who spoke, the content stays as given.
    assert added["prefix"][0].content == f"Caroline: {TURNS[0][1]}"
    assert added["prefix"][0].role == "user"
    assert index_text(added["prefix"][0]) == f'(8 May 2023) Caroline said, "{TURNS[0][1]}"'


def test_every_way_ranks_the_same_turns_first(mem: Memory) -> None:
    for style in STYLES:
        _add(mem, style, f"u-{style}")

    def ranked(style: str, question: str) -> list[str]:
        hits = mem.search(question, user_id=f"u-{style}", limit=3)
        return [h.memory.metadata["dia_id"] for h in hits]

    for question in QUESTIONS:
        expected = ranked("name", question)
        assert expected, question
        for style in STYLES[1:]:
            assert ranked(style, question) == expected, (style, question)


def test_turns_of_one_call_keep_their_order_and_the_call_s_time(mem: Memory) -> None:
    records = _add(mem, "prefix", "u")
    assert {r.occurred_at for r in records} == {START}
    rowid = dict(mem.store.read("SELECT id, rowid FROM memories WHERE user_id = ?", ("u",)))
    # Session neighbours follow the session's order: message order, the time being shared.
    assert mem.store.session_order("u") == [rowid[r.id] for r in records]


def test_a_label_is_not_a_speaker_when_a_name_is_given(mem: Memory) -> None:
    [record] = mem.add({"name": "Melanie", "content": "Caroline: said hi"}, user_id="u")
    assert record.speaker == "Melanie"
    assert index_text(record).endswith('Melanie said, "Caroline: said hi"')


def test_label_words_and_transcripts_keep_no_speaker(mem: Memory) -> None:
    note, transcript, system = mem.add(
        [
            "Note: buy milk at 10:30",
            "Linda: Where should I go?\nAI: Spain is lovely.",
            {"role": "system", "content": "Caroline: ignored"},
        ],
        user_id="u",
    )
    assert (note.speaker, transcript.speaker, system.speaker) == (None, None, None)
    assert note.content == "Note: buy milk at 10:30"


def test_chinese_full_width_labels(mem: Memory) -> None:
    [labelled] = mem.add("卡罗琳：我上周去徒步了", user_id="u", timestamp=START)
    [named] = mem.add({"name": "卡罗琳", "content": "我上周去徒步了"}, user_id="v", timestamp=START)
    assert labelled.speaker == "卡罗琳"
    assert labelled.content == "卡罗琳：我上周去徒步了"
    assert index_text(labelled) == index_text(named)


def test_facts_of_a_labelled_message_are_the_speaker_s(smem: Memory) -> None:
    smem.add("Caroline: I live in Lisbon.", user_id="u", timestamp=START)
    smem.add({"name": "Caroline", "content": "I live in Lisbon."}, user_id="v", timestamp=START)
    labelled = [(f.subject, f.predicate, f.object) for f in smem.facts(user_id="u")]
    named = [(f.subject, f.predicate, f.object) for f in smem.facts(user_id="v")]
    assert labelled == named
    assert ("Caroline", "lives_in", "Lisbon") in labelled


def test_packed_context_does_not_repeat_the_label(mem: Memory) -> None:
    mem.add("Caroline: I went hiking near Lisbon.", user_id="u", timestamp=START)
    text = mem.context("Where did Caroline go hiking?", user_id="u").text
    assert "- Caroline: I went hiking near Lisbon." in text
    assert "Caroline: Caroline:" not in text


def test_a_named_assistant_states_only_its_own_facts(smem: Memory) -> None:
    smem.add(
        [
            {"role": "assistant", "name": "Melanie", "content": "I live in Porto."},
            {"role": "assistant", "name": "Melanie", "content": "Your sister Maria lives in Rome."},
            {"role": "assistant", "content": "I live in the cloud."},  # no name: no facts
        ],
        user_id="u",
        timestamp=START,
    )
    facts = {(f.subject, f.predicate, f.object) for f in smem.facts(user_id="u")}
    assert facts == {("Melanie", "lives_in", "Porto")}


def test_a_labelled_message_added_again_is_the_same_record(mem: Memory) -> None:
    [first] = mem.add("Caroline: I went hiking", user_id="u", session_id="s1")
    [again] = mem.add("Caroline: I went hiking", user_id="u", session_id="s1")
    [other] = mem.add("Melanie: I went hiking", user_id="u", session_id="s1")
    assert again.id == first.id
    assert other.id != first.id and other.speaker == "Melanie"

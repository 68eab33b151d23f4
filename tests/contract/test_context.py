"""Token-budgeted context assembly on real SQLite files (hashing embedder, rule extractor)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mnemolayer import Memory
from mnemolayer.context.assemble import (
    SECTIONS,
    Context,
    ContextBuilder,
    ContextTemplate,
    build_context,
)
from mnemolayer.errors import ValidationError
from mnemolayer.text.tokens import get_token_counter

COUNTER = get_token_counter()
QUERY = "what should I cook tonight?"


def _fill(memory: Memory) -> None:
    memory.add(
        [
            "My name is Alice.",
            "I love sushi and I am vegetarian.",
            "I live in Berlin.",
            "Last night I cooked a mushroom risotto for my sister Jane.",
            "I don't like spicy food at all, it gives me a headache when I cook curry.",
            "我喜欢吃饺子，周末经常自己包。",
        ],
        user_id="u1",
        timestamp="2023-05-08T10:00:00",
    )
    memory.add(
        "We cooked pasta with tomatoes and basil from the garden tonight.",
        user_id="u1",
        timestamp="2023-06-01T19:00:00",
    )
    memory.add("I love sushi and I am vegetarian.", user_id="u2")  # another tenant
    for ok in (True, True, False):
        memory.record_outcome(
            user_id="u1",
            task="plan a vegetarian dinner",
            strategy="batch cooking on Sunday" if ok else "improvise at 8pm",
            success=ok,
        )


@pytest.fixture
def filled(new_db: Callable[[str], Any]) -> Iterator[Memory]:
    """One store shared by a module's worth of read-only checks (a real SQLite file)."""
    path = new_db("ctx")
    clock = lambda: datetime(2024, 5, 8, 12, 0, tzinfo=UTC)  # noqa: E731
    memory = Memory(path, embedder="hashing", clock=clock)
    _fill(memory)
    yield memory
    memory.close()


RECENT: list[tuple[str, str, datetime | str | None]] = [
    ("user", "I'm hungry and it's late.", "2024-05-08T11:58:00"),
    ("assistant", "Want something quick?", datetime(2024, 5, 8, 11, 59, tzinfo=UTC)),
    ("user", "Yes, and no meat please.", None),
]


DINNER = "plan a vegetarian dinner tonight"


def test_sections_are_present_in_priority_order_and_cite_times(filled: Memory) -> None:
    ctx = build_context(filled, DINNER, user_id="u1", session_id="s1", recent=RECENT)
    assert isinstance(ctx, Context)
    assert [s.name for s in ctx.sections] == list(SECTIONS)
    assert ctx.tokens == COUNTER.count(ctx.text) <= 1500
    headings = ["## Profile", "## Recalled episodes", "## Strategies", "## Recent conversation"]
    positions = [ctx.text.index(h) for h in headings]
    assert positions == sorted(positions)
    assert ctx.text.startswith("## Profile\n- name: Alice (8 May 2023)\n")
    assert "- diet: vegetarian (8 May 2023)" in ctx.text
    # Recalled episodes sit under one date line per day, in time order.
    episodes = ctx.text[ctx.text.index("## Recalled episodes") : ctx.text.index("## Strategies")]
    assert episodes.index("### 8 May 2023\n") < episodes.index("### 1 June 2023\n")
    assert episodes.count("### 8 May 2023") == 1
    may = episodes[episodes.index("### 8 May 2023") : episodes.index("### 1 June 2023")]
    assert "- user: Last night I cooked a mushroom risotto for my sister Jane.\n" in may
    assert "- batch cooking on Sunday: 2 succeeded, 0 failed on tasks like" in ctx.text
    # Every stored item cites its time; the recent turn without a time cites none.
    for section in ctx.sections:
        for item in section.items:
            assert item.time is not None or section.name == "recent"
    assert "- user (8 May 2024): I'm hungry and it's late." in ctx.text
    assert "- user: Yes, and no meat please." in ctx.text
    recent = ctx.section("recent")
    assert recent is not None
    assert [i.text for i in recent.items] == [t[1] for t in RECENT]  # shown in time order
    assert ctx.session_id == "s1"


def test_facts_sit_between_profile_and_strategies(filled: Memory) -> None:
    sections = ["strategies", "facts", "profile"]
    ctx = build_context(filled, DINNER, user_id="u1", sections=sections)
    assert [s.name for s in ctx.sections] == ["profile", "facts", "strategies"]
    headings = ["## Profile", "## Relevant facts", "## Strategies"]
    positions = [ctx.text.index(h) for h in headings]
    assert positions == sorted(positions)
    facts = ctx.section("facts")
    assert facts is not None and facts.items
    # A fact sentence that already says its date is not dated twice.
    assert "(7 May 2023) (7 May 2023)" not in ctx.text
    assert "cooked a mushroom risotto (7 May 2023)" in ctx.text


def test_other_users_are_never_read(filled: Memory) -> None:
    ctx = build_context(filled, "sushi", user_id="u2")
    assert "Alice" not in ctx.text and "Berlin" not in ctx.text
    assert "I love sushi and I am vegetarian." in ctx.text


def test_near_identical_texts_and_cited_episodes_are_deduplicated(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    with Memory(new_db("d"), embedder="hashing") as memory:
        memory.add("We cooked pasta with tomatoes tonight.", user_id="u1", session_id="a")
        memory.add("We cooked pasta with tomatoes tonight!", user_id="u1", session_id="b")
        recent = [("user", "I love sushi and I am vegetarian", None)]
        memory.add("I love sushi and I am vegetarian.", user_id="u1")
        ctx = build_context(memory, "pasta tomatoes sushi", user_id="u1", recent=recent)
        episodes = ctx.section("episodes")
        assert episodes is not None
        texts = [i.text for i in episodes.items]
        assert sum("cooked pasta with tomatoes" in t for t in texts) == 1
        # The episode the recent window already shows is not repeated.
        assert not any("sushi" in t for t in texts)
        # A relevant fact whose source episode is packed verbatim is left out.
        facts = ctx.section("facts")
        assert facts is not None
        shown = {i.memory_id for i in episodes.items}
        for fact in facts.items:
            assert not (fact.source_ids and set(fact.source_ids) <= shown)
        assert ctx.text.count("vegetarian") == ctx.text.count("diet: vegetarian") + 1


def test_json_has_the_same_structure(filled: Memory) -> None:
    md = build_context(filled, QUERY, user_id="u1", recent=RECENT)
    js = build_context(filled, QUERY, user_id="u1", recent=RECENT, format="json")
    assert js.tokens == COUNTER.count(js.text) <= 1500
    doc = json.loads(js.text)
    names = [s["section"] for s in doc["sections"]]
    assert names == [s.name for s in md.sections if s.items]
    first = doc["sections"][0]
    assert first["title"] == "Profile"
    assert {"text": "name: Alice", "time": "8 May 2023"} in first["items"]
    assert json.loads(json.dumps(js.to_json()))["format"] == "json"


def test_template_changes_headings_items_and_dates(filled: Memory) -> None:
    template = ContextTemplate(
        headings={"profile": "About the user", "facts": "Facts"},
        item="* {text} [{time}]",
        time_suffix="",
        date_format="%Y-%m-%d",
    )
    ctx = build_context(
        filled, QUERY, user_id="u1", sections=["facts", "profile"], template=template
    )
    assert [s.name for s in ctx.sections] == ["profile", "facts"]
    assert ctx.text.startswith("## About the user\n* name: Alice [2023-05-08]")
    assert "## Recalled episodes" not in ctx.text


def test_long_items_are_cut_with_the_counter(new_db: Callable[[str], Any], tmp_path: Path) -> None:
    with Memory(new_db("l"), embedder="hashing", extractor=None) as memory:
        memory.add("pasta " * 2000, user_id="u1")
        template = ContextTemplate(max_item_tokens=50)
        ctx = build_context(memory, "pasta", user_id="u1", template=template)
        (item,) = ctx.sections[2].items
        assert item.text.endswith("…") and COUNTER.count(item.text) <= 50


def test_an_empty_store_gives_an_empty_context(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    with Memory(new_db("e"), embedder="hashing") as memory:
        ctx = build_context(memory, QUERY, user_id="nobody")
    assert ctx.text == "" and ctx.tokens == 0
    assert all(not s.items for s in ctx.sections)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    budget=st.integers(min_value=50, max_value=3000),
    fmt=st.sampled_from(["markdown", "json"]),
    recent=st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant"]),
            st.text(min_size=1, max_size=120).filter(lambda s: s.strip() and "\x00" not in s),
            st.one_of(st.none(), st.datetimes(timezones=st.just(UTC))),
        ),
        max_size=12,
    ),
)
def test_budget_is_never_exceeded(
    filled: Memory,
    budget: int,
    fmt: Literal["markdown", "json"],
    recent: list[tuple[str, str, datetime | str | None]],
) -> None:
    ctx = build_context(
        filled, QUERY, user_id="u1", budget_tokens=budget, format=fmt, recent=recent
    )
    assert ctx.tokens == COUNTER.count(ctx.text) <= budget
    if fmt == "json" and ctx.text:
        json.loads(ctx.text)


@pytest.mark.parametrize("budget", [1, 10, 50, 200, 700, 3000])
def test_small_and_large_budgets(filled: Memory, budget: int) -> None:
    ctx = build_context(filled, QUERY, user_id="u1", budget_tokens=budget, recent=RECENT)
    assert ctx.tokens == COUNTER.count(ctx.text) <= budget
    if budget >= 200:
        assert ctx.section("profile").items  # type: ignore[union-attr]
    if budget == 3000:
        assert sum(ctx.dropped.values()) == 0  # everything fits


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"query": "  "}, "query"),
        ({"user_id": None}, "user_id"),
        ({"user_id": ""}, "user_id"),
        ({"session_id": 3}, "session_id"),
        ({"budget_tokens": 0}, "budget_tokens"),
        ({"budget_tokens": True}, "budget_tokens"),
        ({"budget_tokens": "100"}, "budget_tokens"),
        ({"format": "html"}, "format"),
        ({"sections": ["profile", "gossip"]}, "sections[1]"),
        ({"sections": ["facts", "facts"]}, "sections[1]"),
        ({"sections": []}, "sections"),
        ({"sections": "facts"}, "sections"),
        ({"template": {"item": "x"}}, "template"),
        ({"recent": [("user", "hi")]}, "recent[0]"),
        ({"recent": [("user", "  ", None)]}, "recent[0].content"),
        ({"recent": [("", "hi", None)]}, "recent[0].role"),
        ({"recent": [("user", "hi", "yesterday")]}, "recent[0].time"),
        ({"shares": {"facts": -1}}, "shares.facts"),
        ({"shares": {"gossip": 1}}, "shares.gossip"),
        ({"counter": "no-such-encoding"}, "encoding"),
    ],
)
def test_bad_input_names_the_field(filled: Memory, kwargs: dict, field: str) -> None:
    args = {"query": QUERY, "user_id": "u1", **kwargs}
    query = args.pop("query")
    with pytest.raises(ValidationError) as err:
        build_context(filled, query, **args)
    assert err.value.field == field


def test_cli_context_prints_markdown_and_json(new_db: Callable[[str], Any], tmp_path: Path) -> None:
    from mnemolayer.cli import app, context_commands  # noqa: F401  (registers the commands)

    db = new_db("c")
    with Memory(db, embedder="hashing") as memory:
        _fill(memory)
    runner = CliRunner()
    base = ["--db", str(db), "--embedder", "hashing"]
    shown = runner.invoke(app, [*base, "context", QUERY, "-u", "u1", "--budget", "300"])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("## Profile\n")
    out = runner.invoke(app, [*base, "--json", "context", QUERY, "-u", "u1", "--format", "json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["tokens"] <= 1500 and json.loads(result["text"])["sections"]
    bad = runner.invoke(app, [*base, "context", QUERY, "-u", "u1", "--budget", "0"])
    assert bad.exit_code == 2


def test_memory_context_is_the_context_builders_method(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    assert Memory.context.__wrapped__ is ContextBuilder.context  # type: ignore[attr-defined]
    assert Memory.context.__doc__ == ContextBuilder.context.__doc__
    memory = Memory(new_db("x"), embedder="hashing")
    try:
        memory.add("I live in Berlin.", user_id="u1")
        ctx = memory.context("where do I live?", user_id="u1", budget_tokens=100)
    finally:
        memory.close()
    assert "- lives in: Berlin (" in ctx.text and ctx.tokens <= 100


def test_the_sessions_saved_window_is_the_recent_section(
    new_db: Callable[[str], Any], tmp_path
) -> None:
    from mnemolayer import Memory

    with Memory(new_db("c"), embedder="hashing") as mem:
        wm = mem.working(session_id="s1", user_id="u1", budget_tokens=500)
        wm.add("user", "Tonight I want something quick with tofu.")
        ctx = mem.context("what should I cook tonight?", user_id="u1", session_id="s1")
        recent = ctx.section("recent")
        assert recent is not None
        assert any("tofu" in item.text for item in recent.items)
        assert ctx.tokens <= 1500
        # Without a session (or with one that has no window) there is no recent section.
        other = mem.context("what should I cook tonight?", user_id="u1", session_id="s9")
        assert not (other.section("recent") and other.section("recent").items)


# -- day lines, condensed episodes, relevance-first packing -------------------------------

POTTERY = [
    (
        "2023-05-08T10:00:00",
        "Hey, how are you doing today? I finally signed up for a pottery class on Saturdays. "
        "The weather has been lovely and the garden is full of tomatoes. "
        "My brother called about his new job in Lisbon.",
    ),
    (
        "2023-05-20T10:00:00",
        "We drove to the coast with the kids last weekend. The pottery class taught us to "
        "glaze bowls. Then we had ice cream by the harbour and watched the boats.",
    ),
    (
        "2023-06-02T10:00:00",
        "Work has been busy with the quarterly report. My pottery teacher says my mugs are "
        "getting better! I also started reading a novel about a lighthouse keeper.",
    ),
    (
        "2023-06-15T10:00:00",
        "I adopted a cat called Miso from the shelter. She sleeps on the pottery shelf "
        "all afternoon. My neighbour lent me a ladder to fix the gutter.",
    ),
]


@pytest.fixture(scope="module")
def pottery(module_db: Callable[[str], Any]) -> Iterator[Memory]:
    path = module_db("pottery")
    memory = Memory(path, embedder="hashing", extractor=None)
    for when, text in POTTERY:
        memory.add(text, user_id="u1", timestamp=when)
    yield memory
    memory.close()


def test_json_keeps_each_episodes_time_and_markdown_gives_one_line_per_day(
    filled: Memory,
) -> None:
    md = build_context(filled, QUERY, user_id="u1", sections=["episodes"])
    js = build_context(filled, QUERY, user_id="u1", sections=["episodes"], format="json")
    (section,) = json.loads(js.text)["sections"]
    assert section["items"] and all(i["time"] for i in section["items"])
    days = {i["time"] for i in section["items"]}
    assert {line[4:] for line in md.text.splitlines() if line.startswith("### ")} == days
    assert md.text.count("### ") == len(days)
    # Day lines replace the per-line suffix: no episode line repeats its date.
    assert not any(line.endswith("2023)") for line in md.text.splitlines())


def test_without_day_lines_each_episode_cites_its_time(filled: Memory) -> None:
    template = ContextTemplate(date_group=None)
    ctx = build_context(filled, DINNER, user_id="u1", sections=["episodes"], template=template)
    assert "###" not in ctx.text
    line = "- user: Last night I cooked a mushroom risotto for my sister Jane. (8 May 2023)"
    assert line in ctx.text
    items = ctx.sections[0].items
    assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)


def test_condense_keeps_the_sentences_that_share_a_word_with_the_query() -> None:
    from mnemolayer.context.condense import condense, sentences

    text = 'Hi Mel! "I joined a choir." It meets on Tuesdays. 我喜欢唱歌。你呢？ Bye (for now).'
    assert sentences(text) == [
        "Hi Mel!",
        '"I joined a choir."',
        "It meets on Tuesdays.",
        "我喜欢唱歌。",
        "你呢？",
        "Bye (for now).",
    ]
    # Inflected forms count as the same word (join / joined); runs left out become "…".
    assert condense(text, ["join", "choir"]) == '… "I joined a choir." …'
    assert condense(text, ["tuesdays", "唱歌"]) == "… It meets on Tuesdays. 我喜欢唱歌。 …"
    assert condense(text, ["mel"]) == "Hi Mel! …"
    # Nothing to condense: no sentence matches, every sentence matches, one sentence.
    assert condense(text, ["pottery"]) is None
    assert condense("I joined. I joined again.", ["joined"]) is None
    assert condense("I joined a choir and it meets on Tuesdays.", ["choir"]) is None
    assert condense(text, []) is None
    # Short words match exactly only: "art" is not "artist", "cat" not "catalogue".
    assert condense("I love art. She is an artist.", ["art"]) == "I love art. …"


def test_less_relevant_episodes_are_condensed_to_fit_more(pottery: Memory) -> None:
    whole = ContextTemplate(condense=False)
    budget = 150
    ctx = build_context(pottery, "pottery class", user_id="u1", budget_tokens=budget)
    plain = build_context(
        pottery, "pottery class", user_id="u1", budget_tokens=budget, template=whole
    )
    assert ctx.tokens == COUNTER.count(ctx.text) <= budget
    assert plain.tokens <= budget
    items = ctx.section("episodes").items  # type: ignore[union-attr]
    assert not any(i.condensed for i in plain.section("episodes").items)  # type: ignore[union-attr]
    assert len(items) > len(plain.section("episodes").items)  # type: ignore[union-attr]
    # The most relevant message is shown whole; later ones as their pottery sentences.
    best = max(items, key=lambda i: i.score)
    assert not best.condensed
    short = [i for i in items if i.condensed]
    assert short
    originals = {" ".join(text.split()) for _, text in POTTERY}
    for item in short:
        assert "pottery" in item.text and "…" in item.text and item.time is not None
        original = next(o for o in originals if item.text.strip("… ").split(" … ")[0] in o)
        assert all(part in original for part in item.text.split("…") if part.strip())
        assert f"- user: {item.text}\n" in ctx.text + "\n"


@pytest.mark.parametrize("fmt", ["markdown", "json"])
@pytest.mark.parametrize("budget", [20, 60, 90, 120, 180, 400])
def test_condensed_contexts_stay_within_budget(
    pottery: Memory, fmt: Literal["markdown", "json"], budget: int
) -> None:
    ctx = build_context(pottery, "pottery class", user_id="u1", budget_tokens=budget, format=fmt)
    assert ctx.tokens == COUNTER.count(ctx.text) <= budget
    if fmt == "json" and ctx.text:
        assert all(i["time"] for s in json.loads(ctx.text)["sections"] for i in s["items"])


def test_the_most_relevant_message_is_packed_first_even_when_longer(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    long = (
        "I took a pottery class on Saturday and it was wonderful, we made bowls, cups and "
        "plates all afternoon long"
    )
    with Memory(new_db("r"), embedder="hashing", extractor=None) as memory:
        memory.add(long, user_id="u1", timestamp="2023-05-08T10:00:00")
        memory.add("Nice weather.", user_id="u1", timestamp="2023-05-08T11:00:00")
        alone = f"## Recalled episodes\n### 8 May 2023\n- user: {long}"
        budget = COUNTER.count(alone) + 2
        ctx = build_context(
            memory, "pottery class on Saturday", user_id="u1", budget_tokens=budget,
            sections=["episodes"], template=ContextTemplate(condense=False),
        )  # fmt: skip
    assert ctx.text == alone


def test_a_larger_budget_fetches_more_episodes(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    import random

    words = [
        "bowl",
        "glaze",
        "kiln",
        "clay",
        "wheel",
        "mug",
        "vase",
        "teapot",
        "slip",
        "raku",
        "stoneware",
        "porcelain",
    ]
    rng = random.Random(7)
    with Memory(new_db("m"), embedder="hashing", extractor=None) as memory:
        memory.add(
            [f"Pottery log {i}: " + " ".join(rng.sample(words, 6)) for i in range(120)],
            user_id="u1",
        )
        ctx = build_context(
            memory, "pottery log", user_id="u1", budget_tokens=4000, sections=["episodes"]
        )
    assert ctx.tokens <= 4000
    assert len(ctx.sections[0].items) > 100


def test_an_outdated_episode_is_marked_in_both_formats(smem: Memory) -> None:
    smem.add("I live in Lisbon.", user_id="u1", timestamp=datetime(2024, 1, 10, tzinfo=UTC))
    smem.add("I moved to Porto.", user_id="u1", timestamp=datetime(2024, 6, 15, tzinfo=UTC))
    text = smem.context("Where do I live now?", user_id="u1").text
    assert "I live in Lisbon. (outdated)" in text
    assert "I moved to Porto." in text and "Porto. (outdated)" not in text
    items = {
        i["text"]: i
        for s in json.loads(smem.context("Where do I live now?", user_id="u1", format="json").text)[
            "sections"
        ]
        for i in s["items"]
    }
    assert items["I live in Lisbon."]["outdated"] is True
    assert "outdated" not in items["I moved to Porto."]
    plain = smem.context(
        "Where do I live now?", user_id="u1", template=ContextTemplate(outdated_mark="")
    ).text
    assert "(outdated)" not in plain and "I live in Lisbon." in plain

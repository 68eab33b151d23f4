"""Property-based tests of the public API of :class:`mnemolayer.Memory` with odd input.

Every public call is fed arbitrary Unicode (combining marks, right-to-left text, emoji
ZWJ sequences, NUL and other control characters, lone surrogates), empty, blank and huge
strings, odd metadata (nested, non-string keys, NaN and infinities, very deep, very big,
values that are not JSON), odd times (naive, year 1 and 9999, offsets up to ±23:59,
strings in many formats, epochs, non-times), and odd ids and limits. The property, for
every call:

* it either succeeds or raises a documented usage error: a
  :class:`~mnemolayer.errors.UsageError` (a :class:`~mnemolayer.errors.ValidationError`
  naming the field, :class:`~mnemolayer.errors.NotFoundError`,
  :class:`~mnemolayer.errors.ScopeRequiredError`); never any other exception;
* the store is never corrupted: after each example ``PRAGMA integrity_check`` is ``ok``,
  the keyword index and the vectors hold exactly the stored memories, what was accepted
  reads back verbatim (content, metadata, times), searches return only stored memories
  of the caller, and ``delete_all`` leaves nothing of the user in any table.

Each test runs on one store shared by its examples (module-scoped: hypothesis does not
reset function-scoped fixtures between examples); each example cleans up after itself.

Settings profiles, registered here, chosen with ``MNEMOLAYER_HYPOTHESIS_PROFILE``:
``ci`` (the default, ``make test``: 250 examples per test on SQLite and 50 on
PostgreSQL, see :data:`POSTGRES_SHARE`; no deadline), ``thorough`` (1,000 examples, about 6 minutes), ``dev``
(100) and ``quick`` (20, ``make check``). The examples are derandomized (tests/conftest.py):
each run replays the same ones unless ``MNEMOLAYER_HYPOTHESIS_RANDOM=1``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, currently_in_test_context, event, example, given, settings
from hypothesis import strategies as st

from helpers import all_records
from mnemolayer import Memory, MemoryRecord, Message
from mnemolayer._validate import MAX_QUERY_CHARS
from mnemolayer.embed import HashingEmbedder
from mnemolayer.errors import UsageError, ValidationError
from mnemolayer.lifecycle import FakeClock, LifecycleConfig

settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("ci", settings.get_profile("thorough"), max_examples=250)
settings.register_profile("dev", settings.get_profile("thorough"), max_examples=100)
settings.register_profile("quick", settings.get_profile("thorough"), max_examples=20)
PROFILE = settings.get_profile(os.environ.get("MNEMOLAYER_HYPOTHESIS_PROFILE", "ci"))

NOW = datetime(2024, 5, 8, 12, 0, tzinfo=UTC)
# Expiry on, so that far-past and far-future times also go through the TTL arithmetic.
TTL = LifecycleConfig(ttl_days={"episodic": 3650, "summary": 30})

# -- strategies: text ----------------------------------------------------------------------

# Valid but unusual text: combining marks, bidi controls and right-to-left scripts, emoji
# ZWJ sequences and flags, control characters, non-characters, CJK beyond the BMP, query
# syntax of SQL and FTS5, and sentences the rule extractor acts on.
EDGE_TEXT = [
    "\u200b", "\ufeff", "\x01\x02\x1b[31m\x7f", "\r\n", "\u2028\u2029", "e\u0301", "\u0301",
    "\u0301" * 40, "Z\u0335\u0321\u031b\u0316\u0317", "مرحبا بالعالم", "\u202eevil\u202c",
    "\u200fשלום\u200e", "👨\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈", "🇨🇳🇺🇸", "👍🏽", "\U0010ffff",
    "\uffff", "\ufffd", "我住在北京。", "私は東京に住んでいます", "𠜎𠜱𠝹",
    "'; DROP TABLE memories; --", '"', "*", "NEAR(a b)", "a AND OR NOT b", "^x", "col:term",
    "memories_fts", "%_", "\\", "{}", "null", "I live in Paris.",
    "My name is Lena and I love hiking.", "I'm allergic to peanuts.", "我叫王磊，我喜欢吃辣。",
    "My sister Maria lives in Rome.", "我下周五要去上海出差。",
]  # fmt: skip
# Text every call refuses: blank, NUL, lone surrogates.
BAD_TEXT = ["", " ", "\t\n ", "\u3000", "\u00a0\u3000", "\x00", "a\x00b", "\ud800", "a\udfffb"]
PIECES = st.one_of(st.sampled_from(EDGE_TEXT), st.text(max_size=20))
LARGE = st.sampled_from(["x" * 20_000, "汉字" * 10_000, "word " * 4_000, "👍" * 5_000])


def mostly(
    good: st.SearchStrategy[Any], odd: st.SearchStrategy[Any], one_in: int = 8
) -> st.SearchStrategy[Any]:
    """``good`` most of the time, ``odd`` about once in ``one_in`` draws, so that a call
    with many arguments still gets all of them right often enough to reach the store."""
    # Hypothesis favours the low end of a range, so the odd branch is the high end.
    return st.integers(1, one_in).flatmap(lambda n: odd if n == one_in else good)


# Text: arbitrary Unicode (any code point but surrogates) and the edge cases above, now
# and then 20,000 characters; the odd draws are refused by every call.
TEXT = mostly(
    mostly(
        st.one_of(
            st.text(min_size=1, max_size=80),
            st.text(
                st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=40
            ),
            st.lists(PIECES, min_size=1, max_size=6).map("".join),
            st.lists(PIECES, min_size=1, max_size=6).map(" ".join),
        ).filter(str.strip),
        LARGE,
        one_in=100,
    ),
    st.one_of(
        st.sampled_from(BAD_TEXT),
        st.lists(st.sampled_from([*BAD_TEXT, "a"]), max_size=4).map("".join),
    ),
)
NON_TEXT = st.one_of(
    st.none(), st.integers(), st.floats(), st.binary(max_size=4), st.lists(st.text(max_size=3), max_size=2)
)  # fmt: skip
ANY_TEXT = mostly(TEXT, NON_TEXT)

# -- strategies: ids and limits ------------------------------------------------------------

GOOD_ID = st.text(
    st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=24
).filter(str.strip)
ODD_ID = st.one_of(
    st.sampled_from(["", " ", "\t", "a" * 256, "a" * 257, "\x00", "u\x00", "\ud800", "%", "_", "'",
                     "u' OR '1'='1", "*", "用户", "👨\u200d👩\u200d👧", "\u202e", "e\u0301"]),
    st.integers(), st.none(), st.binary(max_size=4), st.lists(st.text(max_size=2), max_size=2),
    st.floats(),
)  # fmt: skip
USER = mostly(GOOD_ID, ODD_ID)
OPT_ID = mostly(st.one_of(st.none(), GOOD_ID), ODD_ID)
MEMORY_ID = st.one_of(
    st.text(max_size=40), st.text("0123456789abcdef", min_size=32, max_size=32),
    st.sampled_from(["", "x" * 128, "x" * 129, "../etc", "a b", "id\x00"]), NON_TEXT,
)  # fmt: skip
LIMIT = mostly(
    st.integers(0, 50),
    st.one_of(
        st.integers(), st.sampled_from([0, 1, 10_000, 10_001, 2**63, -(2**63), -1]),
        st.booleans(), st.floats(), st.none(), st.text(max_size=3),
    ),
)  # fmt: skip

# -- strategies: times ---------------------------------------------------------------------

OFFSET = st.builds(
    timezone, st.timedeltas(timedelta(hours=-23, minutes=-59), timedelta(hours=23, minutes=59))
)
ODD_TIME_TEXT = [
    "", " ", "now", "yesterday", "2024-02-30", "2024-13-01T00:00:00", "2024-05-08T24:00:00",
    "0000-01-01", "9999-12-31T23:59:59.999999-23:59", "0001-01-01T00:00:00+23:59",
    "2024-05-08T12:00:00+24:00", "2024-W19-3", "20240508T120000Z", "2024-05-08T12:00:00.123456789Z",
    "１９９９-０１-０１", "2024-05-08\x00", "Z", "z", "2024-05-08z", "2024-05-08 12:00", "12:00",
    "2024-05-08T12:00:00+05:30", "1970-01-01T00:00:00Z", "\ud800",
]  # fmt: skip
# Times: naive and aware (fixed offsets up to ±23:59 and real zones), year 1 to 9999, as
# datetimes, ISO strings in several spellings and epoch seconds; the odd ones are not
# times at all or out of range.
TIMES = mostly(
    st.one_of(
        st.none(),
        st.datetimes(),
        st.datetimes(timezones=OFFSET),
        st.datetimes(timezones=st.timezones()),
        st.datetimes(timezones=OFFSET).map(datetime.isoformat),
        st.datetimes().map(lambda d: d.isoformat(sep=" ")),
        st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat().replace("+00:00", "Z")),
        st.integers(-62_135_596_800, 253_402_300_799),
        st.floats(-1e10, 1e10),
    ),
    st.one_of(
        st.sampled_from(ODD_TIME_TEXT), st.integers(), st.floats(), st.booleans(), st.dates(),
        st.times(), st.text(max_size=12),
    ),
)  # fmt: skip

# -- strategies: metadata ------------------------------------------------------------------

GOOD_KEY = st.one_of(
    st.sampled_from(["a", "tags", "a.b", "a b", "x-y", "ключ", "键", "_", "1", "a:b/c", "a" * 128]),
    st.from_regex(r"\w[\w\-.:/ ]{0,12}", fullmatch=True),
)
KEYS = mostly(
    GOOD_KEY,
    st.one_of(
        st.sampled_from(["", " ", "$", "-a", "a" * 129, "k\x00", "\ud800", "a\nb"]),
        st.integers(), st.none(), st.booleans(), st.tuples(st.integers()), st.floats(),
        st.text(max_size=12),
    ),
)  # fmt: skip
GOOD_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([-0.0, 1e308, 5e-324]),
    st.text(max_size=16), st.sampled_from(EDGE_TEXT),
)  # fmt: skip
NOT_JSON = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.binary(max_size=3), st.sets(st.integers(), max_size=2), st.dates(), st.complex_numbers(),
    st.just(object()), st.integers(4400, 4500).map(lambda n: 10**n),
)  # fmt: skip
LEAF = mostly(GOOD_LEAF, NOT_JSON, one_in=20)
META_VALUE = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner), st.dictionaries(KEYS, inner, max_size=3)
    ),
    max_leaves=10,
)


def _nest(depth: int) -> dict[str, Any]:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return {"deep": value}


METADATA = mostly(
    st.one_of(st.none(), st.dictionaries(KEYS, META_VALUE, max_size=4)),
    st.one_of(
        st.integers(12, 40).map(_nest),
        st.sampled_from([{"k": "x" * 65_500}, {"k": "x" * 65_536}, {"k": list(range(20_000))},
                         {str(i): i for i in range(5_000)}]),
        st.one_of(st.lists(LEAF, max_size=2), st.text(max_size=4), st.integers()),
    ),
)  # fmt: skip
FILTERS = st.one_of(
    st.none(),
    st.just({}),
    st.dictionaries(KEYS, META_VALUE, max_size=3),
    st.dictionaries(
        st.sampled_from(["a", "tags", "and", "or", "not"]),
        st.one_of(
            LEAF,
            st.dictionaries(
                st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "between"]),
                st.one_of(LEAF, st.lists(LEAF, max_size=3)),
                max_size=2,
            ),
            st.lists(st.dictionaries(st.sampled_from(["a", "b"]), LEAF, max_size=2), max_size=3),
        ),
        max_size=2,
    ),
)  # fmt: skip
ROLE = mostly(st.sampled_from(["user", "assistant", "system", "tool"]), ANY_TEXT)


def _assigned(content: Any, role: Any, timestamp: Any, metadata: Any) -> Message:
    """A :class:`Message` whose fields were set after it was built: pydantic checks
    construction, not assignment, so ``add`` has to check them itself."""
    msg = Message(content="placeholder")
    msg.content, msg.role, msg.timestamp, msg.metadata = content, role, timestamp, metadata
    return msg


MESSAGE = mostly(
    st.one_of(
        TEXT,
        st.fixed_dictionaries(
            {"content": TEXT},
            optional={"role": ROLE, "name": OPT_ID, "timestamp": TIMES, "id": OPT_ID,
                      "metadata": METADATA},
        ),
        st.builds(Message, content=TEXT),
        st.builds(_assigned, TEXT, ROLE, TIMES, METADATA),
    ),
    st.one_of(
        NON_TEXT,
        st.fixed_dictionaries({"content": ANY_TEXT, "extra": st.integers()}),
        st.fixed_dictionaries({}, optional={"role": ROLE}),
    ),
)  # fmt: skip
MESSAGES = mostly(
    st.one_of(MESSAGE, st.lists(MESSAGE, min_size=1, max_size=4)),
    st.one_of(st.just([]), st.tuples(MESSAGE), st.sets(st.text(max_size=3), max_size=2)),
)
ROLES = ["user", "assistant", "system", "tool"]
KINDS = ["episodic", "semantic", "preference", "procedural", "summary"]
IMPORTANCE = mostly(
    st.one_of(st.none(), st.floats(0, 1)),
    st.one_of(st.floats(), st.integers(-1, 2), st.booleans(), st.text(max_size=2)),
)
BOOL = mostly(st.booleans(), st.one_of(st.none(), st.integers(0, 1), st.text(max_size=1)))


# -- the store and its checks --------------------------------------------------------------


#: The share of a profile's examples the PostgreSQL run draws. The properties are about
#: the library, and the SQLite run explores them with the whole profile; the PostgreSQL
#: run checks that the second engine agrees on a fifth of the same (derandomized) examples,
#: since each example there costs several round trips and a far slower delete_all.
POSTGRES_SHARE = 5


@pytest.fixture(autouse=True)
def _fewer_examples_on_postgres(
    request: pytest.FixtureRequest, store_backend: str
) -> Iterator[None]:
    """Run the PostgreSQL half with ``max_examples // POSTGRES_SHARE`` (at least 20).

    Hypothesis has no per-parameter settings; it reads the settings a test was decorated
    with when the test is called, so they are swapped for this call and put back after.
    """
    test = request.function
    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if store_backend != "postgres" or current is None:
        yield
        return
    test._hypothesis_internal_use_settings = settings(
        current, max_examples=max(20, current.max_examples // POSTGRES_SHARE)
    )
    try:
        yield
    finally:
        test._hypothesis_internal_use_settings = current


@pytest.fixture(scope="module")
def mem(module_db: Callable[[str], Any]) -> Iterator[Memory]:
    """One store for all the examples of the module (rules extraction, the hashing
    embedder, a clock standing at :data:`NOW`, expiry :data:`TTL`); every example leaves
    it empty."""
    memory = Memory(module_db("props"), embedder="hashing", clock=FakeClock(NOW), lifecycle=TTL)
    yield memory
    memory.close()


def attempt(label: str, call: Callable[[], Any]) -> tuple[bool, Any]:
    """Run ``call``: ``(True, result)``, or ``(False, error)`` for a documented usage
    error. Any other exception propagates and fails the test. The outcome is counted as
    a hypothesis event (``--hypothesis-show-statistics``)."""
    try:
        result = call()
    except ValidationError as exc:
        # A field is named, except where the whole call is wrong, as documented for
        # update() with nothing to change.
        whole = exc.field is None and str(exc).startswith("nothing to update")
        assert whole or (isinstance(exc.field, str) and exc.field), f"no field named: {exc!r}"
        root = re.split(r"[.\[]", exc.field or "-")[0]
        _count(f"{label}: ValidationError {root}")
        return False, exc
    except UsageError as exc:
        assert str(exc)
        _count(f"{label}: {type(exc).__name__}")
        return False, exc
    _count(f"{label}: ok")
    return True, result


def _count(outcome: str) -> None:
    if currently_in_test_context():  # not in the plain regression tests below
        event(outcome)


def valid_id(value: Any) -> bool:
    return (
        isinstance(value, str)
        and bool(value.strip())
        and len(value) <= 256
        and "\x00" not in value
        and _utf8(value)
    )


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_store(mem: Memory) -> None:
    """The file is a healthy database and every index agrees with the records."""
    from mnemolayer.store.sqlite.store import SQLiteStore

    if isinstance(mem.store, SQLiteStore):  # the file's own page-level check
        assert mem.store.read("PRAGMA integrity_check") == [("ok",)]
    orphans = mem.store.read(
        "SELECT (SELECT count(*) FROM memories WHERE rowid NOT IN (SELECT rowid FROM memories_fts)),"
        " (SELECT count(*) FROM memories_fts WHERE rowid NOT IN (SELECT rowid FROM memories)),"
        " (SELECT count(*) FROM memories m WHERE NOT EXISTS"
        "   (SELECT 1 FROM vectors v WHERE v.memory_rowid = m.rowid)),"
        " (SELECT count(*) FROM vectors WHERE memory_rowid NOT IN (SELECT rowid FROM memories)),"
        " (SELECT count(*) FROM vectors v JOIN memories m ON m.rowid = v.memory_rowid"
        "   WHERE v.user_id != m.user_id)"
    )
    assert orphans == [(0, 0, 0, 0, 0)], "records, keyword index and vectors disagree"


_TABLES = (
    "memories", "memories_fts", "vectors", "history", "entities", "entity_aliases", "facts",
    "fact_sources", "working_sessions", "working_messages",
)  # fmt: skip


def clean(mem: Memory, *users: Any) -> None:
    """Delete every valid user of the example and check that nothing is left anywhere."""
    for user in {u for u in users if valid_id(u)}:
        mem.delete_all(user_id=user)
    check_store(mem)
    left = {t: mem.store.read(f"SELECT count(*) FROM {t}")[0][0] for t in _TABLES}
    assert not any(left.values()), f"left behind after delete_all: {left}"


def check_readback(mem: Memory, rec: MemoryRecord) -> None:
    """A stored record reads back as it was returned: content verbatim, metadata, times."""
    got = mem.get(rec.id, user_id=rec.user_id)
    assert got.content == rec.content
    assert got.metadata == rec.metadata
    assert got.occurred_at == rec.occurred_at
    assert (got.user_id, got.agent_id, got.session_id) == (
        rec.user_id,
        rec.agent_id,
        rec.session_id,
    )


def seed(
    mem: Memory, user: str, text: str = "I live in Lisbon and my dog is called Rex."
) -> MemoryRecord:
    return mem.add(text, user_id=user, metadata={"city": "Lisbon", "n": 1})[0]


def all_ids(mem: Memory, user: str) -> set[str]:
    return {r.id for r in all_records(mem, user)}


# -- write: add ----------------------------------------------------------------------------

HUGE_ADD = {"user": "u", "agent": None, "session": None, "timestamp": None, "metadata": None,
            "importance": None, "kind": "episodic", "session_only": False, "pinned": False}  # fmt: skip


@PROFILE
@given(
    messages=MESSAGES, user=USER, agent=OPT_ID, session=OPT_ID, timestamp=TIMES,
    metadata=METADATA, importance=IMPORTANCE, kind=mostly(st.sampled_from(KINDS), ANY_TEXT),
    session_only=mostly(st.just(False), BOOL, one_in=4), pinned=BOOL,
)  # fmt: skip
@example(messages="a" * 1_000_000, **HUGE_ADD)
@example(messages="a" * 1_000_001, **HUGE_ADD)
@example(messages=["hi"] * 10_001, **HUGE_ADD)
@example(messages="hi", **{**HUGE_ADD, "metadata": {"n": 10**5000}})
def test_add(mem: Memory, messages: Any, user: Any, agent: Any, session: Any, timestamp: Any,
             metadata: Any, importance: Any, kind: Any, session_only: Any, pinned: Any) -> None:  # fmt: skip
    try:
        ok, out = attempt("add", lambda: mem.add(
            messages, user_id=user, agent_id=agent, session_id=session, timestamp=timestamp,
            metadata=metadata, importance=importance, kind=kind, session_only=session_only,
            pinned=pinned,
        ))  # fmt: skip
        check_store(mem)
        if ok:
            assert out, "add returned no records"
            listed = all_ids(mem, user)
            for rec in out:
                assert rec.user_id == user and rec.id in listed
                check_readback(mem, rec)
                assert mem.history(rec.id, user_id=user)[0].event == "ADD"
            # Nothing else was stored but the sentence records of facts drawn from them.
            mine = {r.id for r in out}
            for other in mem.list(user_id=user, limit=10_000).items:
                if other.id not in mine:
                    assert other.kind.value == "semantic" and set(other.source_ids) & mine
            # A search is a question, at most MAX_QUERY_CHARS: the head of the content.
            head = out[0].content[:MAX_QUERY_CHARS]
            if head.strip():
                hits = mem.search(head, user_id=user, limit=50)
                assert {h.id for h in hits} <= listed
        elif valid_id(user):
            assert not all_ids(mem, user), "a rejected add stored something"
    finally:
        clean(mem, user)


# -- read: search, get, list, history ------------------------------------------------------

KIND_LIST = mostly(
    st.one_of(st.none(), st.lists(st.sampled_from(KINDS), max_size=2)),
    st.lists(ANY_TEXT, min_size=1, max_size=2),
)
FILTERS = mostly(
    st.one_of(
        st.none(),
        st.just({}),
        st.dictionaries(st.sampled_from(["city", "n", "tags"]), GOOD_LEAF, min_size=1, max_size=2),
        st.dictionaries(
            st.sampled_from(["city", "n"]),
            st.dictionaries(st.sampled_from(["eq", "ne", "gt", "gte", "lt", "lte", "contains"]),
                            GOOD_LEAF, min_size=1, max_size=2),
            min_size=1, max_size=2,
        ),
        st.builds(lambda a, b: {"or": [a, b]}, st.just({"city": "Lisbon"}), st.just({"n": {"gt": 0}})),
    ),
    st.one_of(
        st.dictionaries(KEYS, META_VALUE, max_size=3),
        st.dictionaries(
            st.sampled_from(["a", "and", "or", "not"]),
            st.one_of(LEAF, st.lists(LEAF, max_size=2),
                      st.dictionaries(st.sampled_from(["in", "nin", "between", "eq"]), LEAF, max_size=2)),
            min_size=1, max_size=2,
        ),
        NON_TEXT,
    ),
)  # fmt: skip


@PROFILE
@given(
    query=ANY_TEXT, user=mostly(st.just("u1"), USER, one_in=3), agent=OPT_ID, session=OPT_ID,
    limit=LIMIT, filters=FILTERS,
    threshold=mostly(st.one_of(st.none(), st.floats(-1, 2)), st.one_of(st.floats(), st.booleans(), st.text(max_size=2))),
    kinds=KIND_LIST, mode=mostly(st.sampled_from(["hybrid", "vector", "keyword"]), ANY_TEXT),
    include_history=st.booleans(), explain=st.booleans(),
)  # fmt: skip
def test_search(mem: Memory, query: Any, user: Any, agent: Any, session: Any, limit: Any,
                filters: Any, threshold: Any, kinds: Any, mode: Any, include_history: bool,
                explain: bool) -> None:  # fmt: skip
    try:
        seed(mem, "u1")
        ok, hits = attempt("search", lambda: mem.search(
            query, user_id=user, agent_id=agent, session_id=session, limit=limit,
            filters=filters, threshold=threshold, kinds=kinds, mode=mode,
            include_history=include_history, explain=explain,
        ))  # fmt: skip
        check_store(mem)
        if ok:
            assert len(hits) <= min(limit, 10_000)
            owned = all_ids(mem, user)
            for hit in hits:
                assert hit.id in owned, "search returned a memory the user does not own"
                assert 0.0 <= hit.score <= 1.0 and math.isfinite(hit.score)
                if explain:
                    json.dumps(hit.explanation)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    finally:
        clean(mem, "u1", user)


@PROFILE
@given(
    memory_id=mostly(st.none(), MEMORY_ID, one_in=4),
    user=mostly(st.sampled_from([None, "u1"]), USER, one_in=3),
)  # fmt: skip
def test_get_and_history(mem: Memory, memory_id: Any, user: Any) -> None:
    try:
        rec = seed(mem, "u1")
        ident = rec.id if memory_id is None else memory_id
        ok, got = attempt("get", lambda: mem.get(ident, user_id=user))
        if ok:
            assert got.id == rec.id and user in (None, "u1")
        ok, events = attempt("history", lambda: mem.history(ident, user_id=user))
        if ok:
            assert events and all(e.memory_id == ident for e in events)
        check_store(mem)
    finally:
        clean(mem, "u1", user)


@PROFILE
@given(
    user=mostly(st.just("u1"), USER, one_in=3), agent=OPT_ID, session=OPT_ID, limit=LIMIT,
    kinds=KIND_LIST, filters=FILTERS, cursor=mostly(st.none(), MEMORY_ID, one_in=3),
)  # fmt: skip
def test_list(mem: Memory, user: Any, agent: Any, session: Any, limit: Any, kinds: Any,
              filters: Any, cursor: Any) -> None:  # fmt: skip
    try:
        seed(mem, "u1")
        seed(mem, "u1", "Second memory: I work at a bakery.")
        ok, page = attempt("list", lambda: mem.list(
            user_id=user, agent_id=agent, session_id=session, kinds=kinds, filters=filters,
            limit=limit, cursor=cursor,
        ))  # fmt: skip
        check_store(mem)
        if ok:
            assert len(page) <= min(limit, 10_000)
            assert all(r.user_id == user for r in page)
            ids = [r.id for r in page]
            assert ids == sorted(ids), "a page is oldest first"
            if page.next_cursor is not None:
                assert page.next_cursor == ids[-1]
    finally:
        clean(mem, "u1", user)


# -- write: update, delete, delete_all -----------------------------------------------------


@PROFILE
@given(
    memory_id=mostly(st.none(), MEMORY_ID, one_in=4), content=st.one_of(st.none(), ANY_TEXT),
    metadata=METADATA, importance=IMPORTANCE,
    user=mostly(st.sampled_from([None, "u1"]), USER, one_in=4),
)  # fmt: skip
def test_update(mem: Memory, memory_id: Any, content: Any, metadata: Any, importance: Any,
                user: Any) -> None:  # fmt: skip
    try:
        rec = seed(mem, "u1")
        seed(mem, "u1", "Another memory about tea.")
        ident = rec.id if memory_id is None else memory_id
        ok, new = attempt("update", lambda: mem.update(
            ident, content=content, metadata=metadata, importance=importance, user_id=user
        ))  # fmt: skip
        check_store(mem)
        if ok:
            check_readback(mem, new)
            if content is not None:
                assert new.content == content
            assert mem.history(new.id)[-1].event == "UPDATE"
        else:
            assert mem.get(rec.id).content == rec.content, "a rejected update changed the record"
    finally:
        clean(mem, "u1", user)


@PROFILE
@given(
    memory_id=mostly(st.none(), MEMORY_ID, one_in=4),
    user=mostly(st.sampled_from([None, "u1"]), USER, one_in=3),
)  # fmt: skip
def test_delete(mem: Memory, memory_id: Any, user: Any) -> None:
    try:
        rec = seed(mem, "u1")
        ident = rec.id if memory_id is None else memory_id
        before = all_ids(mem, "u1")
        ok, _ = attempt("delete", lambda: mem.delete(ident, user_id=user))
        check_store(mem)
        after = all_ids(mem, "u1")
        if ok:
            assert ident in before and ident not in after
            assert mem.history(ident)[-1].event == "DELETE"
        else:
            assert rec.id in after
    finally:
        clean(mem, "u1", user)


@PROFILE
@given(
    user=mostly(st.just("u1"), USER, one_in=3),
    agent=mostly(st.sampled_from([None, "a"]), OPT_ID, one_in=3),
    session=mostly(st.sampled_from([None, "s"]), OPT_ID, one_in=3),
)  # fmt: skip
def test_delete_all(mem: Memory, user: Any, agent: Any, session: Any) -> None:
    try:
        seed(mem, "u1")
        mem.add("In session s I said hello.", user_id="u1", session_id="s", agent_id="a")
        before = all_ids(mem, "u1")
        ok, receipt = attempt(
            "delete_all", lambda: mem.delete_all(user_id=user, agent_id=agent, session_id=session)
        )
        check_store(mem)
        if ok:
            removed = receipt.memories
            assert isinstance(removed, int) and removed >= 0
            assert receipt.verified, receipt.remaining
            if user == "u1":
                assert len(before) - len(all_ids(mem, "u1")) == removed
            if user == "u1" and agent is None and session is None:
                assert not all_ids(mem, "u1")
    finally:
        clean(mem, "u1", user)


# -- semantic memory: facts, profile ---------------------------------------------------------


@PROFILE
@given(
    text=TEXT, user=mostly(st.just("u1"), USER, one_in=3),
    subject=mostly(st.sampled_from([None, "user", "Maria", "Rex"]), ANY_TEXT, one_in=3),
    predicate=mostly(st.sampled_from([None, "lives_in", "name", "likes", "sister"]), ANY_TEXT, one_in=3),
    as_of=TIMES, include_history=st.booleans(),
)  # fmt: skip
def test_facts_and_profile(mem: Memory, text: str, user: Any, subject: Any, predicate: Any,
                           as_of: Any, include_history: bool) -> None:  # fmt: skip
    try:
        seed(mem, "u1")
        seed(mem, "u1", "My sister Maria lives in Rome.")
        if valid_id(user):
            attempt("add", lambda: mem.add(text, user_id=user))
        ok, facts = attempt("facts", lambda: mem.facts(
            user_id=user, subject=subject, predicate=predicate, as_of=as_of,
            include_history=include_history,
        ))  # fmt: skip
        if ok:
            assert all(f.user_id == user for f in facts)
            if predicate is not None:
                assert all(f.predicate == predicate for f in facts)
        ok, profile = attempt(
            "profile", lambda: mem.profile(user_id=user, subject=subject or "user")
        )
        if ok:
            json.dumps(profile)  # JSON-ready
        check_store(mem)
    finally:
        clean(mem, "u1", user)


# -- context ---------------------------------------------------------------------------------

SECTIONS = ["profile", "facts", "memories", "recent", "procedures", "summaries"]


@PROFILE
@given(
    query=ANY_TEXT, user=mostly(st.just("u1"), USER, one_in=3), session=OPT_ID,
    budget=mostly(st.integers(64, 5_000), st.one_of(st.integers(), st.sampled_from([63, 10_000_001]), st.booleans(), st.floats())),
    fmt=mostly(st.sampled_from(["markdown", "json"]), ANY_TEXT),
    sections=mostly(st.one_of(st.none(), st.lists(st.sampled_from(SECTIONS), max_size=3)), st.lists(ANY_TEXT, max_size=2)),
    recent=mostly(
        st.one_of(st.none(), st.lists(st.tuples(st.sampled_from(ROLES), TEXT, TIMES), max_size=3)),
        st.one_of(st.lists(st.tuples(ROLE, ANY_TEXT, TIMES), max_size=2), st.lists(NON_TEXT, max_size=2)),
    ),
)  # fmt: skip
def test_context(mem: Memory, query: Any, user: Any, session: Any, budget: Any, fmt: Any,
                 sections: Any, recent: Any) -> None:  # fmt: skip
    try:
        seed(mem, "u1")
        ok, ctx = attempt("context", lambda: mem.context(
            query, user_id=user, session_id=session, budget_tokens=budget, format=fmt,
            sections=sections, recent=recent,
        ))  # fmt: skip
        if ok:
            assert ctx.tokens <= budget
            json.dumps(ctx.to_json())
        check_store(mem)
    finally:
        clean(mem, "u1", user)


# -- working memory --------------------------------------------------------------------------

TURN = st.tuples(ROLE, TEXT, mostly(st.booleans(), st.one_of(st.none(), st.integers(0, 1))), TIMES)


@PROFILE
@given(
    user=mostly(st.just("u1"), USER, one_in=3), session=mostly(st.just("s1"), USER, one_in=3),
    agent=OPT_ID,
    budget=mostly(st.integers(64, 400), st.one_of(st.sampled_from([63, 10_000_001]), st.booleans(), st.floats())),
    turns=st.lists(TURN, max_size=6), pin_ids=st.lists(mostly(st.none(), MEMORY_ID, one_in=3), max_size=2),
)  # fmt: skip
def test_working(mem: Memory, user: Any, session: Any, agent: Any, budget: Any,
                 turns: list[tuple[Any, Any, Any, Any]], pin_ids: list[Any]) -> None:  # fmt: skip
    try:
        ok, wm = attempt("working", lambda: mem.working(
            session_id=session, user_id=user, agent_id=agent, budget_tokens=budget
        ))  # fmt: skip
        if ok:
            added = []
            for role, content, pin, at in turns:
                ok_add, msg = attempt(
                    "working.add", lambda r=role, c=content, p=pin, t=at: wm.add(r, c, pin=p, timestamp=t)
                )  # fmt: skip
                if ok_add:
                    added.append(msg)
                assert wm.tokens <= wm.budget_tokens
            for pid in pin_ids:
                target = pid if pid is not None else (added[-1].id if added else "0" * 32)
                attempt("working.pin", lambda t=target: wm.pin(t))
                assert wm.tokens <= wm.budget_tokens
            messages = wm.messages()
            assert all(set(m) == {"role", "content"} for m in messages)
            again = mem.working(
                session_id=session, user_id=user, agent_id=agent, budget_tokens=budget
            )
            assert again.messages() == messages, "the window does not resume exactly"
        check_store(mem)
    finally:
        clean(mem, "u1", user)


# -- procedural memory -----------------------------------------------------------------------


@PROFILE
@given(
    user=mostly(st.just("u1"), USER, one_in=3), task=ANY_TEXT, strategy=ANY_TEXT,
    success=BOOL, detail=mostly(st.none(), ANY_TEXT, one_in=2), agent=OPT_ID, timestamp=TIMES,
    outcome_id=OPT_ID, metadata=METADATA, query=ANY_TEXT, limit=LIMIT,
)  # fmt: skip
def test_record_outcome_and_strategies(mem: Memory, user: Any, task: Any, strategy: Any,
                                       success: Any, detail: Any, agent: Any, timestamp: Any,
                                       outcome_id: Any, metadata: Any, query: Any,
                                       limit: Any) -> None:  # fmt: skip
    try:
        mem.record_outcome(
            user_id="u1", task="deploy the web app", strategy="blue-green", success=True
        )
        ok, rec = attempt("record_outcome", lambda: mem.record_outcome(
            user_id=user, task=task, strategy=strategy, success=success, detail=detail,
            agent_id=agent, timestamp=timestamp, outcome_id=outcome_id, metadata=metadata,
        ))  # fmt: skip
        if ok:
            check_readback(mem, rec)
            assert rec.kind.value == "procedural"
        ok, stats = attempt(
            "strategies", lambda: mem.strategies(query, user_id=user, agent_id=agent, limit=limit)
        )
        if ok:
            assert len(stats) <= min(limit, 10_000)
        check_store(mem)
    finally:
        clean(mem, "u1", user)


# -- export and import -----------------------------------------------------------------------

ROW_FIELDS = st.sampled_from(
    ["id", "user_id", "content", "metadata", "created_at", "occurred_at", "importance", "kind",
     "session_only", "session_id", "source_ids", "memory_id", "event", "subject_id", "valid_from",
     "budget_tokens", "messages", "encoding", "version", "format", "name", "predicate", "type",
     "object", "aliases", "summary", "access_count", "superseded_by"]
)  # fmt: skip
ROW_VALUE = st.one_of(
    LEAF, TIMES.filter(lambda t: not isinstance(t, datetime | date | time)), METADATA, MEMORY_ID,
    st.lists(st.one_of(MEMORY_ID, LEAF), max_size=2), st.just(KeyError),
)  # fmt: skip


@PROFILE
@given(
    user=mostly(st.sampled_from(["u1", None]), USER, one_in=4),
    edits=st.lists(st.tuples(st.integers(0, 50), ROW_FIELDS, ROW_VALUE), max_size=3),
    extra_rows=mostly(st.just([]), st.lists(st.one_of(st.dictionaries(st.text(max_size=6), LEAF, max_size=3), NON_TEXT), max_size=2)),
)  # fmt: skip
def test_export_import_rows(mem: Memory, user: Any, edits: list[tuple[int, str, Any]],
                            extra_rows: list[Any]) -> None:  # fmt: skip
    users: list[Any] = ["u1", user]
    try:
        seed(mem, "u1")
        seed(mem, "u1", "My sister Maria lives in Rome.")
        mem.working(session_id="s1", user_id="u1").add(
            "user", "Remember that I prefer window seats."
        )
        mem.update(seed(mem, "u1", "I like tea.").id, content="I like green tea.")
        ok, rows = attempt("export", lambda: list(mem.export(user_id=user)))
        if not ok:
            return
        rows = json.loads(json.dumps(rows))  # as read back from a file
        stored = sum(1 for r in rows if r["type"] == "memory")
        mem.delete_all(user_id="u1")
        for index, field, value in edits:
            row = rows[index % len(rows)]
            if value is KeyError:
                row.pop(field, None)
            else:
                row[field] = value
        rows.extend(extra_rows)
        users.extend(r.get("user_id") for r in rows if isinstance(r, dict))
        ok, imported = attempt("import_rows", lambda: mem.import_rows(rows))
        check_store(mem)
        if ok:
            assert 0 <= imported <= stored
            if not edits and not extra_rows:
                assert imported == stored
                assert all_ids(mem, "u1") == {r["id"] for r in rows if r["type"] == "memory"}
        else:
            left = {t: mem.store.read(f"SELECT count(*) FROM {t}")[0][0] for t in _TABLES}
            assert not any(left.values()), f"a rejected import wrote {left}"
    finally:
        clean(mem, *users)


# -- MEMORY.md: a file a person edits -------------------------------------------------------

# Lines a person might leave in an edited MEMORY.md, valid and broken: section headings
# (known, unknown, misspelt), day headings (real and impossible dates), bullets with and
# without id comments (real ids are spliced in by the test), stray comments and text.
MD_LINE = st.one_of(
    st.sampled_from([
        "## Profile and preferences", "## Facts", "## Episodic memories",
        "## Procedural strategies", "## Summaries", "## Something else", "#", "###",
        "### 2024-05-08", "### 2024-02-30", "### yesterday", "- ", "-", "* not a bullet",
        "- `09:30 user` I moved to Porto", "- `2024-01-01 → now` The user lives in Porto",
        "- I love green tea", "- <!-- id: -->", "<!-- id:", "-->", "<!-- -->", "",
        "<!-- mnemolayer:memory-md version=1 user=\"u1\" exported=2024-05-08T12:00:00+00:00 -->",
        "<!-- mnemolayer:memory-md version=99 user=\"u1\" exported=never -->",
        "<!-- mnemolayer:memory-md version=1 user=\"u2\" exported=2024-05-08T12:00:00+00:00 -->",
    ]),
    st.builds(lambda t, i: f"- {t} <!-- id:{i} -->", PIECES, MEMORY_ID),
    PIECES,
)  # fmt: skip


@PROFILE
@given(
    user=mostly(st.just("u1"), USER, one_in=6),
    keep=st.lists(st.integers(0, 40), max_size=6),
    extra=st.lists(st.tuples(st.integers(0, 40), MD_LINE), max_size=6),
    whole=mostly(st.none(), st.one_of(TEXT, NON_TEXT), one_in=6),
)  # fmt: skip
def test_export_and_import_markdown(mem: Memory, user: Any, keep: list[int],
                                    extra: list[tuple[int, str]], whole: Any) -> None:  # fmt: skip
    try:
        seed(mem, "u1")
        seed(mem, "u1", "I love green tea.")
        ok, text = attempt("export_markdown", lambda: mem.export_markdown(user_id=user))
        if not ok:
            return
        lines = text.splitlines()
        if keep:  # the person deleted every line but these (headers may go too)
            lines = [lines[i % len(lines)] for i in sorted(set(keep))]
        for at, line in extra:  # ... and typed these
            lines.insert(at % (len(lines) + 1), line)
        edited = "\n".join(lines) if whole is None else whole
        before = all_ids(mem, "u1")
        ok, result = attempt("import_markdown", lambda: mem.import_markdown(edited, user_id=user))
        check_store(mem)
        if not ok:
            assert all_ids(mem, "u1") == before, (
                f"a refused MEMORY.md changed the store: {result!r} {edited!r}"
            )
    finally:
        clean(mem, "u1", user)


# -- failures found by these properties (fixed), kept as their minimal cases -----------------


def test_explain_with_ttl_near_the_end_of_time(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    ttl = LifecycleConfig(ttl_days={"episodic": 30})
    with Memory(new_db("m"), embedder="hashing", extractor=None, lifecycle=ttl) as m:
        rec = m.add("x", user_id="u", timestamp=datetime.max)[0]
        attempt("explain", lambda: m.explain(rec.id, user_id="u"))


def test_import_rows_of_no_rows(mem: Memory) -> None:
    attempt("import_rows", lambda: mem.import_rows(None))  # type: ignore[arg-type]


@pytest.mark.parametrize("call", ["reindex", "extract_facts"])
def test_batch_size_zero(mem: Memory, call: str) -> None:
    attempt(call, lambda: getattr(mem, call)(batch_size=0))


def test_reindex_negative_batch_size_keeps_the_model_bookkeeping(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    path = new_db("m")
    with Memory(path, embedder="hashing", extractor=None) as m:
        m.add("hello world", user_id="u")
    other = HashingEmbedder(dim=64)
    with Memory(path, embedder=other, extractor=None, check_embedder=False) as m:
        ok, _ = attempt("reindex", lambda: m.reindex(batch_size=-1))
        [rec] = m.list(user_id="u")
        dims = m.store.transact(lambda c: m.store.record_vectors(c, rec.id)).shape[1]
        recorded = m.store.get_meta("embedding_model")
        # Either the vectors were re-embedded, or the store still names the old model.
        assert (ok and dims == other.dim) or recorded == "hashing-v1/256"


def test_import_markdown_with_a_control_character_in_the_header_user(mem: Memory) -> None:
    header = '<!-- mnemolayer:memory-md version=1 user="0\n" exported=2024-05-08T12:00:00+00:00 -->'
    with pytest.raises(ValidationError, match="header's user"):
        mem.import_markdown(header, user_id="u1")

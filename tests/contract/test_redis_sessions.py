"""RedisSessionStore (mnemolayer.store.redis_sessions) on the real Redis: documents round-trip
exactly, ids cannot collide or glob, indexes, TTLs, atomic saves under threads, errors,
and two hosts sharing one window. The working-memory behaviour on top of it is tested on
both backends in test_working.py (the ``sessions`` fixture)."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import pytest

from mnemolayer import Memory
from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.layers.working.window import SessionStore, WindowState, WorkingMessage, working
from mnemolayer.store.redis_sessions import RedisSessionStore


@pytest.fixture(params=["redis", "redis-cluster"])
def store(request: pytest.FixtureRequest) -> Iterator[RedisSessionStore]:
    """A store on the plain Redis, then on the three-master Redis Cluster."""
    url = request.getfixturevalue("redis_url" if request.param == "redis" else "redis_cluster_url")
    with RedisSessionStore(url) as s:
        assert s.cluster == (request.param == "redis-cluster")
        yield s


def _prefix(url: str) -> str:
    return parse_qs(urlsplit(url).query)["prefix"][0]


def _state(user: str = "u1", session: str = "s1", agent: str | None = None, n: int = 2,
           tag: str = "hello") -> WindowState:  # fmt: skip
    at = datetime(2024, 5, 8, 12, 0, 0, 123456, tzinfo=UTC)
    messages = [
        WorkingMessage(f"m{i:030d}", "user" if i % 2 == 0 else "assistant", tag,
                       at + timedelta(microseconds=i), pinned=i == 0,
                       archived_id="a" * 32 if i == 1 else None)
        for i in range(n)
    ]  # fmt: skip
    return WindowState(
        user_id=user, session_id=session, agent_id=agent, budget_tokens=1000,
        encoding="o200k_base", messages=messages, summary=tag, summary_rounds=2,
        evicted_count=7,
    )  # fmt: skip


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# -- documents and keys ----------------------------------------------------------------


def test_round_trip_is_exact(store: RedisSessionStore) -> None:
    assert isinstance(store, SessionStore)
    state = _state()
    store.save(state)
    loaded = store.load("u1", "s1", None)
    assert loaded == state
    assert loaded is not None and loaded.messages[0].created_at.microsecond == 123456
    assert all(m.created_at.tzinfo is not None for m in loaded.messages)
    # A time in another zone comes back as the same instant, in UTC.
    plus8 = timezone(timedelta(hours=8))
    local = datetime(2024, 5, 8, 20, 0, 0, 1, tzinfo=plus8)
    state.messages[0] = WorkingMessage("x" * 32, "user", "晚上好", local)
    store.save(state)
    loaded = store.load("u1", "s1", None)
    assert loaded is not None and loaded.messages[0].created_at == local
    assert loaded.messages[0].created_at.utcoffset() == timedelta(0)
    # An empty window is a window too.
    store.save(_state(session="empty", n=0, tag=""))
    empty = store.load("u1", "empty", None)
    assert empty is not None and empty.messages == [] and empty.summary == ""
    assert store.load("u1", "nope", None) is None


def test_odd_ids_neither_collide_nor_glob(store: RedisSessionStore) -> None:
    scopes = [
        ("a:b", "c", None), ("a", "b:c", None), ("a", "c", "b"), ("a", "b", "c"),
        ("u*", "s?", "[x]"), ("用户 一", "会话：1", "助手"), ("50%", "%25", None),
        ("a b", "s 1", "bot one"),
    ]  # fmt: skip
    for i, (user, session, agent) in enumerate(scopes):
        store.save(_state(user, session, agent, tag=f"window {i}"))
    keys = {store.window_key(u, s, a) for u, s, a in scopes}
    assert len(keys) == len(scopes)  # no two scopes share a key
    for key in keys:
        head, _, rest = key.partition(":window:")
        assert head == store.prefix and rest.count(":") == 2
        assert not set(rest) & set("*?[] ")  # quoted: nothing that SCAN MATCH would expand
    for i, (user, session, agent) in enumerate(scopes):
        loaded = store.load(user, session, agent)
        assert loaded is not None and loaded.summary == f"window {i}"
        assert (loaded.user_id, loaded.session_id, loaded.agent_id) == (user, session, agent)
    assert [(i.session_id, i.agent_id) for i in store.list_sessions("用户 一")] == [
        ("会话：1", "助手")
    ]
    # Deleting the user "u*" leaves every other user alone.
    assert store.delete_user("u*") == 1
    for user, session, agent in scopes:
        assert (store.load(user, session, agent) is None) == (user == "u*")


def test_listing_and_deleting(store: RedisSessionStore) -> None:
    store.save(_state("u1", "s1"))
    store.save(_state("u1", "s2", "bot", n=3))
    store.save(_state("u2", "s1"))
    infos = store.list_sessions("u1")
    assert [(i.session_id, i.agent_id, i.messages) for i in infos] == [
        ("s2", "bot", 3),
        ("s1", None, 2),
    ]
    first, second = infos
    assert first.updated_at is not None and second.updated_at is not None
    assert first.updated_at > second.updated_at and first.updated_at.tzinfo is not None
    assert (second.budget_tokens, second.evicted_count, second.summary_rounds) == (1000, 7, 2)
    assert store.delete("u1", "s1", None) is True
    assert store.delete("u1", "s1", None) is False
    assert [i.session_id for i in store.list_sessions("u1")] == ["s2"]
    assert store.client.zcard(store.user_key("u1")) == 1  # its index entry went with it
    assert store.delete_user("u1") == 1
    assert store.delete_user("u1") == 0 and store.list_sessions("u1") == []
    assert not store.client.exists(store.user_key("u1"))
    assert store.load("u2", "s1", None) is not None  # another user is untouched
    assert len(list(store.client.scan_iter(match=store.window_pattern("u2")))) == 1
    assert list(store.client.scan_iter(match=store.window_pattern("u1"))) == []


# -- expiry ------------------------------------------------------------------------------


def test_ttl_is_set_and_refreshed_on_every_save(redis_url: str) -> None:
    with RedisSessionStore(redis_url, ttl_seconds=100) as store:
        store.save(_state())
        key, index = store.window_key("u1", "s1", None), store.user_key("u1")
        assert 95 <= store.client.ttl(key) <= 100 and 95 <= store.client.ttl(index) <= 100
        store.client.expire(key, 5)
        store.client.expire(index, 5)
        store.save(_state(tag="again"))
        assert 95 <= store.client.ttl(key) <= 100 and 95 <= store.client.ttl(index) <= 100
        # A window that expired is gone from load and from the listing.
        store.save(_state(session="brief"))
        store.client.pexpire(store.window_key("u1", "brief", None), 20)
        time.sleep(0.1)
        assert store.load("u1", "brief", None) is None
        assert [i.session_id for i in store.list_sessions("u1")] == ["s1"]
        # Index entries of windows expired long ago are dropped by the next save.
        store.client.zadd(index, {"gone-long-ago": time.time() - 3600})
        store.save(_state(tag="third"))
        assert store.client.zscore(index, "gone-long-ago") is None
    with RedisSessionStore(f"{redis_url}&ttl=50") as store:  # the URL's option
        assert store.ttl_seconds == 50


def test_without_ttl_nothing_expires_and_a_shared_index_stays(redis_url: str) -> None:
    with RedisSessionStore(redis_url) as forever, RedisSessionStore(redis_url, ttl_seconds=60) as brief:  # fmt: skip
        forever.save(_state(session="keep"))
        assert forever.client.ttl(forever.window_key("u1", "keep", None)) == -1
        brief.save(_state(session="short"))
        assert 55 <= brief.client.ttl(brief.window_key("u1", "short", None)) <= 60
        # The index still holds a window that never expires, so it must not expire either.
        assert brief.client.ttl(brief.user_key("u1")) == -1
        assert brief.delete_user("u1") == 2


# -- atomicity -------------------------------------------------------------------------


def test_concurrent_saves_never_yield_a_torn_window(redis_url: str) -> None:
    """Writers save windows whose every message and summary carry one tag; a reader must
    only ever see windows made wholly by one save."""
    errors: list[str] = []
    seen: set[str] = set()
    stop = threading.Event()

    def write(store: RedisSessionStore, writer: int) -> None:
        for n in range(60):
            tag = f"writer {writer} save {n}"
            store.save(_state(n=1 + (writer * 7 + n) % 9, tag=tag))

    def read(store: RedisSessionStore) -> None:
        while not stop.is_set():
            state = store.load("u1", "s1", None)
            if state is None:
                continue
            tags = {m.content for m in state.messages} | {state.summary}
            writer, n = (int(x) for x in state.summary.split()[1::2])
            if len(tags) != 1 or len(state.messages) != 1 + (writer * 7 + n) % 9:
                errors.append(f"torn window: {tags}, {len(state.messages)} messages")
            seen.add(state.summary)

    with RedisSessionStore(redis_url) as shared, RedisSessionStore(redis_url) as other:
        reader = threading.Thread(target=read, args=(other,))
        reader.start()
        writers = [threading.Thread(target=write, args=(shared, w)) for w in range(4)]
        for t in writers:
            t.start()
        for t in writers:
            t.join()
        stop.set()
        reader.join()
        final = other.load("u1", "s1", None)
    assert errors == []
    assert len(seen) > 1  # the reader did watch the window change
    assert final is not None and len({m.content for m in final.messages}) == 1


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379",
        "redis://127.0.0.1:99999",
        "redis://127.0.0.1:port",
        "redis://127.0.0.1:6379/zero",
        "redis://127.0.0.1:6379/0?ttl=0",
        "redis://127.0.0.1:6379/0?ttl=soon",
        "redis://127.0.0.1:6379/0?prefix=",
        "redis://127.0.0.1:6379/0?no_such_option=1",
        "unix://",
    ],
)
def test_bad_urls_are_usage_errors(url: str, db_path: Path) -> None:
    with pytest.raises(ValidationError) as err:
        RedisSessionStore(url)
    assert err.value.field == "sessions"
    with pytest.raises(ValidationError) as err:
        Memory(db_path, embedder="hashing", sessions=url)
    assert err.value.field == "sessions"


def test_bad_arguments(redis_url: str) -> None:
    for ttl in (0, -1, 1.5, True, "60"):
        with pytest.raises(ValidationError) as err:
            RedisSessionStore(redis_url, ttl_seconds=ttl)  # type: ignore[arg-type]
        assert err.value.field == "ttl_seconds"
    with pytest.raises(ValidationError) as err:
        RedisSessionStore(redis_url.partition("?")[0], prefix="has space")
    assert err.value.field == "prefix"
    with pytest.raises(ValidationError, match="both in the URL"):
        RedisSessionStore(redis_url, prefix="another")
    with pytest.raises(ValidationError) as err:
        RedisSessionStore(42)  # type: ignore[arg-type]
    assert err.value.field == "sessions"


def test_an_unreachable_server_is_a_store_error_without_the_password(db_path: Path) -> None:
    url = f"redis://reader:hunter2@127.0.0.1:{_unused_port()}/0"
    with pytest.raises(StoreError) as err:
        RedisSessionStore(url)
    message = str(err.value)
    assert "cannot reach Redis" in message and "hunter2" not in message
    assert f"redis://reader:***@127.0.0.1:{url.split(':')[-1]}" in message
    with pytest.raises(StoreError):
        Memory(db_path, embedder="hashing", sessions=url)


def test_damaged_or_foreign_data_is_a_store_error(store: RedisSessionStore) -> None:
    store.client.set(store.window_key("u1", "junk", None), "{not json")
    with pytest.raises(StoreError, match="damaged"):
        store.load("u1", "junk", None)
    store.client.set(store.window_key("u1", "future", None), '{"format": 99}')
    with pytest.raises(StoreError, match="format"):
        store.load("u1", "future", None)
    store.client.rpush(store.window_key("u1", "list", None), "x")  # another program's key
    with pytest.raises(StoreError, match="WRONGTYPE"):
        store.load("u1", "list", None)


def test_missing_redis_package_names_the_extra(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis now raises ImportError
    with pytest.raises(
        ValidationError, match=r"pip install -e '\.\[redis\]' in the mnemolayer checkout"
    ):
        RedisSessionStore(redis_url)


def test_a_client_passed_in_is_used_and_left_open(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url.partition("?")[0], decode_responses=True)
    try:
        with RedisSessionStore(client, prefix=_prefix(redis_url), ttl_seconds=30) as store:
            store.save(_state())
            assert store.load("u1", "s1", None) == _state()
            assert [i.session_id for i in store.list_sessions("u1")] == ["s1"]
            address = urlsplit(redis_url).netloc.rpartition("@")[2]  # host:port, no password
            assert address in repr(store)
        assert client.ping() is True  # closing the store left the caller's client open
    finally:
        client.close()


# -- several processes or hosts ----------------------------------------------------------


@pytest.mark.parametrize("backend", ["redis", "redis-cluster"])
def test_two_hosts_share_one_window(
    new_db: Callable[[str], Any], tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """Two Memory objects with their own files (as on two hosts) resume each other's
    window through Redis (and a Redis Cluster); turns evicted on a host are archived in
    that host's file."""
    redis_url = request.getfixturevalue("redis_url" if backend == "redis" else "redis_cluster_url")
    with (
        Memory(new_db("a"), embedder="hashing", extractor=None, sessions=redis_url) as a,
        Memory(new_db("b"), embedder="hashing", extractor=None, sessions=redis_url) as b,
    ):
        wa = working(a, session_id="s1", user_id="u1", budget_tokens=120)
        wa.add("system", "Answer briefly.", pin=True)
        wa.add("user", "My name is Ana and I live in Porto.")
        wb = working(b, session_id="s1", user_id="u1", budget_tokens=120)
        assert wb.messages() == wa.messages() and wb.tokens == wa.tokens
        for i in range(12):
            wb.add("user", f"Note {i}: the parcel number is {1000 + i}.")
        assert wb.evicted_count > 0 and wb.tokens <= 120
        again = working(a, session_id="s1", user_id="u1", budget_tokens=120)
        assert again.messages() == wb.messages()
        assert again.window()[0].pinned and again.summary == wb.summary
        archived_on_b = {r.content for r in b.list(user_id="u1", limit=100).items}
        assert "My name is Ana and I live in Porto." in archived_on_b
        assert a.list(user_id="u1", limit=100).items == []
        a.sessions.delete_user("u1")
        assert working(b, session_id="s1", user_id="u1").messages() == []


def test_the_redis_url_reaches_the_memory(redis_url: str, db_path: Path) -> None:
    with Memory(db_path, embedder="hashing", sessions=redis_url) as mem:
        assert isinstance(mem.sessions, RedisSessionStore)
        assert mem.sessions.prefix == _prefix(redis_url)
        working(mem, session_id="s1", user_id="u1").add("user", "hello")
        assert mem.store.read("SELECT count(*) FROM working_sessions")[0][0] == 0
        keys: Any = mem.sessions.client.keys(f"{_prefix(redis_url)}:*")
        assert len(keys) == 2  # the window and the user's index
        mem.sessions.close()


def test_context_reads_the_window_from_redis_when_sessions_live_there(
    redis_url: str, db_path: Path
) -> None:
    """Regression: ``context(session_id=...)`` read the window from the SQLite file even
    with ``sessions=redis://``, so the recent conversation was silently missing."""
    with Memory(db_path, embedder="hashing", extractor=None, sessions=redis_url) as mem:
        window = working(mem, session_id="s1", user_id="u1")
        window.add("user", "Book the table at Sakura for eight tonight.")
        window.add("assistant", "Booked Sakura for 8 pm.")
        assert mem.store.read("SELECT count(*) FROM working_sessions")[0][0] == 0
        ctx = mem.context("dinner plans", user_id="u1", session_id="s1")
        recent = ctx.section("recent")
        assert recent is not None
        assert [i.text for i in recent.items] == [
            "Book the table at Sakura for eight tonight.",
            "Booked Sakura for 8 pm.",
        ]
        other = mem.context("dinner plans", user_id="u1", session_id="other").section("recent")
        assert other is None or other.items == []  # a session without a window shows none
        mem.sessions.close()


# -- settings ----------------------------------------------------------------------------


def test_sessions_setting_from_the_environment() -> None:
    from mnemolayer.config import Settings, settings_from_env

    assert settings_from_env({}).sessions == "sqlite"
    assert settings_from_env({"MNEMOLAYER_SESSIONS": "sqlite"}).sessions == "sqlite"
    url = "redis://:pw@127.0.0.1:6379/2?prefix=bot&ttl=3600"
    assert settings_from_env({"MNEMOLAYER_SESSIONS": f" {url} "}).sessions == url
    for bad in ("postgres://x", "SQLite", "redis://:secret@h:port", "redis://h/0?ttl=-1"):
        with pytest.raises(ValidationError) as err:
            settings_from_env({"MNEMOLAYER_SESSIONS": bad})
        assert err.value.field == "MNEMOLAYER_SESSIONS" and "secret" not in str(err.value)
    with pytest.raises(ValueError, match="redis://") as exc:
        Settings(sessions="redis://:secret@h:port")
    assert "secret" not in str(exc.value)


def test_users_are_listed_and_a_whole_store_export_finds_windows_only_redis_holds(
    redis_url: str, db_path: Path
) -> None:
    mem = Memory(db_path, embedder="hashing", extractor=None, sessions=redis_url)
    try:
        assert mem.sessions.list_users() == []
        for user in ("b:*?[x]", "a 用户"):
            mem.working(session_id="s1", user_id=user, budget_tokens=200).add("user", "hi")
        assert mem.sessions.list_users() == ["a 用户", "b:*?[x]"]
        # Neither user has a memory or history row in the SQLite file: only Redis knows them.
        rows = [r for r in mem.export() if r["type"] == "session"]
        assert sorted(r["user_id"] for r in rows) == ["a 用户", "b:*?[x]"]
    finally:
        mem.close()


# -- Redis Cluster -----------------------------------------------------------------------


def test_a_cluster_keeps_each_user_in_one_slot_and_spreads_users_over_the_masters(
    redis_cluster_url: str,
) -> None:
    from redis.cluster import RedisCluster

    with RedisSessionStore(redis_cluster_url, ttl_seconds=3600) as store:
        users = [f"user {i}" for i in range(40)] + ["{tag}", "a:b"]
        for user in users:
            store.save(_state(user, "s1"))
            store.save(_state(user, "s2", "bot"))
        client = cast(RedisCluster, store.client)
        masters = set()
        for user in users:
            keys = [store.user_key(user), store.window_key(user, "s1", None),
                    store.window_key(user, "s2", "bot")]  # fmt: skip
            slots = {client.keyslot(k) for k in keys}
            assert len(slots) == 1, user  # the transactions of save/delete_user hold
            masters.add(client.get_node_from_key(keys[0]).name)
        assert len(masters) == 3  # 42 users over three masters
        # An id's own braces are quoted: no id picks another user's slot.
        assert "{%7Btag%7D}" in store.user_key("{tag}")
        assert set(users) <= set(store.list_users())
        assert [i.session_id for i in store.list_sessions("user 3")] == ["s2", "s1"]
        # What an erasure receipt scans for: this user's windows, no other user's.
        for user in ("user 3", "user 30", "{tag}"):
            found = list(client.scan_iter(match=store.window_pattern(user)))
            assert len(found) == 2, user
        assert store.delete_user("user 3") == 2 and store.list_sessions("user 3") == []


@pytest.mark.parametrize(
    "url", ["redis+cluster://127.0.0.1:7000/3", "rediss+cluster://127.0.0.1:7000/1?prefix=x"]
)
def test_a_cluster_url_with_another_database_is_refused(url: str) -> None:
    with pytest.raises(ValidationError, match="only database 0"):
        RedisSessionStore(url)


def test_an_unreachable_cluster_is_a_store_error_without_the_password() -> None:
    with pytest.raises(StoreError) as err:
        RedisSessionStore(f"redis+cluster://:s3cret@127.0.0.1:{_unused_port()}")
    assert "s3cret" not in str(err.value) and "***" in str(err.value)

"""``AsyncMemory`` against ``Memory``, by introspection: every public method and property
of ``Memory`` is on ``AsyncMemory`` with the same parameters (or is listed below with the
reason), every call works and returns what ``Memory``'s annotation says, calls run in a
worker thread, and a type checker sees ``Memory``'s parameters (mypy, revealed types)."""

from __future__ import annotations

import inspect
import threading
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import mnemolayer
from mnemolayer import AsyncMemory, Memory
from mnemolayer.layers.procedural.strategies import ProceduralConfig

#: Public members of ``Memory`` that ``AsyncMemory`` has but does not await, and why.
SYNCHRONOUS = {
    "now": "reads the clock: cheap, so a plain method, not a coroutine",
}
#: ``Memory`` methods whose awaited result differs in type from the sync one, and why.
RESULT_DIFFERS = {
    "export": "the rows are collected into a list in the worker thread: iterating a lazy "
    "iterator in the event loop would run the store's reads there",
}
#: Public members of ``Memory`` that ``AsyncMemory`` does not have, and why.
LEFT_OUT: dict[str, str] = {}


def _public_members() -> dict[str, object]:
    return {
        name: inspect.getattr_static(Memory, name)
        for name in dir(Memory)
        if not name.startswith("_")
    }


def _methods() -> list[str]:
    return sorted(n for n, v in _public_members().items() if inspect.isfunction(v))


def _properties() -> list[str]:
    return sorted(n for n, v in _public_members().items() if not inspect.isfunction(v))


def test_every_public_member_of_memory_is_on_async_memory() -> None:
    members = _public_members()
    assert {"add", "search", "maintain", "context", "last_query_embed_seconds"} <= set(members)
    missing = {n for n in members if not hasattr(AsyncMemory, n)} - set(LEFT_OUT)
    assert not missing, f"add these to AsyncMemory (or to LEFT_OUT with a reason): {missing}"
    assert set(LEFT_OUT) <= set(members) and set(SYNCHRONOUS) <= set(members)


@pytest.mark.parametrize("name", _methods())
def test_each_method_has_the_same_parameters(name: str) -> None:
    sync = inspect.signature(getattr(Memory, name))
    async_ = inspect.signature(getattr(AsyncMemory, name))
    assert list(async_.parameters.values()) == list(sync.parameters.values())
    assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)) is (name not in SYNCHRONOUS)


def test_the_constructor_takes_the_same_parameters() -> None:
    assert inspect.signature(AsyncMemory) == inspect.signature(Memory)


@pytest.mark.parametrize("name", _properties())
def test_each_property_is_a_property(name: str) -> None:
    assert isinstance(inspect.getattr_static(AsyncMemory, name), property), name


# -- every call works -------------------------------------------------------------------------


def _conforms(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the (top-level) type ``hint``; a hint left as a string (a
    name imported only for type checkers) is matched by the value's type name."""
    if isinstance(hint, str):
        if hint.startswith(("builtins.list[", "list[")):
            return isinstance(value, list)
        return type(value).__name__ in hint or (value is None and "None" in hint)
    if hint is Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, h) for h in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    return isinstance(value, origin or hint)


def _returns(name: str) -> Any:
    method = getattr(Memory, name)
    try:
        return typing.get_type_hints(method)["return"]
    except NameError:
        return inspect.signature(method).return_annotation


async def _every_call(path: Any, copy_path: Any) -> set[str]:
    called: set[str] = set()
    main = threading.get_ident()

    async with AsyncMemory(path, embedder="hashing") as am:
        threads: set[int] = set()
        real = am.sync.stats

        def stats(**kwargs: Any) -> dict[str, Any]:
            threads.add(threading.get_ident())
            return real(**kwargs)

        am.sync.stats = stats  # type: ignore[method-assign]

        async def call(name: str, *args: Any, **kwargs: Any) -> Any:
            method: Callable[..., Any] = getattr(am, name)
            result = await method(*args, **kwargs) if name not in SYNCHRONOUS else method(*args)
            expected = list if name in RESULT_DIFFERS else _returns(name)
            assert _conforms(result, expected), (name, type(result), expected)
            called.add(name)
            return result

        [rec] = await call("add", "I live in Porto and I like green tea", user_id="u")
        await call("search", "green tea", user_id="u", explain=True)
        await call("get", rec.id, user_id="u")
        await call("list", user_id="u")
        await call("update", rec.id, importance=0.9, user_id="u")
        await call("history", rec.id, user_id="u")
        await call("stats", user_id="u")
        assert threads and main not in threads  # the sync call ran in a worker thread
        await call("facts", user_id="u")
        await call("entities", user_id="u")
        await call("neighbors", "user", user_id="u")
        await call("profile", user_id="u")
        await call("learn_from_feedback", user_id="u", action="jazz", feedback="positive")
        await call("extract_facts", user_id="u")
        await call(
            "record_outcome", user_id="u", task="book a table", strategy="call", success=True
        )
        await call("outcomes", user_id="u")
        await call("strategies", "book a table", user_id="u")
        await call("should_avoid", "book a table", "call", user_id="u")
        await call("reflect", user_id="u")
        await call("pin", rec.id, user_id="u")
        await call("unpin", rec.id, user_id="u")
        await call("archive", rec.id, user_id="u")
        await call("restore", rec.id, user_id="u")
        await call("explain", rec.id, user_id="u", query="tea")
        await call("maintain", user_id="u", dry_run=True)
        await call("context", "what do I drink?", user_id="u", budget_tokens=200)
        window = await call("working", session_id="s1", user_id="u", budget_tokens=500)
        window.add("user", "hello there")
        await call("session_window", "s1", "u")
        await call("list_sessions", "u")
        await call("end_session", "s1", "u")
        text = await call("export_markdown", user_id="u")
        await call("import_markdown", text, user_id="u")
        rows = await call("export", user_id="u")
        await call("reindex", batch_size=8)
        await call("flush", timeout_s=10)
        await call("pending", user_id="u")
        call_now = await call("now")
        assert call_now == am.sync.now() or call_now <= am.sync.now()
        assert am.last_query_embed_seconds >= 0.0
        assert am.procedural_config == am.sync.procedural_config
        am.procedural_config = ProceduralConfig(success_threshold=5)
        assert am.sync.procedural_config.success_threshold == 5
        [gone] = await am.add("a note to forget", user_id="u")
        await call("forget", gone.id, user_id="u")
        await call("delete", rec.id, user_id="u")
        await call("delete_all", user_id="u")
        called.add("last_query_embed_seconds")
        called.add("procedural_config")
        async with AsyncMemory(copy_path, embedder="hashing") as copy:
            progress: list[tuple[int, int]] = []
            assert await copy.import_rows(rows, progress=lambda d, t: progress.append((d, t)))
            assert progress and progress[-1][0] == progress[-1][1]
            called.add("import_rows")
            await copy.close()  # close, then __aexit__'s aclose: closing twice is harmless
            called.add("close")
    return called


def test_every_call_works_and_returns_what_memory_returns(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    called = anyio.run(_every_call, new_db("a"), new_db("copy"))
    untested = set(_public_members()) - called - set(LEFT_OUT)
    assert not untested, f"add a call of these to _every_call: {untested}"


def test_wrap_shares_an_open_memory(new_db: Callable[[str], Any], tmp_path: Path) -> None:
    with Memory(new_db("w"), embedder="hashing", extractor=None) as mem:
        am = AsyncMemory.wrap(mem)
        assert am.sync is mem
        [rec] = anyio.run(lambda: am.add("hello", user_id="u"))
        assert mem.get(rec.id).content == "hello"


# -- what a type checker sees -------------------------------------------------------------------

REVEAL = """\
from mnemolayer import AsyncMemory

mem = AsyncMemory(":memory:", embedder="hashing")
reveal_type(mem.search)
reveal_type(mem.add)
reveal_type(mem.export)
reveal_type(AsyncMemory)


async def wrong() -> None:
    await mem.search("tea", user="u")
"""


@pytest.fixture(scope="module")
def revealed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    api = pytest.importorskip("mypy.api")
    tmp = tmp_path_factory.mktemp("mypy")
    src = Path(mnemolayer.__file__).resolve().parents[1]
    config = tmp / "mypy.ini"
    # Third-party packages are not analysed (they are Any): this checks mnemolayer's own
    # types only, and stays fast from a cold cache.
    config.write_text(
        f"[mypy]\nmypy_path = {src}\nignore_missing_imports = True\nfollow_imports = silent\n"
        "no_site_packages = True\nwarn_unused_configs = False\n"
    )
    (tmp / "reveal.py").write_text(REVEAL)
    out, err, _status = api.run(
        ["--config-file", str(config), "--cache-dir", str(tmp / "cache"), str(tmp / "reveal.py")]
    )
    yield out + err


def _line(revealed: str, lineno: int) -> str:
    return next(line for line in revealed.splitlines() if f"reveal.py:{lineno}:" in line)


def test_a_type_checker_sees_the_parameters_of_memory(revealed: str) -> None:
    search = _line(revealed, 4)
    assert "Revealed type is" in search, revealed
    for param in ("query: str", "user_id: str", "limit: int", "explain: bool", "kinds"):
        assert param in search, search
    assert "Coroutine[Any, Any, list[mnemolayer.models.Hit]]" in search, search
    add = _line(revealed, 5)
    for param in ("messages", "session_only: bool", "pinned: bool", "expires_at"):
        assert param in add, add
    assert "list[dict[str, Any]]" in _line(revealed, 6)
    assert "embedder:" in _line(revealed, 7) and "*args" not in _line(revealed, 7)
    assert 'Unexpected keyword argument "user"' in _line(revealed, 11), revealed

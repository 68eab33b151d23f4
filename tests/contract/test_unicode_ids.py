"""Every id the Python API takes refuses a string that is not valid Unicode (a lone
surrogate, what a broken decode leaves and what UTF-8 cannot encode) with a
``ValidationError`` (a ``UsageError``) naming the argument, before anything is read or
written: two such ids must never be stored, compared or looked up as one."""

from __future__ import annotations

from typing import Any

import pytest

from mnemolayer import Memory
from mnemolayer.errors import UsageError, ValidationError

#: Two different lone surrogates (a replacing decoder would make both U+FFFD).
BAD = ("a\ud800", "a\udfff")
M = "0" * 32
U: dict[str, Any] = {"user_id": "u"}
MEMORY = {"memory_id": M, **U}
OUTCOME = {"task": "t", "strategy": "s", "success": True, **U}

#: ``(method, valid keyword arguments, the id arguments to spoil one at a time)``.
CALLS: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("add", {"messages": "hi", **U}, ("user_id", "agent_id", "session_id")),
    ("search", {"query": "q", **U}, ("user_id", "agent_id", "session_id")),
    ("list", U, ("user_id", "agent_id", "session_id")),
    ("delete_all", U, ("user_id", "agent_id", "session_id")),
    ("context", {"query": "q", **U}, ("user_id", "session_id")),
    ("end_session", {"session_id": "s", **U}, ("session_id", "user_id", "agent_id")),
    ("session_window", {"session_id": "s", **U}, ("session_id", "user_id", "agent_id")),
    ("working", {"session_id": "s", **U}, ("session_id", "user_id", "agent_id")),
    *[
        (method, MEMORY, ("memory_id", "user_id"))
        for method in ("get", "delete", "history", "archive", "restore", "pin", "unpin", "explain")
    ],
    ("update", {**MEMORY, "content": "x"}, ("memory_id", "user_id")),
    ("record_outcome", OUTCOME, ("user_id", "task", "strategy", "agent_id", "session_id", "outcome_id")),
    ("strategies", {"task": "t", **U}, ("task", "user_id", "agent_id")),
    ("should_avoid", {"task": "t", "strategy": "s", **U}, ("task", "strategy", "user_id", "agent_id")),
    ("outcomes", U, ("user_id", "agent_id")),
    ("reflect", U, ("user_id", "agent_id")),
    ("learn_from_feedback", {"action": "a", "feedback": "positive", **U}, ("user_id", "session_id")),
    ("facts", U, ("user_id", "subject")),
    ("profile", U, ("user_id", "subject")),
    ("neighbors", {"name": "x", **U}, ("name", "user_id")),
    *[
        (method, U, ("user_id",))
        for method in ("entities", "export", "export_markdown", "extract_facts", "stats",
                       "list_sessions", "maintain")
    ],
    ("import_markdown", {"text": "- hi", **U}, ("user_id",)),
]  # fmt: skip
CASES = [(method, kwargs, name) for method, kwargs, names in CALLS for name in names]


@pytest.mark.parametrize(("method", "kwargs", "name"), CASES, ids=[f"{m}-{n}" for m, _, n in CASES])
def test_an_id_that_is_not_valid_unicode_is_refused_naming_it(
    smem: Memory, method: str, kwargs: dict[str, Any], name: str
) -> None:
    for bad in BAD:
        with pytest.raises(ValidationError) as caught:
            result = getattr(smem, method)(**{**kwargs, name: bad})
            if method == "export":  # a generator: it runs when read
                list(result)
        assert isinstance(caught.value, UsageError) and caught.value.field == name
    assert smem.stats()["memories"] == 0  # nothing was written by any of them


def test_the_owner_check_refuses_a_bad_user_before_the_lookup(smem: Memory) -> None:
    [rec] = smem.add("a note of u", user_id="u")
    for method in ("get", "history", "delete", "update"):
        extra = {"content": "changed"} if method == "update" else {}
        with pytest.raises(ValidationError) as caught:
            getattr(smem, method)(rec.id, user_id=BAD[0], **extra)
        assert caught.value.field == "user_id", method
    assert smem.get(rec.id, user_id="u").content == "a note of u"

"""PII redaction wired into every write path of :class:`Memory` (issue 7, item 2).

Each personal value is written through ``add`` (content and metadata), ``update``,
working memory (window, running summary, archived turns), session summaries,
``record_outcome`` and ``learn_from_feedback``; then the raw value must be absent from
everything read back (records, search hits, facts, history, windows) and from the bytes
of the SQLite file and its WAL (and the Redis keys when windows live there).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from helpers import is_postgres, raw_rows, table_names
from mnemolayer import Memory
from mnemolayer.cli import app
from mnemolayer.errors import ValidationError
from mnemolayer.privacy import REDACTED_KEY, RedactionConfig, resolve_privacy
from mnemolayer.text.tokens import TokenCounter

# One value of each type, as a person writes it, and the pieces of it that must not be
# stored when it is redacted or masked (a mask keeps the last four characters). Pieces are
# long enough, or hold a space, not to turn up by chance in a 32-hex-digit id or a vector.
SECRET = "sk-proj-Q7mZ2xK9pL4vN8rT3wY6bH1c"
EMAIL = "lena.kowalski@example.org"
PHONE = "+44 20 7946 0958"
MOBILE = "13912345678"
CARD = "4539 1488 0343 6467"
CN_ID = "11010519491231002X"
IBAN = "DE89 3704 0044 0532 0130 00"

RAW: dict[str, list[str]] = {
    "secret": [SECRET, "Q7mZ2xK9pL4vN8rT"],
    "email": [EMAIL, "kowalski"],
    "phone": [PHONE, "20 7946", MOBILE, "1391234"],
    "card": [CARD, CARD.replace(" ", ""), "1488 0343", "14880343"],
    "cn_id": [CN_ID, "1101051949"],
    "iban": [IBAN, IBAN.replace(" ", ""), "3704 0044", "37040044"],
}

SENTENCES = {
    "secret": f"My OpenAI key is {SECRET} for the travel bot.",
    "email": f"Send the itinerary to {EMAIL} please.",
    "phone": f"Call me on {PHONE} or on my mobile {MOBILE} tomorrow.",
    "card": f"Book the hotel with my card {CARD} next week.",
    "cn_id": f"My resident ID number is {CN_ID} for the train ticket.",
    "iban": f"Refunds go to my account {IBAN} at Commerzbank.",
}

ALL_REDACT = RedactionConfig.uniform("redact")


def _bytes(db: Any) -> bytes:
    """The store file and its write-ahead log, as they are on disk now; on PostgreSQL,
    every value of every table, as the database returns them (text as UTF-8)."""
    out = b""
    if is_postgres(db):
        for table in sorted(table_names(db)):
            for row in raw_rows(db, f"SELECT * FROM {table}"):
                for value in row:
                    if isinstance(value, bytes | bytearray | memoryview):
                        out += bytes(value) + b"\0"
                    else:
                        out += str(value).encode() + b"\0"
        return out
    for suffix in ("", "-wal", "-journal"):
        part = Path(f"{db}{suffix}")
        if part.exists():
            out += part.read_bytes()
    return out


def _leaks(blob: bytes | str, kinds: Sequence[str]) -> list[str]:
    """The raw pieces of ``kinds`` found in ``blob`` (UTF-8 and, for the file, UTF-16)."""
    found = []
    for kind in kinds:
        for piece in RAW[kind]:
            if isinstance(blob, str):
                if piece in blob:
                    found.append(piece)
            elif piece.encode() in blob or piece.encode("utf-16-le") in blob:
                found.append(piece)
    return found


def _dump(value: Any) -> str:
    """Everything a read returned, as one text to search for raw values."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    elif hasattr(value, "__dataclass_fields__"):
        value = {k: getattr(value, k) for k in value.__dataclass_fields__}
    if isinstance(value, list | tuple):
        return "\n".join(_dump(v) for v in value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _everything(mem: Memory, user: str) -> str:
    """All a user can read back: records, history, facts, entities, search hits."""
    records = mem.list(user_id=user, limit=1000).items
    parts = [_dump(records), _dump(mem.facts(user_id=user, include_history=True))]
    parts.append(_dump(mem.entities(user_id=user)))
    for r in records:
        parts.append(_dump(mem.history(r.id)))
    for query in ("card hotel", "email itinerary", "phone mobile", "key bot", "account", "ID"):
        parts.append(_dump(mem.search(query, user_id=user, limit=50)))
    return "\n".join(parts)


def _open(db: Path, clock: Any, **kwargs: Any) -> Memory:
    return Memory(db, embedder="hashing", clock=clock, **kwargs)


# -- the setting -----------------------------------------------------------------------------


def test_the_setting_reads_configs_names_and_type_action_pairs() -> None:
    default = RedactionConfig()
    assert resolve_privacy("default") == default
    assert resolve_privacy(True) == default
    assert resolve_privacy(" On ") == default
    for off in (None, False, "off", "none", "OFF", "false"):
        assert resolve_privacy(off) is None
    config = RedactionConfig(card="redact")
    assert resolve_privacy(config) is config
    assert resolve_privacy("redact") == ALL_REDACT
    assert resolve_privacy("email=mask, phone=mask") == RedactionConfig(email="mask", phone="mask")
    assert resolve_privacy("redact,phone=keep") == RedactionConfig.uniform("redact").model_copy(
        update={"phone": "keep"}
    )
    assert resolve_privacy("mask,default,card=keep") == RedactionConfig(card="keep")
    for bad, words in (
        ("emial=mask", "unknown type 'emial'"),
        ("email=hide", "unknown action 'hide'"),
        ("loud", "cannot read 'loud'"),
        (",", "is empty"),
    ):
        with pytest.raises(ValidationError, match=words) as err:
            resolve_privacy(bad, "--privacy")
        assert err.value.field == "--privacy"
    with pytest.raises(ValidationError) as err:
        resolve_privacy(3)
    assert err.value.field == "privacy"


def test_memory_redacts_by_default_and_refuses_a_bad_setting(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    with _open(new_db("a"), clock) as mem:
        assert mem.privacy == RedactionConfig()
    with _open(new_db("b"), clock, privacy=None) as mem:
        assert mem.privacy is None
    with pytest.raises(ValidationError) as err:
        _open(new_db("c"), clock, privacy="cards=mask")
    assert err.value.field == "privacy"
    if not is_postgres(new_db("c")):
        assert not Path(new_db("c")).exists(), "a bad setting fails before the store is made"


# -- add, search, get, list, history, facts, the file --------------------------------------


def test_every_type_is_redacted_at_add_and_found_nowhere(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock, privacy=ALL_REDACT) as mem:
        stored = mem.add(
            [{"role": "user", "content": s} for s in SENTENCES.values()]
            + [{"role": "user", "content": "I live in Paris and I love hiking."}],
            user_id="u1",
            metadata={"contact": EMAIL, "billing": {"card": CARD, "iban": [IBAN]},
                      "api_key": "Zr7Kq2Lm9Xv4Tn8Bw3Hs6Jd1Fp5Gc0Ya", "note": f"id {CN_ID}"},
        )  # fmt: skip
        by_kind = dict(zip(SENTENCES, stored, strict=False))
        for kind, rec in by_kind.items():
            assert f"[{kind.upper()}]" in rec.content
            assert _leaks(rec.content, [kind]) == []
            report = rec.metadata[REDACTED_KEY]
            assert report["content"] == ({"phone": 2} if kind == "phone" else {kind: 1})
            assert report["metadata"] == {"card": 1, "cn_id": 1, "email": 1, "iban": 1, "secret": 1}
            assert rec.metadata["api_key"] == "[SECRET]"  # a secret's name: secret as a whole
            assert rec.metadata["billing"] == {"card": "[CARD]", "iban": ["[IBAN]"]}
            assert mem.get(rec.id) == rec
        # Facts still come from the rest of the text; none is about a placeholder.
        facts = mem.facts(user_id="u1")
        assert {(f.predicate, f.object) for f in facts} >= {("lives_in", "Paris")}
        assert not any("[" in f.object or "*" in f.object for f in facts)
        # Search finds the redacted records by their other words, and by the type.
        hits = mem.search("hotel card", user_id="u1", limit=3)
        assert hits[0].memory.id == by_kind["card"].id
        assert _leaks(_everything(mem, "u1"), list(RAW)) == []
        assert _leaks(_bytes(db), list(RAW)) == [], "raw PII in the SQLite file or its WAL"
    assert _leaks(_bytes(db), list(RAW)) == []


def test_mask_keeps_a_hint_and_not_the_value(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock, privacy="mask") as mem:
        recs = mem.add(list(SENTENCES.values()), user_id="u1")
        content = "\n".join(r.content for r in recs)
        for hint in ("**** **** **** 6467", "**************002X", "DE** **** **** **** **30 00",
                     "l***@e***.org", "+44 ** **** 0958", "139****5678", "sk-p****bH1c"):  # fmt: skip
            assert hint in content
        assert all(REDACTED_KEY in r.metadata for r in recs)
        assert _leaks(_everything(mem, "u1"), list(RAW)) == []
    assert _leaks(_bytes(db), list(RAW)) == []


def test_the_default_keeps_emails_and_phones_and_hides_the_rest(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock) as mem:
        recs = dict(zip(SENTENCES, mem.add(list(SENTENCES.values()), user_id="u1"), strict=True))
        assert recs["email"].content == SENTENCES["email"]  # kept verbatim
        assert recs["phone"].content == SENTENCES["phone"]
        assert REDACTED_KEY not in recs["email"].metadata, "a kept value is not reported"
        assert "[SECRET]" in recs["secret"].content
        assert "**** **** **** 6467" in recs["card"].content
        assert _leaks(_everything(mem, "u1"), ["secret", "card", "cn_id", "iban"]) == []
    blob = _bytes(db)
    assert EMAIL.encode() in blob and MOBILE.encode() in blob
    assert _leaks(blob, ["secret", "card", "cn_id", "iban"]) == []


def test_per_type_actions_are_honoured(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    config = RedactionConfig(secret="mask", email="redact", phone="mask", card="keep",
                             cn_id="redact", iban="keep")  # fmt: skip
    with _open(new_db("m"), clock, privacy=config) as mem:
        recs = dict(zip(SENTENCES, mem.add(list(SENTENCES.values()), user_id="u1"), strict=True))
    assert "sk-p****bH1c" in recs["secret"].content
    assert "[EMAIL]" in recs["email"].content
    assert "+44 ** **** 0958" in recs["phone"].content and "139****5678" in recs["phone"].content
    assert recs["card"].content == SENTENCES["card"]
    assert "[CN_ID]" in recs["cn_id"].content
    assert recs["iban"].content == SENTENCES["iban"]


def test_off_stores_exactly_what_was_given(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    for off in (None, "off"):
        with _open(db, clock, privacy=off) as mem:
            recs = mem.add(list(SENTENCES.values()), user_id=f"u-{off}",
                           metadata={"card": CARD, REDACTED_KEY: "mine"})  # fmt: skip
            assert [r.content for r in recs] == list(SENTENCES.values())
            assert all(r.metadata == {"card": CARD, REDACTED_KEY: "mine"} for r in recs)
    assert CARD.encode() in _bytes(db)


def test_the_report_cannot_be_forged_and_dedup_sees_redacted_text(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    with _open(new_db("m"), clock, privacy=ALL_REDACT) as mem:
        [plain] = mem.add("Nothing personal here.", user_id="u1", metadata={REDACTED_KEY: 1})
        assert plain.metadata == {}
        first = mem.add(f"My card is {CARD}.", user_id="u1")
        second = mem.add("My card is 5555 5555 5555 4444.", user_id="u1")
        # Both read "My card is [CARD]." when stored: the same memory.
        assert first[0].id == second[0].id


# -- update --------------------------------------------------------------------------------


def test_update_redacts_new_content_and_metadata_and_keeps_the_report(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock, privacy=ALL_REDACT) as mem:
        [rec] = mem.add("Remind me to renew my passport.", user_id="u1", metadata={"k": 1})
        assert REDACTED_KEY not in rec.metadata
        new = mem.update(rec.id, content=SENTENCES["card"], user_id="u1")
        assert "[CARD]" in new.content
        assert new.metadata == {"k": 1, REDACTED_KEY: {"content": {"card": 1}}}
        # New metadata only: the content's part of the report stays, a forged one goes.
        new = mem.update(rec.id, metadata={"iban": IBAN, REDACTED_KEY: {"content": {}}})
        assert new.metadata == {
            "iban": "[IBAN]",
            REDACTED_KEY: {"content": {"card": 1}, "metadata": {"iban": 1}},
        }
        new = mem.update(rec.id, content=f"Mail {EMAIL} about it.")
        assert new.metadata[REDACTED_KEY] == {"content": {"email": 1}, "metadata": {"iban": 1}}
        new = mem.update(rec.id, content="Nothing left.", metadata={"k": 2})
        assert new.metadata == {"k": 2}
        assert mem.get(rec.id) == new
        assert _leaks(_dump(mem.history(rec.id)), list(RAW)) == []
        assert _leaks(_everything(mem, "u1"), list(RAW)) == []
    assert _leaks(_bytes(db), list(RAW)) == []


# -- facts ---------------------------------------------------------------------------------


def test_a_placeholder_or_mask_is_never_a_fact(new_db: Callable[[str], Any], clock: Any) -> None:
    for privacy in (ALL_REDACT, "mask", "default"):
        db = new_db(f"{privacy!s:.8}")
        with _open(db, clock, privacy=privacy) as mem:
            mem.add(
                [f"I like {CARD}.", f"My favourite number is {CN_ID}.", f"I love {EMAIL}.",
                 f"I like {IBAN}.", "I live in Lisbon.", "我喜欢 13912345678。"],
                user_id="u1",
            )  # fmt: skip
            facts = mem.facts(user_id="u1")
            objects = {f.object for f in facts}
            assert "Lisbon" in objects
            for f in facts:
                assert not any(p in f.object for p in ("[", "*")), f
        if privacy == "default":  # emails are kept: "likes <email>" is a real fact then
            assert EMAIL in objects


def test_feedback_facts_are_redacted_like_their_message(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock, privacy=ALL_REDACT) as mem:
        facts = mem.learn_from_feedback(user_id="u1", action=f"paying with card {CARD}",
                                        feedback="+1")  # fmt: skip
        assert [(f.predicate, f.object) for f in facts] == [("likes", "paying with card [CARD]")]
        words = mem.learn_from_feedback(
            user_id="u1", action="the reminder", feedback=f"Stop texting {PHONE} please"
        )
        assert words and all("[PHONE]" in f.object for f in words)
        assert _leaks(_everything(mem, "u1"), list(RAW)) == []
        # A fact that would be about nothing but the redacted value is not kept.
        assert mem.learn_from_feedback(user_id="u2", action=CARD, feedback="+1") == []
    assert _leaks(_bytes(db), list(RAW)) == []


def test_extract_facts_later_applies_the_setting(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock, privacy=None, extractor=None) as mem:
        mem.add(f"I like {CARD}. I live in Porto.", user_id="u1")
    with _open(db, clock, privacy=ALL_REDACT) as mem:
        assert mem.extract_facts() >= 1
        assert {f.object for f in mem.facts(user_id="u1")} == {"Porto"}


# -- procedural ----------------------------------------------------------------------------


def test_record_outcome_redacts_task_strategy_and_detail(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock, privacy=ALL_REDACT) as mem:
        rec = mem.record_outcome(
            user_id="u1", task=f"refund order to {IBAN}", strategy=f"call {PHONE}",
            success=False, detail=f"bank rejected card {CARD}; token {SECRET}",
            metadata={"contact": EMAIL},
        )  # fmt: skip
        assert rec.content == (
            "Task: refund order to [IBAN]\nStrategy: call [PHONE]\nOutcome: failure\n"
            "Detail: bank rejected card [CARD]; token [SECRET]"
        )
        assert rec.metadata[REDACTED_KEY]["metadata"] == {
            "card": 1, "email": 1, "iban": 1, "phone": 1, "secret": 1,
        }  # fmt: skip
        [outcome] = mem.outcomes(user_id="u1")
        assert outcome.strategy == "call [PHONE]" and outcome.task == "refund order to [IBAN]"
        assert mem.should_avoid(user_id="u1", task="refund order to [IBAN]",
                                strategy="call [PHONE]") is not None  # fmt: skip
        assert _leaks(_dump(mem.strategies("refund order", user_id="u1")), list(RAW)) == []
        assert _leaks(_everything(mem, "u1"), list(RAW)) == []
    assert _leaks(_bytes(db), list(RAW)) == []


# -- working memory and summaries ----------------------------------------------------------


class LeakySummarizer:
    """A summariser that restates a personal value it was never given (as an LLM
    summariser might from its context): what it writes must be redacted too."""

    name = "leaky"

    def summarize(self, lines: Sequence[str], max_tokens: int, counter: TokenCounter) -> str:
        text = f"The user paid with {CARD} and wrote from {EMAIL}."
        return counter.truncate(text, max_tokens)


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "sqlite":
        return "sqlite"
    url: str = request.getfixturevalue("redis_url")
    return url


def _redis_bytes(url: str) -> bytes:
    import redis

    prefix = url.split("prefix=")[1]
    client = redis.Redis.from_url(url.split("?")[0])
    try:
        out = b""
        for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            kind = client.type(key)
            if kind == b"string":
                out += client.get(key) or b""
            elif kind == b"hash":
                out += b"".join(k + v for k, v in client.hgetall(key).items())
            elif kind == b"list":
                out += b"".join(client.lrange(key, 0, -1))
            elif kind == b"zset":
                out += b"".join(m for m, _ in client.zrange(key, 0, -1, withscores=True))
            elif kind == b"set":
                out += b"".join(client.smembers(key))
        return out
    finally:
        client.close()


@pytest.mark.parametrize("summarizer", ["extractive", "leaky"])
def test_working_memory_windows_and_summaries_hold_no_raw_value(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any, backend: str, summarizer: str
) -> None:
    db = new_db("m")
    spec: Any = LeakySummarizer() if summarizer == "leaky" else summarizer
    mem = _open(db, clock, privacy=ALL_REDACT, sessions=backend, summarizer=spec)
    try:
        wm = mem.working(session_id="s1", user_id="u1", budget_tokens=256)
        held = [wm.add("user", s) for s in SENTENCES.values()]
        assert all(_leaks(m.content, list(RAW)) == [] for m in held)
        for i in range(12):  # enough turns to compact the sensitive ones out
            wm.add("assistant" if i % 2 else "user", f"Filler turn {i} about the trip to Kyoto.")
        assert wm.evicted_count > 0 and wm.summary
        window = _dump(wm.messages()) + wm.summary
        assert _leaks(window, list(RAW)) == []
        if summarizer == "leaky":
            assert "[CARD]" in wm.summary or "[EMAIL]" in wm.summary
        # The same window read back in another process's way: from the session store.
        again = mem.working(session_id="s1", user_id="u1", budget_tokens=256)
        assert _leaks(_dump(again.messages()), list(RAW)) == []
        ended = mem.end_session(session_id="s1", user_id="u1")
        assert ended.summary is not None
        assert _leaks(ended.summary.content, list(RAW)) == []
        if summarizer == "leaky":
            assert "[CARD]" in ended.summary.content
            assert ended.summary.metadata[REDACTED_KEY]["content"]["card"] >= 1
        assert _leaks(_everything(mem, "u1"), list(RAW)) == []
        assert _leaks(_bytes(db), list(RAW)) == []
        if backend != "sqlite":
            assert _leaks(_redis_bytes(backend), list(RAW)) == []
    finally:
        mem.close()
        close = getattr(mem.sessions, "close", None)
        if close is not None:
            close()
    assert _leaks(_bytes(db), list(RAW)) == []


def test_a_turn_too_long_for_the_window_is_archived_redacted(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    db = new_db("m")
    with _open(db, clock, privacy=ALL_REDACT) as mem:
        wm = mem.working(session_id="s1", user_id="u1", budget_tokens=256)
        long = " ".join([SENTENCES["card"], SENTENCES["iban"]] + ["More words here."] * 200)
        msg = wm.add("user", long)
        assert msg.truncated
        archived = mem.get(msg.archived_id or "")
        assert "[CARD]" in archived.content and "[IBAN]" in archived.content
        assert _leaks(archived.content + msg.content, list(RAW)) == []
    assert _leaks(_bytes(db), list(RAW)) == []


# -- import restores exactly ---------------------------------------------------------------


def test_import_restores_exactly_without_redacting(
    new_db: Callable[[str], Any], tmp_path: Path, clock: Any
) -> None:
    with _open(new_db("a"), clock, privacy=None) as source:
        [rec] = source.add(SENTENCES["card"], user_id="u1")
        rows = list(source.export(user_id="u1"))
    with _open(new_db("b"), clock, privacy=ALL_REDACT) as target:
        assert target.import_rows(rows) == 1
        assert target.get(rec.id).content == SENTENCES["card"]


# -- command line --------------------------------------------------------------------------


def _cli(db: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    result = CliRunner().invoke(
        app, ["--db", str(db), "--embedder", "hashing", "--json", *args], env=env
    )
    return result


def test_cli_privacy_option_and_environment(new_db: Callable[[str], Any], tmp_path: Path) -> None:
    db = new_db("m")
    env = {"MNEMOLAYER_PRIVACY": ""}
    out = _cli(db, "add", SENTENCES["email"], "--user", "u1", env=env)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)[0]["content"] == SENTENCES["email"]  # default keeps email
    out = _cli(db, "--privacy", "email=redact", "add", SENTENCES["email"], "--user", "u2", env=env)
    assert out.exit_code == 0, out.output
    assert "[EMAIL]" in json.loads(out.stdout)[0]["content"]
    out = _cli(db, "add", SENTENCES["email"], "--user", "u3",
               env={"MNEMOLAYER_PRIVACY": "email=mask"})  # fmt: skip
    assert "l***@e***.org" in json.loads(out.stdout)[0]["content"]
    out = _cli(db, "--privacy", "off", "add", SENTENCES["card"], "--user", "u4",
               env={"MNEMOLAYER_PRIVACY": "redact"})  # fmt: skip
    assert json.loads(out.stdout)[0]["content"] == SENTENCES["card"], "the option wins"
    bad = _cli(db, "--privacy", "emails=mask", "list", "--user", "u1", env=env)
    assert bad.exit_code != 0 and "--privacy" in bad.output
    bad = _cli(db, "list", "--user", "u1", env={"MNEMOLAYER_PRIVACY": "nope"})
    assert bad.exit_code != 0 and "MNEMOLAYER_PRIVACY" in bad.output


def test_server_settings_carry_the_privacy_setting(
    new_db: Callable[[str], Any], tmp_path: Path
) -> None:
    pytest.importorskip("fastapi")
    from mnemolayer.server.rest.settings import ServerSettings
    from mnemolayer.server.rest.tenants import TenantPool

    settings = ServerSettings(db=str(new_db("m")), embedder="hashing",
                              privacy="email=redact")  # fmt: skip
    pool = TenantPool(settings)
    try:
        mem = pool.get("default")
        assert mem.privacy == RedactionConfig(email="redact")
    finally:
        pool.close()
    with pytest.raises(ValueError, match="privacy"):
        ServerSettings(db=str(new_db("m")), privacy="email=hide")


@pytest.fixture(autouse=True)
def _no_privacy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("MNEMOLAYER_PRIVACY", raising=False)
    yield
    assert os.environ.get("MNEMOLAYER_PRIVACY") is None

"""Encryption at rest (issue 7, item 1): no plaintext in the files, everything reads back,
clear errors for wrong, missing and unexpected keys, rotation, crypto-shredding."""

from __future__ import annotations

import base64
import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mnemolayer import Memory
from mnemolayer.crypto import EncryptionConfig, KeyRing, KeyUnavailableError, resolve_encryption
from mnemolayer.errors import StoreError, ValidationError

SECRET = "Grandmother Ottoline hides the saffron ledger inside Zanzibar lighthouse"
WORDS = ["Ottoline", "saffron", "ledger", "Zanzibar", "lighthouse", "Grandmother"]
SESSION_TEXT = "Quetzalcoatl murmured about the obsidian kiwano harvest"
SESSION_WORDS = ["Quetzalcoatl", "obsidian", "kiwano"]


def _key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def _files(path: Path) -> list[Path]:
    return [p for p in (path.parent.glob(path.name + "*")) if p.is_file()]


def _leaks(path: Path, words: list[str]) -> dict[str, list[str]]:
    """Which words occur (any case, UTF-8) in the bytes of the store's files."""
    out: dict[str, list[str]] = {}
    for f in _files(path):
        data = f.read_bytes().lower()
        found = [w for w in words if w.lower().encode() in data]
        if found:
            out[f.name] = found
    return out


def _open(path: Path, key: str | bytes, **kw) -> Memory:
    return Memory(path, embedder="hashing", encryption=EncryptionConfig(master_key=key), **kw)


@pytest.fixture
def key() -> str:
    return _key()


def _fill(mem: Memory) -> str:
    rec = mem.add(
        SECRET, user_id="alice", session_id="s1", metadata={"topic": "Ottoline", "rank": 3}
    )[0]
    mem.add("I live in Zanzibar", user_id="alice", session_id="s1", metadata={"rank": 1})
    mem.add("My sister is Ottoline", user_id="alice", session_id="s1")
    mem.add("Bob likes plain tea", user_id="bob", metadata={"topic": "tea"})
    w = mem.working(session_id="s1", user_id="alice")
    w.add("user", SESSION_TEXT)
    w.add("assistant", "Noted the obsidian kiwano harvest.")
    mem.update(rec.id, metadata={"topic": "Ottoline", "rank": 3, "tags": ["saffron", "x"]})
    return rec.id


def test_no_plaintext_in_files_and_everything_reads_back(tmp_path: Path, key: str) -> None:
    path = tmp_path / "enc.db"
    mem = _open(path, key)
    rid = _fill(mem)
    words = WORDS + SESSION_WORDS
    # With the connection still open: data file, its -wal, the keyring and its -wal.
    assert Path(str(path) + "-wal").exists()
    assert _leaks(path, words) == {}
    # Reads decrypt transparently.
    for mode in ("hybrid", "keyword", "vector"):
        hits = mem.search("saffron ledger Zanzibar", user_id="alice", mode=mode)
        assert SECRET in [h.memory.content for h in hits], mode
    kw = mem.search("Ottoline", user_id="alice", mode="keyword")
    assert kw and all("Ottoline" in h.memory.content for h in kw)
    got = mem.get(rid)
    assert got.content == SECRET and got.metadata["topic"] == "Ottoline"
    assert SECRET in [r.content for r in mem.list(user_id="alice").items]
    hist = mem.history(rid)
    assert hist[0].new_content == SECRET
    assert hist[-1].event == "UPDATE" and hist[-1].new_metadata["tags"] == ["saffron", "x"]
    facts = mem.facts(user_id="alice")
    assert {"Zanzibar", "Ottoline"} <= {f.object for f in facts}
    names = {e.name for e in mem.entities(user_id="alice")}
    assert "Zanzibar" in names or "Ottoline" in names
    ctx = mem.context("where is the saffron ledger?", user_id="alice", session_id="s1")
    assert "saffron ledger" in ctx.text and "obsidian kiwano" in ctx.text
    rows = list(mem.export(user_id="alice"))
    dumped = json.dumps(rows, default=str)
    assert SECRET in dumped and SESSION_TEXT in dumped
    assert mem.search("plain tea", user_id="bob")[0].memory.content == "Bob likes plain tea"
    mem.close()
    # After a close (log checkpointed into the file).
    assert _leaks(path, words) == {}
    # Reopened with the key: the window resumes, search still works.
    mem = _open(path, key)
    w = mem.working(session_id="s1", user_id="alice")
    assert next(m.content for m in w.window()) == SESSION_TEXT
    assert mem.search("Zanzibar", user_id="alice", mode="keyword")
    mem.close()


def test_index_and_hash_hold_no_plaintext(tmp_path: Path, key: str) -> None:
    path = tmp_path / "enc.db"
    with _open(path, key) as mem:
        mem.add(SECRET, user_id="alice")
        # Idempotent add still works with the keyed content hash.
        again = mem.add(SECRET, user_id="alice")
        assert len(mem.list(user_id="alice").items) == len(
            {r.id for r in mem.list(user_id="alice").items}
        )
        assert again[0].content == SECRET
    conn = sqlite3.connect(path)
    terms = [t for (row,) in conn.execute("SELECT terms FROM memories_fts") for t in row.split()]
    assert terms and all(len(t) == 16 and int(t, 16) >= 0 for t in terms)
    hashes = [h for (h,) in conn.execute("SELECT content_hash FROM memories")]
    assert all(h.startswith("k1:") for h in hashes)
    contents = [c for (c,) in conn.execute("SELECT content FROM memories")]
    assert all(c.startswith("enc:v1:") for c in contents)
    conn.close()


def test_metadata_filters_work_encrypted(tmp_path: Path, key: str) -> None:
    with _open(tmp_path / "enc.db", key) as mem:
        mem.add("trip to Porto", user_id="u", metadata={"city": "Porto", "age": 31})
        mem.add("trip to Lima", user_id="u", metadata={"city": "Lima", "age": 45, "tags": ["x"]})
        mem.add("trip to Oslo", user_id="u", metadata={"city": "Oslo"})

        def listed(f: dict) -> set[str]:
            return {r.content for r in mem.list(user_id="u", filters=f).items}

        assert listed({"city": "Porto"}) == {"trip to Porto"}
        assert listed({"age": {"gte": 40}}) == {"trip to Lima"}
        assert listed({"tags": {"contains": "x"}}) == {"trip to Lima"}
        assert listed({"not": {"city": "Porto"}}) == {"trip to Lima", "trip to Oslo"}
        assert listed({"or": [{"city": "Oslo"}, {"age": {"lt": 35}}]}) == {
            "trip to Oslo",
            "trip to Porto",
        }
        for mode in ("hybrid", "keyword", "vector"):
            hits = mem.search("trip", user_id="u", filters={"city": {"in": ["Lima"]}}, mode=mode)
            assert [h.memory.content for h in hits] == ["trip to Lima"], mode


def test_missing_wrong_and_unexpected_keys_fail_clearly(tmp_path: Path, key: str) -> None:
    path = tmp_path / "enc.db"
    with _open(path, key) as mem:
        mem.add(SECRET, user_id="alice")
    keys_before = Path(str(path) + ".keys").read_bytes()

    def count() -> int:
        conn = sqlite3.connect(path)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
        finally:
            conn.close()

    with pytest.raises(StoreError, match="encrypted"):
        Memory(path, embedder="hashing")
    with pytest.raises(ValidationError, match="wrong master key") as err:
        _open(path, _key())
    assert err.value.field == "encryption"
    assert Path(str(path) + ".keys").read_bytes() == keys_before
    assert count() == 1
    # Keyring gone: a clear error, no new keyring made.
    shutil.move(str(path) + ".keys", tmp_path / "moved.keys")
    with pytest.raises(StoreError, match=r"keyring .* is missing"):
        _open(path, key)
    assert not Path(str(path) + ".keys").exists()
    shutil.move(tmp_path / "moved.keys", str(path) + ".keys")
    # A plain store with data, opened with a key: refused, no keyring created.
    plain = tmp_path / "plain.db"
    with Memory(plain, embedder="hashing") as mem:
        mem.add("plain words", user_id="u")
    with pytest.raises(StoreError, match="plain"):
        _open(plain, key)
    assert not Path(str(plain) + ".keys").exists()
    with Memory(plain, embedder="hashing") as mem:
        assert mem.list(user_id="u").items[0].content == "plain words"
    # Bad keys name the setting.
    with pytest.raises(ValidationError) as bad:
        _open(tmp_path / "x.db", "bm90IGEga2V5")
    assert bad.value.field == "encryption.master_key"
    with pytest.raises(ValidationError) as bad:
        Memory(tmp_path / "x.db", encryption=EncryptionConfig(key_file=tmp_path / "nope"))
    assert bad.value.field == "encryption.key_file"
    with pytest.raises(ValidationError, match="MNEMOLAYER_MASTER_KEY"):
        resolve_encryption(True, env={})


def test_encryption_true_reads_environment(tmp_path: Path, key: str, monkeypatch) -> None:
    key_file = tmp_path / "master.key"
    key_file.write_text(key + "\n")
    monkeypatch.delenv("MNEMOLAYER_MASTER_KEY", raising=False)
    monkeypatch.setenv("MNEMOLAYER_MASTER_KEY_FILE", str(key_file))
    with Memory(tmp_path / "e.db", embedder="hashing", encryption=True) as mem:
        mem.add(SECRET, user_id="alice")
        assert mem.keyring is not None and mem.keyring.users() == ["alice"]
    monkeypatch.delenv("MNEMOLAYER_MASTER_KEY_FILE")
    monkeypatch.setenv("MNEMOLAYER_MASTER_KEY", key)
    with Memory(tmp_path / "e.db", embedder="hashing", encryption=True) as mem:
        assert mem.list(user_id="alice").items[0].content == SECRET


def test_rotation(tmp_path: Path, key: str) -> None:
    path = tmp_path / "enc.db"
    with _open(path, key) as mem:
        _fill(mem)
        before = {u: [r.content for r in mem.list(user_id=u).items] for u in ("alice", "bob")}
        assert mem.keyring is not None
        new = _key()
        assert mem.keyring.rotate(base64.b64decode(new)) == 2
        # Still working in this process after the rotation.
        assert mem.search("saffron", user_id="alice", mode="keyword")
    with pytest.raises(ValidationError, match="wrong master key"):
        _open(path, key)
    with _open(path, new) as mem:
        after = {u: [r.content for r in mem.list(user_id=u).items] for u in ("alice", "bob")}
        assert after == before
        assert mem.history(mem.list(user_id="alice").items[0].id)


def test_cli_keys_rotate(tmp_path: Path, key: str, monkeypatch) -> None:
    from mnemolayer.cli import app

    path = tmp_path / "cli.db"
    with _open(path, key) as mem:
        mem.add(SECRET, user_id="alice")
    new = _key()
    (tmp_path / "new.key").write_text(new)
    monkeypatch.delenv("MNEMOLAYER_MASTER_KEY_FILE", raising=False)
    monkeypatch.setenv("MNEMOLAYER_MASTER_KEY", key)
    runner = CliRunner()
    res = runner.invoke(
        app,
        ["--db", str(path), "--embedder", "hashing", "--json", "keys", "rotate",
         "--new-key-file", str(tmp_path / "new.key")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["rotated"] == 1
    res = runner.invoke(app, ["--db", str(path), "--embedder", "hashing", "--json", "list",
                              "--user", "alice"])  # fmt: skip
    assert res.exit_code != 0 and "wrong master key" in res.output
    monkeypatch.setenv("MNEMOLAYER_MASTER_KEY", new)
    res = runner.invoke(app, ["--db", str(path), "--embedder", "hashing", "--json", "list",
                              "--user", "alice"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert SECRET in res.stdout


def test_crypto_shredding_leaves_backups_unreadable(tmp_path: Path, key: str) -> None:
    path = tmp_path / "enc.db"
    mem = _open(path, key)
    _fill(mem)
    alice_id = mem.list(user_id="alice").items[0].id
    mem.close()
    backup = tmp_path / "backup.db"
    shutil.copy(path, backup)  # the data file alone, as a backup would hold it
    ring = str(path) + ".keys"
    conn = sqlite3.connect(ring)
    wrapped = conn.execute("SELECT wrapped FROM data_keys WHERE user_id = 'alice'").fetchone()[0]
    conn.close()

    mem = _open(path, key)
    assert mem.keyring is not None and mem.keyring.has_key("alice")
    assert mem.keyring.users() == ["alice", "bob"]
    assert mem.keyring.destroy("alice") == 1
    assert not mem.keyring.has_key("alice") and mem.keyring.users() == ["bob"]
    with pytest.raises(KeyUnavailableError):
        mem.get(alice_id)
    assert mem.list(user_id="bob").items[0].content == "Bob likes plain tea"
    mem.close()
    # The wrapped key is gone from the keyring's bytes (secure_delete + TRUNCATE checkpoint).
    for f in _files(Path(ring)):
        assert bytes(wrapped) not in f.read_bytes(), f
    # The backup with today's keyring: alice's rows cannot be decrypted, bob's can.
    shutil.copy(ring, str(backup) + ".keys")
    with _open(backup, key) as old:
        with pytest.raises(KeyUnavailableError, match="destroyed"):
            old.get(alice_id)
        assert old.search("saffron", user_id="alice", mode="keyword") == []
        with pytest.raises(KeyUnavailableError):
            old.search("saffron", user_id="alice")
        assert old.list(user_id="bob").items[0].content == "Bob likes plain tea"
    # And raw: the ciphertext in the backup does not open under any key the keyring has.
    ringobj = KeyRing(str(backup) + ".keys", base64.b64decode(key))
    try:
        assert ringobj.data_key("alice", create=False) is None
    finally:
        ringobj.close()


def test_rows_cannot_be_swapped(tmp_path: Path, key: str) -> None:
    path = tmp_path / "enc.db"
    with _open(path, key) as mem:
        a = mem.add("first secret", user_id="u")[0]
        b = mem.add("second secret", user_id="u")[0]
    conn = sqlite3.connect(path)
    (ct,) = conn.execute("SELECT content FROM memories WHERE id = ?", (a.id,)).fetchone()
    conn.execute("UPDATE memories SET content = ? WHERE id = ?", (ct, b.id))
    conn.commit()
    conn.close()
    with _open(path, key) as mem:
        assert mem.get(a.id).content == "first secret"
        with pytest.raises(StoreError, match="does not decrypt"):
            mem.get(b.id)


def test_memory_store_and_keyring(tmp_path: Path, key: str) -> None:
    with Memory(":memory:", embedder="hashing", encryption=EncryptionConfig(master_key=key)) as mem:
        mem.add(SECRET, user_id="alice")
        assert mem.search("saffron", user_id="alice")[0].memory.content == SECRET


def test_serve_refuses_to_start_with_an_unusable_key(tmp_path: Path, key: str, monkeypatch) -> None:
    """A bad key, or one that does not open the store, stops `mnemolayer serve` at start
    with one error line (not a 422/500 on every request later)."""
    from mnemolayer.cli import app

    plain = tmp_path / "plain.db"
    with Memory(plain, embedder="hashing") as mem:
        mem.add("hello there", user_id="alice")
    runner = CliRunner()
    monkeypatch.delenv("MNEMOLAYER_MASTER_KEY_FILE", raising=False)
    monkeypatch.setenv("MNEMOLAYER_MASTER_KEY", "bad")
    res = runner.invoke(app, ["--embedder", "hashing", "serve", "--db", str(plain)])
    assert res.exit_code == 2 and "MNEMOLAYER_MASTER_KEY" in res.output, res.output
    monkeypatch.setenv("MNEMOLAYER_MASTER_KEY", key)
    res = runner.invoke(app, ["--embedder", "hashing", "serve", "--db", str(plain)])
    assert res.exit_code != 0 and "plain (unencrypted) store" in res.output, res.output
    assert not Path(f"{plain}.keys").exists()  # nothing written


def test_add_and_update_return_the_keyed_hash_that_is_stored(tmp_path: Path, key: str) -> None:
    """The plain SHA-256 of the text never leaves an encrypted store (it would let anyone
    holding a response confirm a guessed text)."""
    import hashlib

    with _open(tmp_path / "h.db", key) as mem:
        [rec] = mem.add(SECRET, user_id="alice")
        assert rec.content_hash.startswith("k1:")
        assert rec.content_hash == mem.get(rec.id).content_hash
        changed = mem.update(rec.id, content="Something else entirely", user_id="alice")
        assert changed.content_hash == mem.get(rec.id).content_hash != rec.content_hash
        plain = hashlib.sha256(SECRET.encode()).hexdigest()
        assert plain not in {rec.content_hash, changed.content_hash}

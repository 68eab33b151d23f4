"""Opening a store never drops the locks this process already holds on its file.

SQLite's locks are POSIX advisory locks, which belong to the process: closing *any*
descriptor of the file releases all of them, those of the process's other SQLite
connections included (https://sqlite.org/howtocorrupt.html, section 2.2). The store used
to read the file's header with a plain ``open()`` before connecting, so a second
``Memory`` on a file in the same process left the first without its shared lock. Another
process that closed its connection then believed it was the last one, checkpointed and
deleted the write-ahead log under the first, which lost acknowledged writes and read
"database disk image is malformed" (``test_concurrency_bar.py`` failed about one run in
twenty under load).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mnemolayer import Memory
from mnemolayer.errors import StoreCorruptError

OTHER_PROCESS = textwrap.dedent(
    """
    import sys
    from mnemolayer import Memory
    with Memory(sys.argv[1], embedder="hashing") as mem:
        mem.add("The other process was here.", user_id="u")
    """
)


def test_a_second_handle_keeps_the_first_ones_lock_against_another_process(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    with Memory(path, embedder="hashing") as first:
        [one] = first.add("I live in Lisbon.", user_id="u")
        with Memory(path, embedder="hashing") as second:
            second.add("I work at a bakery.", user_id="u")
            # The other process closes its connection while both handles are open: it
            # must see them (its close may not checkpoint and delete the log).
            subprocess.run(
                [sys.executable, "-c", OTHER_PROCESS, str(path)], check=True, timeout=120
            )
            assert Path(f"{path}-wal").exists(), "the other process removed the live log"
            [two] = second.add("I play the cello.", user_id="u")
        [three] = first.add("I moved to Porto.", user_id="u")
        contents = {r.content for r in first.list(user_id="u", kinds=["episodic"]).items}
        assert contents == {
            "I live in Lisbon.",
            "I work at a bakery.",
            "The other process was here.",
            "I play the cello.",
            "I moved to Porto.",
        }
        for record in (one, two, three):
            assert first.get(record.id, user_id="u").content == record.content


def test_a_file_that_is_not_a_database_is_still_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("just some notes, not a database\n" * 20)
    with pytest.raises(StoreCorruptError, match="not an SQLite file") as caught:
        Memory(path, embedder="hashing")
    assert str(path) in str(caught.value)
    assert path.read_text().startswith("just some notes")  # nothing written to it

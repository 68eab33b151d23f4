"""The test tree keeps its promise: every test under ``tests/contract`` runs on both store
engines, SQLite and PostgreSQL, by the ``store_backend`` parametrization of
``tests/conftest.py`` (markers, not opt-outs).

Three checks:

* collected in a pytest process of its own, every contract test that has a store has a
  run with ``store_backend == "sqlite"`` and one with ``"postgres"`` (per set of its
  other parameters), and none is marked ``sqlite_only``; one without a store fails if it
  opens one (``tests/contract/conftest.py``);
* ``sqlite_only`` is written nowhere outside ``tests/sqlite_only`` (the directory sets it);
* no contract file opens a store on a path of its own (a file under ``tmp_path``, an
  in-memory SQLite, an ``sqlite:///`` URL, a temporary directory): it would run on
  SQLite twice and never on PostgreSQL. Such a file gets its stores from the fixtures
  (``db_path``, ``other_db_path``, ``new_db``, ``module_db``, ``mem``...).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
CONTRACT = TESTS / "contract"
SQLITE_ONLY = TESTS / "sqlite_only"

#: A pytest plugin for the collecting process: writes what each contract item runs on.
PROBE = """
import json, os

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    out = []
    for item in items:
        spec = getattr(item, "callspec", None)
        params = dict(spec.params) if spec is not None else {}
        others = sorted((k, repr(v)) for k, v in params.items() if k != "store_backend")
        out.append({
            "nodeid": item.nodeid,
            "function": f"{item.path}::{item.getparent(pytest.Class).name if item.getparent(pytest.Class) else ''}::{getattr(item, 'originalname', item.name)}",
            "others": others,
            "backend": params.get("store_backend"),
            "sqlite_only": item.get_closest_marker("sqlite_only") is not None,
        })
    with open(os.environ["LAYOUT_PROBE_OUT"], "w", encoding="utf-8") as f:
        json.dump(out, f)
"""

#: What opening a store on a path of a test's own looks like in a contract file.
OWN_STORE = [
    (re.compile(r"""\.db["']"""), "a .db file of its own"),
    (re.compile(r"""["']:memory:["']"""), "an in-memory SQLite store"),
    (re.compile(r"""sqlite:///"""), "an sqlite:/// URL"),
    (re.compile(r"""TemporaryDirectory\("""), "a temporary directory of its own"),
    (re.compile(r"""SQLiteStore\("""), "an SQLiteStore built directly"),
]


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of ``path`` with comments and multi-line strings (docstrings, scripts a
    test writes out) blanked: what the file itself runs."""
    lines = path.read_text("utf-8").splitlines()
    with path.open("rb") as f:
        for tok in tokenize.tokenize(f.readline):
            multiline = tok.type == tokenize.STRING and tok.start[0] != tok.end[0]
            if multiline or tok.type == tokenize.COMMENT:
                (r0, c0), (r1, c1) = tok.start, tok.end
                for r in range(r0, r1 + 1):
                    line = lines[r - 1]
                    a = c0 if r == r0 else 0
                    b = c1 if r == r1 else len(line)
                    lines[r - 1] = line[:a] + " " * (b - a) + line[b:]
    return list(enumerate(lines, 1))


@pytest.fixture(scope="module")
def contract_items(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    work = tmp_path_factory.mktemp("layout")
    (work / "layout_probe.py").write_text(PROBE, encoding="utf-8")
    out = work / "items.json"
    env = {
        **os.environ,
        "LAYOUT_PROBE_OUT": str(out),
        "PYTHONPATH": os.pathsep.join([str(work), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "layout_probe", "--basetemp", str(work / "run"), str(CONTRACT)],
        cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    items: list[dict[str, Any]] = json.loads(out.read_text("utf-8"))
    assert len(items) > 500, f"only {len(items)} contract tests collected"
    return items


def test_every_contract_test_runs_on_sqlite_and_postgres(
    contract_items: list[dict[str, Any]],
) -> None:
    runs: dict[tuple[str, str], set[str | None]] = {}
    for item in contract_items:
        if item["backend"] is None:
            continue  # no store: contract/conftest.py fails it if it opens one
        key = (item["function"], json.dumps(item["others"]))
        runs.setdefault(key, set()).add(item["backend"])
    missing = sorted(
        f"{function} {others}: runs on {sorted(map(str, backends))}"
        for (function, others), backends in runs.items()
        if backends != {"sqlite", "postgres"}
    )
    assert missing == [], "contract tests not run on both engines:\n" + "\n".join(missing)


def test_no_contract_test_is_marked_sqlite_only(contract_items: list[dict[str, Any]]) -> None:
    marked = [item["nodeid"] for item in contract_items if item["sqlite_only"]]
    assert marked == [], "move these to tests/sqlite_only:\n" + "\n".join(marked)


def test_sqlite_only_is_set_by_its_directory_alone() -> None:
    here = Path(__file__).resolve()
    found = [
        f"{path.relative_to(TESTS)}:{n}"
        for path in sorted(TESTS.rglob("*.py"))
        if not path.is_relative_to(SQLITE_ONLY) and path not in (here, TESTS / "conftest.py")
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if re.search(r"mark\.sqlite_only", line)
    ]
    assert found == [], "sqlite_only outside tests/sqlite_only:\n" + "\n".join(found)


def test_no_contract_file_opens_a_store_of_its_own() -> None:
    found = [
        f"{path.relative_to(TESTS)}:{n}: {why}: {line.strip()}"
        for path in sorted(CONTRACT.rglob("*.py"))
        for n, line in _code_lines(path)
        for pattern, why in OWN_STORE
        if pattern.search(line)
    ]
    assert found == [], "contract files opening stores outside the fixtures:\n" + "\n".join(found)


def test_the_checks_see_what_they_look_for() -> None:
    """The patterns above match the forms they are meant to catch."""
    own = [
        'Memory(tmp_path / "copy.db", embedder="hashing")',
        'path = tmp_path_factory.mktemp("ctx") / "m.db"',
        'AsyncMemory(":memory:")',
        'Memory(f"sqlite:///{tmp_path}/m.db")',
        "with tempfile.TemporaryDirectory() as tmp:",
        "SQLiteStore(str(path))",
        'path = Path(tmp_path_factory.mktemp("life")) / "life.db"',
    ]
    for line in own:
        assert any(p.search(line) for p, _ in OWN_STORE), line
    for line in ['Memory(db_path, embedder="hashing")', 'out = tmp_path / "export.json"']:
        assert not any(p.search(line) for p, _ in OWN_STORE), line

"""The package layout holds: import contracts, no import cycle, small modules, SQL in store/.

The layout and its floors are drawn in ``docs/architecture.md``. Every import counts here,
including imports inside functions and under ``TYPE_CHECKING``: a lazy import still ties
the two modules together for whoever reads or changes them.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "mnemolayer"

#: Modules allowed over the size limit, with the reason (rule tables are data, not logic).
LONG_MODULES: dict[str, str] = {}  # none today; the en/zh rule tables would qualify
MAX_LINES = 600
MAX_FACADE_LINES = 400


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _graph():  # type: ignore[no-untyped-def]
    grimp = pytest.importorskip("grimp")
    return grimp.build_graph("mnemolayer", include_external_packages=False, cache_dir=None)


def test_import_contracts_hold() -> None:
    """`.importlinter`: only the edges import the facade, drivers only under store/, floors."""
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    out = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def _cycles(graph) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycles() -> None:
    """Module-level import graph is acyclic. A package's ``__init__`` counts as the
    package module: re-exporting a submodule that imports a sibling through the package
    is a cycle too."""
    cycles = _cycles(_graph())
    assert cycles == [], "\n".join(" <-> ".join(c) for c in cycles)


def test_modules_stay_small() -> None:
    too_long = {}
    for p in _modules():
        rel = p.relative_to(SRC).as_posix()
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES and rel not in LONG_MODULES:
            too_long[rel] = n
    assert too_long == {}
    for rel in LONG_MODULES:  # an exception stays needed, or leaves the list
        assert len((SRC / rel).read_text(encoding="utf-8").splitlines()) > MAX_LINES, rel


def test_the_facade_is_thin() -> None:
    n = len((SRC / "memory.py").read_text(encoding="utf-8").splitlines())
    assert n <= MAX_FACADE_LINES, f"memory.py has {n} lines"


# -- SQL lives in store/ -------------------------------------------------------------------

_SQL = re.compile(
    r"^\s*(SELECT\s.+\sFROM\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|"
    r"DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX|VIRTUAL|TRIGGER|UNIQUE)\s|PRAGMA\s|"
    r"WITH\s+\w+\s+AS\s*\(|ALTER\s+TABLE\s|DROP\s+(TABLE|INDEX)\s)",
    re.IGNORECASE | re.DOTALL,
)
#: SQL that is not a whole statement: a WHERE condition with a placeholder or a NULL
#: test, or an engine's JSON functions (what a metadata filter compiles to). Callers
#: outside store/ that pass such fragments to ``store.select(where, ...)`` hold SQL too.
_SQL_FRAGMENT = re.compile(
    r"(\w\s*(=|<>|!=|<=|>=|<|>)\s*\?|\bIN\s*\(\s*\?|\bIS\s+(NOT\s+)?NULL\b|"
    r"\bjson_(extract|each|type)\s*\(|::jsonb\b|\bCOALESCE\s*\()",
    re.IGNORECASE,
)


#: ``column IN (...)`` with the keyword in capitals (an f-string's marks read as ``x``).
_SQL_IN = re.compile(r"\b[a-z_][a-z0-9_.]*\s+(NOT\s+)?IN\s*\(")


def _is_sql(text: str) -> bool:
    return bool(_SQL.search(text) or _SQL_FRAGMENT.search(text) or _SQL_IN.search(text))


#: The files outside store/ that may hold SQL text (file: reason). The list only shrinks:
#: a file that no longer needs its entry fails the test until it is removed. Engine checks
#: are tests/test_engine_checks.py's.
SQL_OUTSIDE_STORE: dict[str, str] = {
    # The own-file stores ARCHITECTURE.md lists (import contract (b) in .importlinter):
    # each is a separate SQLite file with its own schema, never the memory store.
    "crypto/keyring.py": (
        "own-file store: the keyring (<db>.keys: data_keys, meta) beside an encrypted "
        "store, a file apart so that a copy of the store file holds no key"
    ),
    "embed/cache.py": (
        "own-file store: the embedding cache (vectors keyed by model, kind and "
        "sha256(text)), in front of any embedder, whatever the store's engine"
    ),
    "server/rest/keys.py": (
        "own-file store: the REST server's API keys (the SHA-256 of each key, its "
        "tenant), no user's memories"
    ),
    "sqlitefile.py": (
        "below the store: the PRAGMAs every SQLite file shares (WAL, autocheckpoint, "
        "journal size limit, checkpoints), used by the store and the three files above"
    ),
}


def _string_constants(tree: ast.AST) -> list[str]:
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append(
                "".join(
                    v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x"
                    for v in node.values
                )
            )
    return out


def _offenders() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in _modules():
        rel = p.relative_to(SRC).as_posix()
        if rel.startswith("store/"):
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        hits = []
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            for s in (
                _string_constants(node) if isinstance(node, ast.Constant | ast.JoinedStr) else []
            ):
                if _is_sql(s):
                    hits.append(s.strip().splitlines()[0][:80])
        if hits:
            found[rel] = hits
    return found


def test_the_sql_finder_sees_statements_and_fragments() -> None:
    for sql in (
        "SELECT id FROM memories WHERE user_id = ?",
        "DELETE FROM vectors WHERE memory_rowid IN (1)",
        "user_id = ? AND session_only = 1",
        " AND id > ?",
        "pinned = 0 AND archived_at IS NULL",
        "id IN (?, ?)",
        "id IN (x)",
        "json_extract(metadata, ?)",
        "(metadata::jsonb -> CAST(? AS text))",
        "COALESCE(occurred_at, created_at), id",
    ):
        assert _is_sql(sql), sql
    for text in (
        "Where does Ana live?",
        r"(?:days?|weeks?)",
        "is the value null? then skip",
        "pick a model from the list",
        "json_object",
        "stay in (or near) Porto",
    ):
        assert not _is_sql(text), text


def test_sql_and_engine_checks_live_in_store() -> None:
    found = _offenders()
    new = {k: v for k, v in found.items() if k not in SQL_OUTSIDE_STORE}
    assert new == {}, "SQL outside store/ (make it a store method)"
    stale = sorted(set(SQL_OUTSIDE_STORE) - set(found))
    assert stale == [], f"no longer needed in SQL_OUTSIDE_STORE: {stale}"

"""The layering rules of the package that a grep can check (ARCHITECTURE.md, rule 5).

Every difference between the SQL engines lives under ``mnemolayer/store/``, behind a hook
of the store (:class:`mnemolayer.store.core.StoreCore`): no module outside branches on
``store.dialect`` or on the class of the store.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import mnemolayer

PACKAGE = Path(mnemolayer.__file__).resolve().parent

#: The modules outside store/ that may branch on the engine, with the reason. None may:
#: the test fails when a module not listed starts branching, and when a listed one
#: stops (so that its line is removed).
ALLOWLIST: dict[str, str] = {}

#: Store classes whose name in an ``isinstance`` check is an engine check too.
_ENGINE_CLASSES = frozenset(
    {"SQLiteStore", "PostgresStore", "SQLiteConnection", "PostgresConnection"}
)


def _engine_checks(source: str) -> list[int]:
    """Lines of ``source`` that read ``.dialect``, compare a ``dialect`` with ``==`` or
    ``!=``, or pass a store engine class to ``isinstance`` (comments and strings do not
    count)."""
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(source).readline)
        if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)
    ]
    lines: list[int] = []
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME:
            continue
        before = tokens[i - 1].string if i else ""
        after = tokens[i + 1].string if i + 1 < len(tokens) else ""
        if tok.string == "dialect" and (before == "." or after in ("==", "!=")):
            lines.append(tok.start[0])
        elif tok.string == "isinstance" and after == "(":
            depth = 0
            for t in tokens[i + 1 :]:
                if t.type == tokenize.OP and t.string in ("(", "[", "{"):
                    depth += 1
                elif t.type == tokenize.OP and t.string in (")", "]", "}"):
                    depth -= 1
                elif t.type == tokenize.NAME and t.string in _ENGINE_CLASSES:
                    lines.append(tok.start[0])
                    break
                if depth == 0:
                    break
    return lines


def _offenders() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("store/"):
            continue
        lines = _engine_checks(path.read_text(encoding="utf-8"))
        if lines:
            found[rel] = lines
    return found


def test_the_engine_check_finder_sees_what_it_should() -> None:
    code = (
        "a = store.dialect\n"
        "if dialect == 'postgres':\n"
        "    pass\n"
        "ok = isinstance(s, (int, PostgresStore))\n"
        "# store.dialect in a comment\n"
        "text = 'store.dialect in a string'\n"
        "dialect = 'sqlite'\n"
        "fine = isinstance(s, int)\n"
    )
    assert _engine_checks(code) == [1, 2, 4]


def test_no_dialect_checks_outside_store() -> None:
    found = _offenders()
    new = {f: lines for f, lines in found.items() if f not in ALLOWLIST}
    assert not new, (
        f"engine checks outside store/ (lines): {new}; call a store hook instead "
        "(mnemolayer.store.core.StoreCore lists them)"
    )
    stale = sorted(set(ALLOWLIST) - set(found))
    assert not stale, f"no longer branch on the engine, remove from ALLOWLIST: {stale}"

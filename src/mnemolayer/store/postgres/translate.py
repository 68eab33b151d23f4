"""The store's SQL, written for SQLite, as PostgreSQL runs it.

mnemolayer's store code (records, graph, working memory, lifecycle passes) is written once,
in the SQLite dialect, and the PostgreSQL backend (:mod:`mnemolayer.store.postgres.store`) runs
the same statements through :func:`translate`. The translation is purely syntactic and
covers the subset of SQLite that the store uses; anything outside it is a bug to fix
here, not in the callers:

* ``?`` placeholders become psycopg's ``%s`` (and a literal ``%`` becomes ``%%``);
* ``INSERT OR IGNORE`` becomes ``INSERT … ON CONFLICT DO NOTHING``;
* an ``ON CONFLICT (columns)`` target gets ``tenant`` in front: every key of the schema
  leads with the tenant column (:mod:`mnemolayer.store.postgres.migrations`), which the
  shared SQL never names (the transaction's setting fills it);
* ``x IS ?`` / ``x IS NOT ?`` (SQLite's null-safe comparison) become
  ``IS [NOT] DISTINCT FROM``;
* the two-argument scalar ``MAX(a, b)`` / ``MIN(a, b)`` become ``GREATEST`` / ``LEAST``;
* a bare ``1`` / ``0`` used as a condition (``WHERE 1``) becomes ``TRUE`` / ``FALSE``;
* ``ORDER BY`` items get SQLite's NULL placement (first when ascending, last when
  descending), which PostgreSQL reverses by default;
* ``CAST(… AS REAL)`` becomes ``DOUBLE PRECISION`` (PostgreSQL's ``REAL`` is 4 bytes);
* a unary ``+`` before a column (``AND +f.object_id IS NOT NULL``, SQLite's way of
  keeping the planner off that column's index) is dropped: PostgreSQL has no unary
  ``+`` for text, and without it the value is the same;
* SQLite's JSON functions ``json_each``, ``json_extract`` and ``json_type`` become the
  ``ms_json_*`` functions that the PostgreSQL schema defines with SQLite's meaning
  (:mod:`mnemolayer.store.postgres.migrations`).

String literals and quoted identifiers are never rewritten.
"""

from __future__ import annotations

import functools
import re

__all__ = ["translate"]

# A literal or quoted identifier, a word, or any other single character.
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_.]*|\s+|.", re.S)
_FUNCTIONS = {"json_each": "ms_json_each", "json_extract": "ms_json_extract"}
_FUNCTIONS["json_type"] = "ms_json_type"
_CONDITION_BEFORE = {"WHERE", "AND", "OR", "ON", "NOT", "WHEN"}
_ORDER_END = {"LIMIT", "OFFSET", ")", ";", "UNION", "EXCEPT", "INTERSECT"}
# After these, a ``+`` can only be unary (not an addition).
_UNARY_AFTER = _CONDITION_BEFORE | {"", "(", ",", "SELECT", "THEN", "ELSE", "BY", "="}


@functools.lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """``sql`` in the SQLite dialect, rewritten for PostgreSQL through psycopg.

    Args:
        sql: one statement with ``?`` placeholders.

    Returns:
        The statement with ``%s`` placeholders (the same number, in the same order).
    """
    tokens = _TOKEN.findall(sql)
    tokens = _insert_or_ignore(tokens)
    tokens = _conflict_tenant(tokens)
    tokens = _scalar_min_max(tokens)
    tokens = _order_nulls(tokens)
    out: list[str] = []
    for i, tok in enumerate(tokens):
        upper = tok.upper()
        if tok == "?":
            out.append("%s")
        elif tok == "%":
            out.append("%%")
        elif tok.startswith("'"):
            out.append(tok.replace("%", "%%"))
        elif upper == "IS" and _next_word(tokens, i) == "?":
            out.append("IS NOT DISTINCT FROM")
        elif upper == "IS" and _next_word(tokens, i) == "NOT" and _next_word(tokens, i, 2) == "?":
            out.append("IS DISTINCT FROM")
            _skip_next_word(tokens, i)
        elif (
            tok in ("1", "0")
            and _prev_word(tokens, i) in _CONDITION_BEFORE
            and (_next_word(tokens, i) in ("", ")", "AND", "OR", "ORDER", "LIMIT", "THEN", "GROUP"))
        ):
            out.append("TRUE" if tok == "1" else "FALSE")
        elif (
            tok == "+" and _prev_word(tokens, i) in _UNARY_AFTER and _is_name(_next_word(tokens, i))
        ):
            out.append("")
        elif upper == "REAL" and _prev_word(tokens, i) == "AS":
            out.append("DOUBLE PRECISION")
        elif tok.lower() in _FUNCTIONS and _next_word(tokens, i) == "(":
            out.append(_FUNCTIONS[tok.lower()])
        else:
            out.append(tok)
    # A bound text compares and sorts like the store's text columns (byte-wise).
    return "".join(out).replace("CAST(%s AS TEXT)", 'CAST(%s AS TEXT) COLLATE "C"')


def _is_name(word: str) -> bool:
    """Whether ``word`` is a column or table name (a word that is not a keyword)."""
    return bool(word) and (word[0].isalpha() or word[0] == "_") and word not in _KEYWORDS


_KEYWORDS = {"NOT", "NULL", "CASE", "EXISTS", "SELECT", "TRUE", "FALSE", "CAST"}


def _words(tokens: list[str], start: int, step: int) -> list[int]:
    """Indexes of the non-space tokens from ``start`` (exclusive) in direction ``step``."""
    out = []
    i = start + step
    while 0 <= i < len(tokens):
        if tokens[i] and not tokens[i].isspace():
            out.append(i)
            if len(out) == 3:
                break
        i += step
    return out


def _next_word(tokens: list[str], i: int, n: int = 1) -> str:
    found = _words(tokens, i, 1)
    return tokens[found[n - 1]].upper() if len(found) >= n else ""


def _prev_word(tokens: list[str], i: int) -> str:
    found = _words(tokens, i, -1)
    return tokens[found[0]].upper() if found else ""


def _skip_next_word(tokens: list[str], i: int) -> None:
    found = _words(tokens, i, 1)
    _drop(tokens, found[0])


def _drop(tokens: list[str], i: int) -> None:
    """Remove token ``i`` and the whitespace before it."""
    tokens[i] = ""
    if i > 0 and tokens[i - 1].isspace():
        tokens[i - 1] = ""


def _insert_or_ignore(tokens: list[str]) -> list[str]:
    words = [t.upper() for t in tokens]
    for i, w in enumerate(words):
        if w == "INSERT" and _next_word(tokens, i) == "OR" and _next_word(tokens, i, 2) == "IGNORE":
            nxt = _words(tokens, i, 1)
            tokens = list(tokens)
            _drop(tokens, nxt[0])
            _drop(tokens, nxt[1])
            return [*tokens, " ON CONFLICT DO NOTHING"]
    return tokens


def _conflict_tenant(tokens: list[str]) -> list[str]:
    """``ON CONFLICT (a, b)`` → ``ON CONFLICT (tenant, a, b)``."""
    out = list(tokens)
    for i, tok in enumerate(tokens):
        if tok.upper() == "CONFLICT" and _prev_word(tokens, i) == "ON":
            nxt = _words(tokens, i, 1)
            if nxt and tokens[nxt[0]] == "(":
                out[nxt[0]] = "(tenant, "
    return out


def _close_paren(tokens: list[str], open_at: int) -> tuple[int, list[int]]:
    """Index of the ``)`` matching ``tokens[open_at] == "("`` and the top-level commas."""
    depth = 0
    commas: list[int] = []
    for j in range(open_at, len(tokens)):
        if tokens[j] == "(":
            depth += 1
        elif tokens[j] == ")":
            depth -= 1
            if depth == 0:
                return j, commas
        elif tokens[j] == "," and depth == 1:
            commas.append(j)
    return len(tokens), commas


def _scalar_min_max(tokens: list[str]) -> list[str]:
    tokens = list(tokens)
    for i, tok in enumerate(tokens):
        if tok.upper() in ("MAX", "MIN"):
            nxt = _words(tokens, i, 1)
            if nxt and tokens[nxt[0]] == "(":
                _, commas = _close_paren(tokens, nxt[0])
                if commas:
                    tokens[i] = "GREATEST" if tok.upper() == "MAX" else "LEAST"
    return tokens


def _order_nulls(tokens: list[str]) -> list[str]:
    """Give each ``ORDER BY`` item SQLite's NULL placement."""
    tokens = list(tokens)
    i = 0
    while i < len(tokens):
        if tokens[i].upper() == "ORDER" and _next_word(tokens, i) == "BY":
            j = _words(tokens, i, 1)[0] + 1
            depth = 0
            last = None  # index of the last token of the current item
            while j < len(tokens):
                tok = tokens[j]
                upper = tok.upper()
                if depth == 0 and (upper in _ORDER_END or tok == ","):
                    if last is not None:
                        tokens[last] = tokens[last] + _nulls(tokens, last)
                    last = None
                    if tok != ",":
                        break
                elif tok == "(":
                    depth += 1
                elif tok == ")":
                    depth -= 1
                if tok != "," and not tok.isspace() and tok:
                    last = j if depth >= 0 else last
                j += 1
            else:
                if last is not None:
                    tokens[last] = tokens[last] + _nulls(tokens, last)
            i = j
        i += 1
    return tokens


def _nulls(tokens: list[str], last: int) -> str:
    upper = tokens[last].upper()
    if upper == "NULLS" or _prev_word(tokens, last) == "NULLS":
        return ""
    return " NULLS LAST" if upper == "DESC" else " NULLS FIRST"

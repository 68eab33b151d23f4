"""The SQLite-to-PostgreSQL statement translation (mnemolayer.store.postgres.translate)."""

from __future__ import annotations

import pytest

from mnemolayer.store.postgres.translate import translate

CASES = [
    ("SELECT a FROM t WHERE b = ? AND c IN (?, ?)", "SELECT a FROM t WHERE b = %s AND c IN (%s, %s)"),
    ("SELECT '?' , '%' FROM t WHERE a LIKE 'x%'", "SELECT '?' , '%%' FROM t WHERE a LIKE 'x%%'"),
    ("INSERT OR IGNORE INTO t (a) VALUES (?)", "INSERT INTO t (a) VALUES (%s) ON CONFLICT DO NOTHING"),
    ("SELECT 1 FROM t WHERE a IS ? AND b IS NOT ?",
     "SELECT 1 FROM t WHERE a IS NOT DISTINCT FROM %s AND b IS DISTINCT FROM %s"),
    ("UPDATE t SET a = MAX(a, ?), b = MIN(CAST(b AS INTEGER), 3)",
     "UPDATE t SET a = GREATEST(a, %s), b = LEAST(CAST(b AS INTEGER), 3)"),
    ("SELECT MAX(a) FROM t", "SELECT MAX(a) FROM t"),
    ("SELECT a FROM t WHERE 1 ORDER BY a", "SELECT a FROM t WHERE TRUE ORDER BY a NULLS FIRST"),
    ("SELECT a FROM t WHERE x = 1 AND 0", "SELECT a FROM t WHERE x = 1 AND FALSE"),
    ("SELECT a FROM t ORDER BY a DESC, COALESCE(b, c), d LIMIT 2",
     "SELECT a FROM t ORDER BY a DESC NULLS LAST, COALESCE(b, c) NULLS FIRST, d NULLS FIRST LIMIT 2"),
    ("SELECT (SELECT b FROM u ORDER BY b LIMIT 1) FROM t",
     "SELECT (SELECT b FROM u ORDER BY b NULLS FIRST LIMIT 1) FROM t"),
    ("SELECT CAST(a AS REAL) FROM t", "SELECT CAST(a AS DOUBLE PRECISION) FROM t"),
    ("SELECT j.value FROM t, json_each(t.ids) j WHERE json_type(m, '$.a') = 'integer'",
     "SELECT j.value FROM t, ms_json_each(t.ids) j WHERE ms_json_type(m, '$.a') = 'integer'"),
    ("SELECT CAST(? AS TEXT)", 'SELECT CAST(%s AS TEXT) COLLATE "C"'),
    ("SELECT \"weird ? name\" FROM t", "SELECT \"weird ? name\" FROM t"),
    ("SELECT a FROM f WHERE f.b = ? AND +f.c IS NOT NULL",
     "SELECT a FROM f WHERE f.b = %s AND f.c IS NOT NULL"),
    ("SELECT a + 1, b+c FROM t WHERE x = a + ?", "SELECT a + 1, b+c FROM t WHERE x = a + %s"),
]  # fmt: skip


@pytest.mark.parametrize(("sqlite", "postgres"), CASES)
def test_translation(sqlite: str, postgres: str) -> None:
    assert translate(sqlite) == postgres


def test_placeholders_keep_their_number_and_order() -> None:
    sql = "SELECT ? FROM t WHERE a = ? AND b IS ? AND c IN (?, ?) AND d = MAX(?, e)"
    assert translate(sql).count("%s") == sql.count("?")

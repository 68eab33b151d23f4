"""The Citus statement audit (tests/citus_audit.py): its rule on statements written for
the purpose, then over contract suite files on PostgreSQL, where every statement the
store sends must be routable to one shard by ``user_id`` (or be a listed exception)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pglast")

import citus_audit
from citus_audit import audit, distributed_tables, numbered

TESTS = Path(__file__).resolve().parents[1]
DIST = frozenset({"memories", "vectors", "memories_fts", "facts", "entities"})

#: Contract files whose statements are audited in `make test`: the request paths (add,
#: search in every mode, get, context), facts, updates, deletes, forgetting and erasure.
AUDITED = [
    "contract/test_api.py",
    "contract/test_context.py",
    "contract/test_semantic.py",
    "contract/test_forget_one_memory.py",
]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM memories WHERE user_id = $1 AND kind = 'semantic'",
        "SELECT id FROM memories WHERE user_id IN ($1, $2)",
        "SELECT id FROM memories WHERE user_id = ANY($1)",
        "SELECT m.id FROM memories m JOIN vectors v ON v.user_id = m.user_id "
        "AND v.memory_rowid = m.rowid WHERE m.user_id = $1",
        "SELECT 1 FROM memories m, vectors v, facts f WHERE v.user_id = m.user_id "
        "AND f.user_id = v.user_id AND f.user_id = CAST($1 AS text)",
        "SELECT rowid FROM memories WHERE user_id = $1 AND EXISTS (SELECT 1 FROM memories t "
        "WHERE t.user_id = memories.user_id AND t.id = memories.consolidated_into)",
        "UPDATE memories SET pinned = 1 WHERE user_id = $1 AND id = $2",
        "DELETE FROM vectors WHERE user_id = $1 AND memory_rowid = $2",
        "INSERT INTO memories_fts (user_id, rowid, terms) VALUES ($1, $2, $3)",
        "WITH m AS (INSERT INTO memories (user_id, id) VALUES ($1, $2) RETURNING user_id, rowid) "
        "INSERT INTO memories_fts (user_id, rowid, terms) SELECT user_id, rowid, $3 FROM m",
        "SELECT value FROM meta WHERE key = $1",
        "SELECT rows, tokens FROM fts_totals WHERE id = 1",
        "SELECT a FROM memories WHERE user_id = $1 UNION ALL SELECT b FROM facts WHERE user_id = $2",
        "COPY (SELECT memory_rowid, chunk, vector FROM vectors WHERE user_id = $1) "
        "TO STDOUT (FORMAT BINARY)",
    ],
)
def test_single_shard_statements_pass(sql: str) -> None:
    assert audit(sql, DIST)[0] == []


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("SELECT id FROM memories WHERE id = $1", "memories: not filtered by user_id"),
        ("SELECT id FROM memories WHERE user_id = $1 OR id = $2", "not filtered by user_id"),
        ("SELECT id FROM memories WHERE user_id LIKE $1", "not filtered by user_id"),
        ("DELETE FROM vectors WHERE memory_rowid IN ($1)", "vectors: not filtered by user_id"),
        ("UPDATE memories SET pinned = 1 WHERE id = $1", "memories: not filtered by user_id"),
        (
            "SELECT 1 FROM facts f JOIN entities e ON e.id = f.subject_id WHERE f.user_id = $1",
            "entities: not filtered by user_id",
        ),
        (
            "SELECT 1 FROM facts f JOIN entities e ON e.id = f.subject_id "
            "WHERE f.user_id = $1 AND e.user_id = $2",
            "joins entities / facts other than on user_id",
        ),
        (
            "SELECT 1 FROM memories WHERE user_id = $1 AND rowid IN "
            "(SELECT rowid FROM memories_fts WHERE tsv @@ $2)",
            "memories_fts: not filtered by user_id",
        ),
        ("SELECT COUNT(*) FROM memories", "memories: not filtered by user_id"),
        ("INSERT INTO memories_fts (rowid, terms) VALUES ($1, $2)", "gives no user_id"),
        ("COPY (SELECT vector FROM vectors) TO STDOUT", "vectors: not filtered by user_id"),
    ],
)
def test_statements_that_fan_out_or_join_across_shards_fail(sql: str, problem: str) -> None:
    problems, _ = audit(sql, DIST)
    assert any(problem in p for p in problems), problems


def test_the_distribution_columns_are_a_parameter(monkeypatch: pytest.MonkeyPatch) -> None:
    """A schema keyed by user and tenant: each column must be pinned and joined on."""
    monkeypatch.setattr(citus_audit, "DISTRIBUTION", ("user_id", "tenant"))
    both = "SELECT 1 FROM memories WHERE tenant = $1 AND user_id = $2"
    assert audit(both, DIST)[0] == []
    assert audit("SELECT 1 FROM memories WHERE user_id = $1", DIST)[0] == [
        "memories: not filtered by tenant"
    ]


def test_the_per_user_tables_come_from_the_schema() -> None:
    tables = distributed_tables()
    assert {"memories", "vectors", "facts", "working_messages", "tombstones"} <= tables
    assert not tables & citus_audit.REFERENCE_TABLES


def test_psycopg_placeholders_become_numbered_ones() -> None:
    assert numbered("SELECT '%s', a %% 2 FROM t WHERE x = %s AND y = %b") == (
        "SELECT '%s', a % 2 FROM t WHERE x = $1 AND y = $2"
    )


def test_the_store_sends_only_single_shard_statements_on_its_request_paths(
    tmp_path: Path, _pg_admin: str | None
) -> None:
    """Contract files on PostgreSQL with the audit on, in a pytest of their own."""
    if _pg_admin is None:
        pytest.skip("no PostgreSQL")
    report = tmp_path / "audit.json"
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    )
    env["PYTEST_XDIST_WORKER"] = "citusaudit"  # a template database of its own
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "citus_audit",
         f"--citus-audit={report}", "-m", "postgres", "--basetemp", str(tmp_path / "run"),
         *AUDITED],
        cwd=TESTS, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert report.exists(), run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(report.read_text("utf-8"))
    failures = [(f["problems"], f["origins"], f["sql"][:300]) for f in result["failures"]]
    assert failures == [], json.dumps(failures, indent=1)
    assert result["unknown_tables"] == []
    assert len(result["statements"]) > 50  # the store's statements were recorded
    audited = {o for s in result["statements"] for o in s["request_paths"]}
    assert any(
        o.startswith("mnemolayer.layers.episodic.read.EpisodicReader.search") for o in audited
    )
    assert run.returncode == 0, run.stdout[-3000:]

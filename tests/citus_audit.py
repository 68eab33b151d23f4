"""Citus readiness of the PostgreSQL store's statements: a statement audit.

On Citus (distributed PostgreSQL) a per-user table is a *distributed table* sharded by its
distribution column (``user_id``), and a statement is routed to one shard when every
distributed table it reads or writes is filtered by that column (``user_id = $1``,
``user_id IN ($1, $2)``, ``user_id = ANY($1)``) and any two of them are joined on it
(co-located tables: ``a.user_id = b.user_id``). A statement that is not fans out to every
shard (a multi-shard query) or, for a join on another column, is refused by Citus.

:func:`audit` parses a statement with PostgreSQL's own parser (pglast, libpg_query) and
names what breaks that rule. It is generic over the distribution columns
(:data:`DISTRIBUTION`: each must be pinned, and joins must be on each), so that a schema
distributed by ``user_id`` and a tenant says so by listing both.

As a pytest plugin (``-p citus_audit --citus-audit=REPORT.json``) it records every
statement mnemolayer's code sends to PostgreSQL during the run (``psycopg.Cursor.execute``,
``executemany`` and ``copy``, after the store's SQLite dialect was translated: what the server
receives), audits each distinct one, writes a JSON report and fails the session when a
statement breaks the rule and is not a listed exception (:data:`MULTI_SHARD`: explicit
admin operations that Citus runs as multi-shard queries, and :data:`BY_ID_ALONE`).
tests/postgres_only/
test_citus_audit.py runs it over contract suite files.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import threading
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: The distribution columns of the per-user tables (Citus shards by one; a schema keyed
#: by user and tenant lists both, and every statement must then pin both).
DISTRIBUTION: tuple[str, ...] = ("user_id",)

#: Store-wide tables: reference tables on Citus (a copy on every node), read and written
#: by any statement. Every other table of the schema must have the distribution columns.
REFERENCE_TABLES = frozenset({"meta", "schema_version", "fts_totals", "tenants", "api_keys"})

#: Statements that may run on every shard, by the mnemolayer function that sends them
#: (``module.qualname``), and why: explicit admin operations over all users (Citus runs
#: them as multi-shard queries), never one of the per-request paths: the audit fails when
#: one of these is sent from inside a request path (:data:`REQUEST_METHODS`).
_ALL = "over every user of the store"
MULTI_SHARD: dict[str, str] = {
    "mnemolayer.store.migrate.upgrade": "a schema migration: once, over every user's rows",
    "mnemolayer.store.records.RecordsSQL.counts": f"store statistics (stats() without a user) {_ALL}",
    "mnemolayer.store.graph.forget.GraphForget.counts": f"graph statistics {_ALL}",
    "mnemolayer.store.pending.PendingSQL.pending_counts": f"enrichment backlog {_ALL}",
    "mnemolayer.store.states.StatesSQL.user_ids": f"the users, for maintenance {_ALL}",
    "mnemolayer.store.states.StatesSQL.known_users": f"the users, for maintenance {_ALL}",
    "mnemolayer.store.sessions.SQLiteSessionStore.list_users": f"the users with windows {_ALL}",
    "mnemolayer.store.records.RecordsSQL.ids": f"every record id (reindex, export) {_ALL}",
    "mnemolayer.store.graph.entities.GraphEntities.export_entities": f"export {_ALL}",
    "mnemolayer.store.history.HistorySQL.history_rows": f"export of the audit history {_ALL}",
    "mnemolayer.store.graph.queries.GraphQueries.stated_times": f"export {_ALL}",
    "mnemolayer.store.graph.queries.GraphQueries.unmined_messages": f"fact extraction {_ALL}",
    "mnemolayer.store.states.StatesSQL.top_rowid": "the store's newest row (change detection)",
    "mnemolayer.store.graph.queries.GraphQueries.export_facts": f"export {_ALL}",
}

#: Not yet single-shard, and not legitimate exceptions: look-ups and writes by a memory,
#: fact or entity id alone (or a rowid alone) whose caller knows the user but does not
#: pass it down. Each needs ``user_id`` threaded through its signature and callers. The
#: audit reports them apart (``known_gaps``) and fails on any statement not listed; the
#: list must only shrink.
KNOWN_GAPS: dict[str, str] = {
    name: "by id alone; needs user_id passed down"
    for name in (
        "mnemolayer.store.graph.facts.GraphFacts.close_fact",  # add (fact conflicts)
        "mnemolayer.store.graph.facts.GraphFacts.reinforce",  # add
        "mnemolayer.store.graph.facts.GraphFacts.set_memory_id",  # add
        "mnemolayer.store.graph.facts.GraphFacts.import_fact",
        "mnemolayer.store.graph.facts.GraphFacts.fact",
        "mnemolayer.store.graph.entities.GraphEntities.import_entity",
        "mnemolayer.store.graph.forget.GraphForget.remove_sources_detailed",
        "mnemolayer.store.graph.queries.GraphQueries.facts_for_memories",
        "mnemolayer.store.graph.traverse.GraphTraverse.neighbors",
        "mnemolayer.store.postgres.store.PostgresStore.add_source",  # add
        "mnemolayer.store.postgres.store.PostgresStore.record_vectors",
        "mnemolayer.store.records.RecordsSQL.set_validity",  # add (superseded facts)
        "mnemolayer.store.records.RecordsSQL.update_record",
        "mnemolayer.store.records.RecordsSQL.existing_ids",
        "mnemolayer.store.records.RecordsSQL.select",
        "mnemolayer.store.records.RecordsSQL.select_rows",
        "mnemolayer.store.states.StatesSQL.set_state",
        "mnemolayer.store.states.StatesSQL.is_active",
        "mnemolayer.store.states.StatesSQL.rowid_holds",
        "mnemolayer.store.states.StatesSQL.absorb",
        "mnemolayer.store.states.StatesSQL.archive_unchanged",
        "mnemolayer.store.states.StatesSQL.mark_merged",
        "mnemolayer.store.states.StatesSQL.mark_consolidated",
        "mnemolayer.store.states.StatesSQL.dangling_targets",
        "mnemolayer.store.history.HistorySQL.history",
        "mnemolayer.store.history.HistorySQL.owners",
        "mnemolayer.store.history.HistorySQL.restored_at",
        "mnemolayer.store.history.HistorySQL.history_contents",
        "mnemolayer.store.history.HistorySQL.delete_memory_history",
        "mnemolayer.store.index.IndexSQL.fact_sentences",
        "mnemolayer.store.index.IndexSQL.replace_index",
        "mnemolayer.store.index.IndexSQL.replace_terms",
        "mnemolayer.store.pending.PendingSQL.claim",
        "mnemolayer.store.pending.PendingSQL.mark_pending",
        "mnemolayer.store.pending.PendingSQL.records_with_revision",
        "mnemolayer.store.pending.PendingSQL.write_vectors",
        "mnemolayer.store.erase.EraseSQL._count",  # the deletion receipt's checks
        "mnemolayer.store.erase.EraseSQL.rowids_of",
        "mnemolayer.store.erase.EraseSQL.delete_where",  # its callers' condition: ids alone
        "mnemolayer.store.postgres.keyword.TsvectorIndex.unique_terms",
        "mnemolayer.store.postgres.keyword.TsvectorIndex.vocab_count.<locals>.<genexpr>",
    )
}

#: Look-ups by a memory id alone, which the API allows (``Memory.get(id)`` without
#: ``user_id``): no shard is named, so Citus asks every shard. Given the user (as the REST
#: server and the CLI always give it) the same call filters by it and is single-shard,
#: which the audit checks as a statement of its own. Allowed on the request paths.
BY_ID_ALONE: dict[str, str] = {
    "mnemolayer.store.records.RecordsSQL.get": "Memory.get(memory_id) without user_id",
}

#: The facade methods whose statements must be single-shard, whatever sends them.
REQUEST_METHODS = ("add", "search", "get", "context")


def request_paths() -> frozenset[str]:
    """The service functions behind :data:`REQUEST_METHODS` (``module.qualname``)."""
    from mnemolayer import Memory

    fns = [inspect.unwrap(getattr(Memory, name)) for name in REQUEST_METHODS]
    return frozenset(f"{fn.__module__}.{fn.__qualname__}" for fn in fns)


_CATALOG_SCHEMAS = ("pg_catalog", "information_schema")


def distributed_tables() -> frozenset[str]:
    """The tables of the PostgreSQL schema (its migrations) that have every distribution
    column: Citus distributed tables, co-located."""
    from pglast import parse_sql

    from mnemolayer.store.postgres.migrations import MIGRATIONS

    out: set[str] = set()
    for step in MIGRATIONS:
        for sql in step:
            for raw in parse_sql(sql):
                stmt = raw.stmt
                if type(stmt).__name__ != "CreateStmt":
                    continue
                cols = {e.colname for e in stmt.tableElts or () if type(e).__name__ == "ColumnDef"}
                if set(DISTRIBUTION) <= cols:
                    out.add(stmt.relation.relname)
    return frozenset(out)


# -- the audit of one statement -----------------------------------------------------------


@dataclass
class _Scope:
    """One query level: its tables (alias -> table name), conjuncts, enclosing scopes."""

    outer: _Scope | None
    ctes: frozenset[str]
    tables: dict[str, str] = field(default_factory=dict)
    conjuncts: list[Any] = field(default_factory=list)

    def resolve(self, ref: Any, column: str) -> tuple[_Scope, str] | None:
        """The scope and alias whose distribution ``column`` a ColumnRef names."""
        names = [getattr(f, "sval", None) for f in ref.fields]
        if not names or names[-1] != column:
            return None
        qualifier = names[-2] if len(names) >= 2 else None
        scope: _Scope | None = self
        while scope is not None:
            if qualifier is not None and qualifier in scope.tables:
                return scope, qualifier
            if qualifier is None and len(scope.tables) == 1:
                return scope, next(iter(scope.tables))
            if qualifier is None and scope.tables:
                return None  # ambiguous: PostgreSQL would refuse it too
            scope = scope.outer
        return None


def _kind(node: Any) -> str:
    return type(node).__name__


def _children(node: Any) -> Iterator[Any]:
    """Every AST node directly below ``node``."""
    if isinstance(node, tuple | list):
        for item in node:
            yield from _children(item) if isinstance(item, tuple | list) else [item]
        return
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name, None)
        if isinstance(value, tuple | list):
            yield from (v for v in _children(value) if hasattr(v, "__slots__"))
        elif hasattr(value, "__slots__"):
            yield value


def _conjuncts(expr: Any) -> list[Any]:
    if expr is None:
        return []
    if _kind(expr) == "BoolExpr" and expr.boolop.name == "AND_EXPR":
        return [c for arg in expr.args for c in _conjuncts(arg)]
    return [expr]


def _is_value(node: Any) -> bool:
    """A bound parameter or constant (possibly cast): a value known before routing."""
    while _kind(node) == "TypeCast":
        node = node.arg
    return _kind(node) in ("ParamRef", "A_Const")


@dataclass
class _Audit:
    distributed: frozenset[str]
    problems: list[str] = field(default_factory=list)
    tables: set[str] = field(default_factory=set)

    def statement(self, stmt: Any, outer: _Scope | None = None, ctes: frozenset[str] = frozenset()):
        kind = _kind(stmt)
        with_clause = getattr(stmt, "withClause", None)
        if with_clause is not None:
            ctes = ctes | {c.ctename for c in with_clause.ctes}
            for cte in with_clause.ctes:
                self.statement(cte.ctequery, outer, ctes)
        if kind == "SelectStmt":
            if stmt.larg is not None:  # UNION / EXCEPT / INTERSECT: each arm apart
                self.statement(stmt.larg, outer, ctes)
                self.statement(stmt.rarg, outer, ctes)
                return
            scope = _Scope(outer, ctes)
            for item in stmt.fromClause or ():
                self.from_item(item, scope)
            scope.conjuncts += _conjuncts(stmt.whereClause)
            self.check(scope, [stmt.targetList, stmt.whereClause, stmt.havingClause,
                               stmt.sortClause, stmt.valuesLists])  # fmt: skip
        elif kind in ("UpdateStmt", "DeleteStmt"):
            scope = _Scope(outer, ctes)
            self.from_item(stmt.relation, scope)
            for item in getattr(stmt, "fromClause", None) or getattr(stmt, "usingClause", ()) or ():
                self.from_item(item, scope)
            scope.conjuncts += _conjuncts(stmt.whereClause)
            self.check(scope, [getattr(stmt, "targetList", None), stmt.whereClause])
        elif kind == "InsertStmt":
            self.insert(stmt, outer, ctes)
        elif kind == "CopyStmt" and stmt.query is not None:  # COPY (SELECT ...) TO STDOUT
            self.statement(stmt.query, outer, ctes)

    def insert(self, stmt: Any, outer: _Scope | None, ctes: frozenset[str]) -> None:
        table = stmt.relation.relname
        self.tables.add(table)
        if table in self.distributed and stmt.cols:
            named = {c.name for c in stmt.cols}
            for column in DISTRIBUTION:
                if column not in named:
                    self.problems.append(f"INSERT INTO {table} gives no {column}")
        if stmt.selectStmt is not None:
            self.statement(stmt.selectStmt, outer, ctes)
        conflict = stmt.onConflictClause
        if conflict is not None and conflict.whereClause is not None:
            self.subqueries(conflict.whereClause, _Scope(outer, ctes, {table: table}))

    def from_item(self, item: Any, scope: _Scope) -> None:
        kind = _kind(item)
        if kind == "RangeVar":
            if item.relname in scope.ctes and not item.schemaname:
                return  # a CTE of this statement (audited as a statement of its own)
            if item.schemaname in _CATALOG_SCHEMAS or item.relname.startswith("pg_"):
                return
            alias = item.alias.aliasname if item.alias is not None else item.relname
            scope.tables[alias] = item.relname
            self.tables.add(item.relname)
        elif kind == "JoinExpr":
            self.from_item(item.larg, scope)
            self.from_item(item.rarg, scope)
            scope.conjuncts += _conjuncts(item.quals)
        elif kind == "RangeSubselect":
            self.statement(item.subquery, scope if item.lateral else scope.outer, scope.ctes)
        elif kind == "RangeFunction":
            self.subqueries(item.functions, scope)

    def subqueries(self, node: Any, scope: _Scope) -> None:
        """Audit every sub-select under ``node`` as a query level inside ``scope``."""
        if node is None:
            return
        if _kind(node) == "SubLink":
            self.statement(node.subselect, scope, scope.ctes)
            if node.testexpr is not None:
                self.subqueries(node.testexpr, scope)
            return
        for child in _children(node):
            self.subqueries(child, scope)

    def check(self, scope: _Scope, exprs: Iterable[Any]) -> None:
        for expr in exprs:
            self.subqueries(expr, scope)
        for item in scope.conjuncts:  # sub-selects in join conditions
            self.subqueries(item, scope)
        dist = {a: t for a, t in scope.tables.items() if t in self.distributed}
        if not dist:
            return
        for column in DISTRIBUTION:
            self.pins(scope, dist, column)

    def pins(self, scope: _Scope, dist: dict[str, str], column: str) -> None:
        """Union-find of the aliases whose ``column`` the conjuncts equate; each class
        must be pinned to values (or an enclosing query level), and there must be one."""
        parent = {a: a for a in dist}

        def find(a: str) -> str:
            while parent[a] != a:
                a = parent[a]
            return a

        pinned: set[str] = set()
        for expr in scope.conjuncts:
            if _kind(expr) != "A_Expr":
                continue
            op = expr.kind.name
            name = expr.name[0].sval if expr.name else ""
            left = self.local(scope, expr.lexpr, column, dist)
            if op == "AEXPR_IN" and name == "=" and left is not None:
                if all(_is_value(v) for v in expr.rexpr):
                    pinned.add(left)
                continue
            if name != "=" or op not in ("AEXPR_OP", "AEXPR_OP_ANY"):
                continue
            right = self.local(scope, expr.rexpr, column, dist) if op == "AEXPR_OP" else None
            for side, other in ((left, expr.rexpr), (right, expr.lexpr)):
                if side is None:
                    continue
                if _is_value(other) or self.outer_ref(scope, other, column):
                    pinned.add(side)
            if left is not None and right is not None:
                parent[find(left)] = find(right)
        classes: dict[str, list[str]] = {}
        for alias in dist:
            classes.setdefault(find(alias), []).append(alias)
        roots_pinned = {find(a) for a in pinned}
        for root, members in classes.items():
            if root not in roots_pinned:
                names = ", ".join(sorted({dist[a] for a in members}))
                self.problems.append(f"{names}: not filtered by {column}")
        if len(classes) > 1:
            groups = " / ".join(
                sorted(", ".join(sorted({dist[a] for a in m})) for m in classes.values())
            )
            self.problems.append(f"joins {groups} other than on {column}")

    @staticmethod
    def local(scope: _Scope, node: Any, column: str, dist: dict[str, str]) -> str | None:
        if _kind(node) != "ColumnRef":
            return None
        found = scope.resolve(node, column)
        if found is None or found[0] is not scope or found[1] not in dist:
            return None
        return found[1]

    def outer_ref(self, scope: _Scope, node: Any, column: str) -> bool:
        """``node`` names the distribution column of a distributed table of an enclosing
        query level (a correlated sub-select: Citus pushes it down with its outer row)."""
        if _kind(node) != "ColumnRef" or scope.outer is None:
            return False
        found = scope.outer.resolve(node, column)
        return found is not None and found[0].tables[found[1]] in self.distributed


def audit(sql: str, distributed: frozenset[str]) -> tuple[list[str], set[str]]:
    """What keeps ``sql`` (PostgreSQL, ``$n`` parameters) from being routed to one shard:
    ``(problems, tables it names)``; no problems when it is single-shard (or names no
    distributed table). DDL and utility statements are not audited.

    Raises:
        pglast.parser.ParseError: ``sql`` is not PostgreSQL.
    """
    from pglast import parse_sql

    out = _Audit(distributed)
    for raw in parse_sql(sql):
        out.statement(raw.stmt)
    return out.problems, out.tables


_PLACEHOLDER = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|%%|%[sbt]|%\(\w+\)[sbt]", re.S)


def numbered(sql: str) -> str:
    """A psycopg statement (``%s``/``%b`` placeholders) with PostgreSQL's ``$n`` ones."""
    count = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal count
        tok = m.group(0)
        if tok.startswith(("'", '"')):
            return tok
        if tok == "%%":
            return "%"
        count += 1
        return f"${count}"

    return _PLACEHOLDER.sub(sub, sql)


# -- the plugin: record, audit, report -----------------------------------------------------

#: Frames that pass a statement on (the engine, transactions, row helpers): the origin
#: of a statement is the first frame below them.
_SKIP_FRAMES = ("mnemolayer/store/postgres/engine.py", "mnemolayer/store/txn.py")
_SKIP_FUNCTIONS = frozenset({"_rows", "read", "execute", "executemany", "_select_facts"})


@dataclass
class _Seen:
    count: int = 0
    origins: Counter[str] = field(default_factory=Counter)
    request_origins: Counter[str] = field(default_factory=Counter)


class Recorder:
    """Every distinct statement mnemolayer sends, with the functions that sent it."""

    def __init__(self) -> None:
        self.seen: dict[str, _Seen] = {}
        self.requests = request_paths()
        self._lock = threading.Lock()

    def record(self, query: Any) -> None:
        sql = query if isinstance(query, str) else getattr(query, "as_string", lambda: None)()
        if not isinstance(sql, str):
            return
        origin, request = None, None
        for frame, _ in traceback.walk_stack(sys._getframe(2)):
            path = frame.f_code.co_filename.replace("\\", "/")
            if "/mnemolayer/" not in path or "/tests/" in path:
                continue
            name = f"{frame.f_globals.get('__name__')}.{frame.f_code.co_qualname}"
            if (
                origin is None
                and not path.endswith(_SKIP_FRAMES)
                and frame.f_code.co_name not in _SKIP_FUNCTIONS
            ):
                origin = name
            if name in self.requests:
                request = name
        if origin is None:
            return  # a test's own SQL
        with self._lock:
            seen = self.seen.setdefault(sql, _Seen())
            seen.count += 1
            seen.origins[origin] += 1
            if request is not None:
                seen.request_origins[f"{request} -> {origin}"] += 1

    def install(self, mp: pytest.MonkeyPatch) -> None:
        import psycopg

        recorder = self
        execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

        def rec_execute(cur: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.record(query)
            return execute(cur, query, *args, **kwargs)

        def rec_executemany(cur: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.record(query)
            return executemany(cur, query, *args, **kwargs)

        copy = psycopg.Cursor.copy

        def rec_copy(cur: Any, statement: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.record(statement)
            return copy(cur, statement, *args, **kwargs)

        mp.setattr(psycopg.Cursor, "execute", rec_execute)
        mp.setattr(psycopg.Cursor, "executemany", rec_executemany)
        mp.setattr(psycopg.Cursor, "copy", rec_copy)

    def report(self) -> dict[str, Any]:
        """The audit of every recorded statement: ``{"statements": [...], "failures":
        [...], "known_gaps": [...], "unknown_tables": [...]}``; a failure is a statement
        with problems that is no listed exception or gap, or an admin exception sent from
        a request path; ``known_gaps`` are the statements of :data:`KNOWN_GAPS`."""
        distributed = distributed_tables()
        statements, failures, gaps, unknown = [], [], [], set()
        for sql, seen in sorted(self.seen.items()):
            problems, tables = audit(numbered(sql), distributed)
            unknown |= tables - distributed - REFERENCE_TABLES
            reasons = {**MULTI_SHARD, **BY_ID_ALONE, **KNOWN_GAPS}
            listed = set(seen.origins) <= set(reasons)
            gap = listed and bool(set(seen.origins) & set(KNOWN_GAPS))
            admin = bool(set(seen.origins) & set(MULTI_SHARD))
            entry = {
                "sql": numbered(sql),
                "count": seen.count,
                "origins": dict(seen.origins),
                "request_paths": dict(seen.request_origins),
                "problems": problems,
                "exception": sorted({reasons[o] for o in seen.origins if o in reasons})
                if problems
                else [],
            }
            statements.append(entry)
            if problems and (not listed or (admin and seen.request_origins)):
                failures.append(entry)
            elif problems and gap:
                gaps.append(entry)
        return {
            "distribution": list(DISTRIBUTION),
            "distributed_tables": sorted(distributed),
            "reference_tables": sorted(REFERENCE_TABLES),
            "statements": statements,
            "failures": failures,
            "known_gaps": gaps,
            "unknown_tables": sorted(unknown),
        }


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--citus-audit",
        metavar="REPORT",
        default=None,
        help="record every statement sent to PostgreSQL, audit it for Citus (routing by "
        "the distribution column) and write a JSON report; the run fails on a violation",
    )


_STATE: dict[str, Any] = {}


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("citus_audit"):
        return
    recorder, mp = Recorder(), pytest.MonkeyPatch()
    recorder.install(mp)
    _STATE.update(recorder=recorder, patch=mp)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    recorder = _STATE.pop("recorder", None)
    if recorder is None:
        return
    _STATE.pop("patch").undo()
    report = recorder.report()
    path = Path(session.config.getoption("citus_audit"))
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False), "utf-8")
    if report["failures"] or report["unknown_tables"]:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

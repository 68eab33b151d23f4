"""Sharding a PostgreSQL store by user with PostgreSQL's own tools: hash partitions of
every per-user table by ``user_id`` on a coordinator, one of them local and the others
``postgres_fdw`` foreign tables on shard servers.

:func:`shard_by_user` builds that layout on an empty store. Every shard holds a complete
mnemolayer schema (made by opening it as a store) and the coordinator's foreign partitions
name its tables, so a shard keeps its own primary keys, unique indexes, foreign keys and
GIN index. The coordinator is where the store is opened (``Memory(coordinator_url)``); it
routes each row by the hash of its ``user_id`` (``FOR VALUES WITH (MODULUS n, REMAINDER
r)``), the same for every table, so a user's records, keyword rows, vectors, graph and
windows are on one node.

What the layout changes, and why (PostgreSQL's rules for partitioned tables and foreign
tables, see docs/postgres.md):

* the partitioned parents have no primary key, unique index or foreign key: PostgreSQL
  refuses a unique index on a partitioned table with foreign partitions. The local
  partition gets them (keys, unique indexes, and foreign keys to its co-located
  partitions), the shards have their own;
* ``rowid`` stays an identity column of the parent: one sequence on the coordinator
  numbers the rows of every node, as the store expects (rowids unique store-wide);
* plain indexes are made on the parent, so the local partition has them (PostgreSQL
  skips foreign partitions); the shards have the schema's own;
* triggers are made on the parent, so the coordinator's ``fts_totals`` counts the keyword
  rows of every node (a foreign partition fires row triggers on the coordinator);
* store-wide tables (``meta``, ``schema_version``, ``fts_totals``) stay on the coordinator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mnemolayer.errors import StoreError, ValidationError
from mnemolayer.store.postgres.url import is_postgres_url, redact_url, split_options

__all__ = ["ShardLayout", "shard_by_user"]

#: The distribution column: every per-user table has it, leading every key.
DISTRIBUTION_COLUMN = "user_id"
_SERVER = "mnemolayer_shard_{}"


@dataclass(frozen=True)
class ShardLayout:
    """What :func:`shard_by_user` built.

    Attributes:
        tables: the per-user tables, now partitioned by ``user_id``, sorted.
        partitions: ``{partition name: node}`` where node is ``"local"`` or the shard's
            redacted URL; partition ``{table}_p{r}`` holds the users whose hash has
            remainder ``r`` modulo :attr:`modulus`.
        modulus: the number of partitions of each table.
    """

    tables: tuple[str, ...]
    partitions: dict[str, str]
    modulus: int


def shard_by_user(
    coordinator_url: str, shards: Sequence[str], *, local: bool = True
) -> ShardLayout:
    """Partition every per-user table of the store at ``coordinator_url`` by the hash of
    ``user_id``: one partition on the coordinator itself (``local``) and one
    ``postgres_fdw`` foreign partition per shard database.

    Each database must exist and be reachable from the coordinator's server with the
    login in its URL (host, port, user and password are given to ``postgres_fdw``); the
    coordinator's store and the shards' are made when missing, and must hold no records.
    The shards' tables are taken from their ``public`` schema.

    Args:
        coordinator_url: ``postgresql://…``, the database applications open.
        shards: ``postgresql://…`` of each shard database, in partition order.
        local: keep partition 0 on the coordinator (``False``: every partition remote).

    Returns:
        The :class:`ShardLayout`.

    Raises:
        ValidationError: a URL is not a PostgreSQL URL (field ``db``/``shards``), there
            are no partitions, or a shard is named twice.
        StoreError: a server cannot be reached, ``postgres_fdw`` is missing, the
            coordinator is already sharded, or a store holds records.
    """
    if not is_postgres_url(coordinator_url):
        raise ValidationError("db", "the coordinator must be a postgresql:// URL")
    for url in shards:
        if not is_postgres_url(url):
            raise ValidationError("shards", f"not a postgresql:// URL: {redact_url(url)}")
    if len(set(shards)) != len(shards) or coordinator_url in shards:
        raise ValidationError("shards", "each shard must be a database of its own")
    if len(shards) + int(local) < 1:
        raise ValidationError("shards", "give at least one shard, or keep the local partition")
    import psycopg

    from mnemolayer.store.postgres.store import PostgresStore

    for url in (*shards, coordinator_url):
        store = PostgresStore(url)
        try:
            if store.read("SELECT EXISTS (SELECT 1 FROM memories)")[0][0]:
                raise StoreError(f"{store.path} holds records: shard an empty store")
        finally:
            store.close()
    conninfo, _ = split_options(coordinator_url)
    try:
        for url in shards:
            with psycopg.connect(split_options(url)[0], autocommit=True) as conn:
                _drop_triggers(conn)
        with psycopg.connect(conninfo, autocommit=True) as conn, conn.transaction():
            return _build(conn, [split_options(u)[0] for u in shards], local)
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot shard {redact_url(coordinator_url)}: {' '.join(str(exc).split())}"
        ) from exc


def _build(conn: Any, shards: list[str], local: bool) -> ShardLayout:
    from mnemolayer.store.postgres.database import WRITER_LOCK as _WRITER_LOCK

    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITER_LOCK,))
    if conn.execute("SELECT 1 FROM pg_partitioned_table LIMIT 1").fetchone() is not None:
        raise StoreError("the coordinator is sharded already")
    conn.execute("CREATE EXTENSION IF NOT EXISTS postgres_fdw")
    for i, url in enumerate(shards):
        _foreign_server(conn, _SERVER.format(i), url)
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = %s "
            "AND table_schema = current_schema() ORDER BY table_name",
            (DISTRIBUTION_COLUMN,),
        ).fetchall()
    ]
    defs = {t: _definitions(conn, t) for t in tables}
    conn.execute("DROP TABLE " + ", ".join(_ident(t) for t in tables) + " CASCADE")
    modulus = len(shards) + int(local)
    nodes: dict[str, str] = {}
    for table in tables:
        conn.execute(defs[table]["create"])
        for r in range(modulus):
            part = f"{table}_p{r}"
            bounds = f"FOR VALUES WITH (MODULUS {modulus}, REMAINDER {r})"
            if local and r == 0:
                conn.execute(f"CREATE TABLE {_ident(part)} PARTITION OF {_ident(table)} {bounds}")
                nodes[part] = "local"
                continue
            shard = r - int(local)
            conn.execute(
                f"CREATE FOREIGN TABLE {_ident(part)} PARTITION OF {_ident(table)} {bounds} "
                f"SERVER {_SERVER.format(shard)} OPTIONS (schema_name 'public', "
                f"table_name {_literal(table)})"
            )
            nodes[part] = redact_url(shards[shard])
    for table in tables:  # after every table: foreign keys name their co-located partition
        for sql in defs[table]["indexes"]:
            conn.execute(sql)
        for sql in defs[table]["triggers"]:
            conn.execute(sql)
        if local:
            for sql in defs[table]["local"]:
                conn.execute(sql)
    return ShardLayout(tuple(tables), nodes, modulus)


def _drop_triggers(conn: Any) -> None:
    """Drop a shard's triggers on its per-user tables: the coordinator's fire for the rows
    of its foreign partitions (a shard's would count its rows twice, and fail: a
    ``postgres_fdw`` session's ``search_path`` is ``pg_catalog`` alone, where the trigger
    functions do not find the tables they name)."""
    for table, trigger in conn.execute(
        "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = %s "
        "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace",
        (DISTRIBUTION_COLUMN,),
    ).fetchall():
        conn.execute(f"DROP TRIGGER {_ident(trigger)} ON {_ident(table)}")


def _definitions(conn: Any, table: str) -> dict[str, Any]:
    """What the sharded layout remakes of ``table``: its columns (as a partitioned
    table), plain indexes and triggers for the parent, keys and unique indexes for the
    local partition 0."""
    regclass = conn.execute("SELECT %s::regclass::oid", (table,)).fetchone()[0]
    columns = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
        "pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.attgenerated, "
        "CASE WHEN a.attcollation <> t.typcollation THEN c.collname END "
        "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
        "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
        "LEFT JOIN pg_collation c ON c.oid = a.attcollation "
        "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (regclass,),
    ).fetchall()
    cols = []
    for name, type_, notnull, default, identity, generated, collation in columns:
        col = f"{_ident(name)} {type_}"
        if collation:
            col += f' COLLATE "{collation}"'
        if identity:
            col += f" GENERATED {'ALWAYS' if identity == 'a' else 'BY DEFAULT'} AS IDENTITY"
        elif generated:
            col += f" GENERATED ALWAYS AS ({default}) STORED"
        elif default is not None:
            col += f" DEFAULT {default}"
        if notnull:
            col += " NOT NULL"
        cols.append(col)
    create = (
        f"CREATE TABLE {_ident(table)} ({', '.join(cols)}) "
        f"PARTITION BY HASH ({DISTRIBUTION_COLUMN})"
    )
    part = _ident(f"{table}_p0")
    local = [
        f"ALTER TABLE {part} ADD CONSTRAINT {_ident(f'{name}_p0')} "
        + re.sub(r"REFERENCES (\w+)\(", r"REFERENCES \1_p0(", str(definition))
        for name, definition in conn.execute(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conrelid = %s AND contype IN ('p', 'u', 'f') ORDER BY contype DESC, conname",
            (regclass,),
        ).fetchall()
    ]
    indexes = []
    for name, sql, unique in conn.execute(
        "SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisunique FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = %s AND NOT EXISTS "
        "(SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid) ORDER BY c.relname",
        (regclass,),
    ).fetchall():
        if unique:  # not on the parent (foreign partitions): on partition 0
            local.append(_on(sql, table, f"{table}_p0", name, f"{name}_p0"))
        else:
            indexes.append(sql)
    triggers = [
        str(r[0])
        for r in conn.execute(
            "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = %s AND NOT tgisinternal",
            (regclass,),
        ).fetchall()
    ]
    return {"create": create, "local": local, "indexes": indexes, "triggers": triggers}


def _on(sql: str, table: str, target: str, name: str, new_name: str) -> str:
    """An index definition moved from ``table`` to ``target`` under ``new_name``."""
    sql = sql.replace(f"INDEX {name} ON", f"INDEX {_ident(new_name)} ON", 1)
    return re.sub(rf"ON (ONLY )?(\w+\.)?{re.escape(table)} ", rf"ON \2{target} ", sql, count=1)


def _foreign_server(conn: Any, name: str, url: str) -> None:
    """A ``postgres_fdw`` server for the database at libpq ``url`` and a user mapping of
    the current user with the URL's login."""
    from psycopg.conninfo import conninfo_to_dict

    info = {str(k): str(v) for k, v in conninfo_to_dict(url).items() if v is not None}
    server: dict[str, str] = {k: info[k] for k in ("host", "port", "dbname") if k in info}
    server["extensions"] = "vector"  # pgvector's operators may run on the shard
    login = {k: info[k] for k in ("user", "password") if k in info}
    conn.execute(
        f"CREATE SERVER {name} FOREIGN DATA WRAPPER postgres_fdw OPTIONS ("
        + ", ".join(f"{k} {_literal(v)}" for k, v in server.items())
        + ")"
    )
    conn.execute(
        f"CREATE USER MAPPING FOR CURRENT_USER SERVER {name}"
        + (
            " OPTIONS (" + ", ".join(f"{k} {_literal(v)}" for k, v in login.items()) + ")"
            if login
            else ""
        )
    )


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"

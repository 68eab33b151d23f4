"""A store sharded by user over three PostgreSQL servers with PostgreSQL's own tools
(:func:`mnemolayer.store.postgres.sharding.shard_by_user`): every per-user table hash
partitioned by ``user_id`` on the coordinator (the test server), one partition local and
two ``postgres_fdw`` foreign partitions on two more embedded servers.

The same conversation is written to the sharded store and to a plain one; the reads and
writes of the contract suite (add, search by keyword, by vector and hybrid, get, update,
delete, facts, history, context, deletion of a user) must give the same answers on both,
and every user's rows must be on one node, the one PostgreSQL's hash of ``user_id`` names.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import psycopg
import pytest

from conftest import _new_pg_database, _pg_database_url, _require_pg
from mnemolayer import Memory
from mnemolayer.errors import ValidationError
from mnemolayer.store.postgres.sharding import ShardLayout, shard_by_user
from mnemolayer.testing import FakeClock

#: Users enough that each of the three partitions gets some (checked below).
USERS = [f"user-{i:02d}" for i in range(12)]
MESSAGES = [
    "I'm {u}. I moved to Porto last spring and I'm allergic to peanuts.",
    "My sister Maria lives in Rome and I visit her in June.",
    "I bought a red bike for the commute.",
    "I like green tea in the morning.",
]
#: Every per-user table the schema has (a new one must be sharded too).
TABLES = (
    "entities", "entity_aliases", "fact_sources", "facts", "history", "memories",
    "memories_fts", "tombstones", "user_generation", "vectors", "working_messages",
    "working_sessions",
)  # fmt: skip


def _new_database(server_url: str, name: str) -> str:
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return _pg_database_url(server_url, name)


@dataclasses.dataclass
class Cluster:
    coordinator: str
    shards: list[str]
    layout: ShardLayout


@pytest.fixture(scope="module")
def cluster(
    pg_shard_servers: list[str], _pg_admin: str | None, request: pytest.FixtureRequest
) -> Cluster:
    coordinator = _new_pg_database(_require_pg(_pg_admin), request)
    shards = [_new_database(url, "mnemolayer_shard") for url in pg_shard_servers]
    return Cluster(coordinator, shards, shard_by_user(coordinator, shards))


def _write(mem: Memory) -> dict[str, list[str]]:
    """The same writes on either store; the ids of each user's messages."""
    ids: dict[str, list[str]] = {}
    for u in USERS:
        added = mem.add([{"role": "user", "content": m.format(u=u)} for m in MESSAGES], user_id=u)
        ids[u] = [r.id for r in added]
        mem.working(user_id=u, session_id="s1").add("user", f"hello from {u}")
    return ids


def _answers(mem: Memory, ids: dict[str, list[str]]) -> dict[str, Any]:
    """What the contract suite's read paths give for one user, and after an update and
    a delete, with the store's random ids replaced by their message's place."""
    u = USERS[3]
    place = {mid: (user, i) for user, mids in ids.items() for i, mid in enumerate(mids)}

    def hits(mode: str) -> list[tuple[str, float]]:
        found = mem.search("where does the user live? peanuts", user_id=u, mode=mode, limit=5)
        return [(h.memory.content, round(h.score, 6)) for h in found]

    out: dict[str, Any] = {m: hits(m) for m in ("keyword", "vector", "hybrid")}
    out["get"] = mem.get(ids[u][2], user_id=u).content
    mem.update(ids[u][2], content="I bought a blue bike for the commute.", user_id=u)
    mem.delete(ids[u][3], user_id=u)
    out["after"] = hits("hybrid")
    out["history"] = [e.event for e in mem.history(ids[u][2], user_id=u)]
    out["facts"] = sorted((f.subject, f.predicate, f.object) for f in mem.facts(user_id=u))
    out["context"] = mem.context("plan a dinner", user_id=u, budget_tokens=300).text
    out["places"] = sorted(place.get(r.id, ("new", -1)) for r in mem.list(user_id=u).items)
    return out


@pytest.fixture(scope="module")
def written(
    cluster: Cluster, _pg_admin: str | None, request: pytest.FixtureRequest
) -> dict[str, Any]:
    plain = _new_pg_database(_require_pg(_pg_admin), request)
    out: dict[str, Any] = {}
    for name, url in (("sharded", cluster.coordinator), ("plain", plain)):
        mem = Memory(url, embedder="hashing", clock=FakeClock(), extractor="rules")
        try:
            ids = _write(mem)
            out[name] = {"answers": _answers(mem, ids)}
        finally:
            mem.close()
    return out


def _nodes(cluster: Cluster) -> list[tuple[str, str]]:
    """``(URL, table name pattern)`` of each node: the local partition, then the shards."""
    return [(cluster.coordinator, "{}_p0"), *((url, "{}") for url in cluster.shards)]


def _users_by_table(url: str, pattern: str) -> dict[str, set[str]]:
    with psycopg.connect(url) as conn:
        return {
            t: {r[0] for r in conn.execute(f"SELECT DISTINCT user_id FROM {pattern.format(t)}")}
            for t in TABLES
        }


def test_every_per_user_table_has_a_local_and_two_foreign_partitions(cluster: Cluster) -> None:
    assert cluster.layout.tables == TABLES
    assert cluster.layout.modulus == 3
    for table in TABLES:
        nodes = [cluster.layout.partitions[f"{table}_p{r}"] for r in range(3)]
        assert nodes[0] == "local"
        assert all("mnemolayer_shard" in n for n in nodes[1:])
    with psycopg.connect(cluster.coordinator) as conn:
        foreign = {r[0] for r in conn.execute("SELECT relname FROM pg_class WHERE relkind = 'f'")}
    assert foreign == {f"{t}_p{r}" for t in TABLES for r in (1, 2)}


def test_each_users_rows_are_on_the_node_of_its_hash(cluster: Cluster, written: Any) -> None:
    seen: dict[str, int] = {}
    for node, (url, pattern) in enumerate(_nodes(cluster)):
        tables = _users_by_table(url, pattern)
        on_node = tables["memories"]
        assert on_node, f"node {node} got no user"
        for table in ("memories_fts", "vectors", "history", "facts", "entities",
                      "user_generation", "working_sessions", "working_messages"):  # fmt: skip
            assert tables[table] == on_node, (node, table)
        for u in on_node:
            assert u not in seen, f"{u} on nodes {seen[u]} and {node}"
            seen[u] = node
    assert sorted(seen) == USERS
    with psycopg.connect(cluster.coordinator) as conn:  # PostgreSQL's own hash routing
        for u, node in seen.items():
            assert conn.execute(
                "SELECT satisfies_hash_partition('memories'::regclass, 3, %s, %s::text)",
                (node, u),
            ).fetchone() == (True,)


def test_reads_and_writes_answer_as_on_an_unsharded_store(written: Any) -> None:
    sharded, plain = written["sharded"]["answers"], written["plain"]["answers"]
    assert sharded["keyword"] and sharded["vector"] and sharded["facts"]
    assert sharded["history"] == ["ADD", "UPDATE"]
    assert sharded == plain


def test_deleting_a_user_erases_its_rows_on_its_shard(cluster: Cluster, written: Any) -> None:
    remote = _users_by_table(cluster.shards[0], "{}")["memories"]
    victim = sorted(remote)[0]
    mem = Memory(cluster.coordinator, embedder="hashing", clock=FakeClock())
    try:
        receipt = mem.delete_all(user_id=victim)
    finally:
        mem.close()
    assert receipt.verified
    left = _users_by_table(cluster.shards[0], "{}")
    assert all(victim not in users for users in left.values())
    assert left["memories"] == remote - {victim}


def test_sharding_refuses_bad_input_and_a_store_with_records(
    cluster: Cluster, written: Any
) -> None:
    with pytest.raises(ValidationError, match="shards"):
        shard_by_user(cluster.coordinator, ["sqlite:///x.db"])
    with pytest.raises(ValidationError, match="own"):
        shard_by_user(cluster.coordinator, [cluster.shards[0], cluster.shards[0]])
    from mnemolayer.errors import StoreError

    with pytest.raises(StoreError, match="holds records"):
        shard_by_user(cluster.coordinator, cluster.shards)

"""Three ``mnemolayer serve --database`` replicas on one PostgreSQL database and one
Redis, behind a client that spreads requests across them round robin: a write
acknowledged by one replica is read at once through another, two tenants with the same
user id and content never see each other (over REST, and in SQL with no tenant filter
as the application's role), concurrent turns on one window through three replicas are
all kept, and a replica killed mid-run loses no acknowledged write."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
import pytest
from rest_server import Server, start

from mnemolayer.server.rest.pgkeys import PostgresKeyStore
from mnemolayer.store.postgres.database import PostgresDatabase

REPLICAS = 3


@pytest.fixture
def replicas(
    tmp_path: Path, pg_app_url: str, redis_url: str
) -> Iterator[tuple[list[Server], dict[str, str]]]:
    # The replicas and the key command start together (each migrates the schema under
    # its advisory lock; a key made while a server starts is seen at its next request):
    # one key through the command line (its --database), the others in-process.
    command = [sys.executable, "-m", "mnemolayer", "--json", "keys", "create", "--database",
               pg_app_url, "--tenant", "acme"]  # fmt: skip
    args = ("--database", pg_app_url, "--sessions", redis_url)
    for i in range(REPLICAS):
        (tmp_path / f"r{i}").mkdir()
    with ThreadPoolExecutor(REPLICAS + 1) as pool:
        made = pool.submit(subprocess.run, command, capture_output=True, text=True, timeout=120)
        starting = [pool.submit(start, tmp_path / f"r{i}", *args) for i in range(REPLICAS)]
        servers = [f.result() for f in starting]
        done = made.result()
    assert done.returncode == 0, done.stderr
    keys = {"acme": json.loads(done.stdout)["key"]}
    database = PostgresDatabase(pg_app_url)
    store = PostgresKeyStore(database)
    keys["globex"] = store.create("globex")[0]
    keys["operator"] = store.create(None, operator=True)[0]
    database.close()
    yield servers, keys
    for srv in servers:
        srv.stop()
    for srv in servers[1:]:  # the first one is killed by the last test
        assert "Traceback" not in srv.log_text(), srv.log_text()


class RoundRobin:
    """A client that sends each request to the next replica."""

    def __init__(self, servers: list[Server], key: str) -> None:
        self.clients = [s.client(key) for s in servers]
        self._next = itertools.cycle(range(len(servers)))
        self._lock = threading.Lock()

    def pick(self) -> httpx.Client:
        with self._lock:
            return self.clients[next(self._next)]

    def request(self, method: str, path: str, **kw: object) -> httpx.Response:
        return self.pick().request(method, path, **kw)  # type: ignore[arg-type]


def test_three_replicas_share_tenants_windows_and_survive_a_kill(
    replicas: tuple[list[Server], dict[str, str]], pg_app_url: str
) -> None:
    servers, keys = replicas
    acme, globex = RoundRobin(servers, keys["acme"]), RoundRobin(servers, keys["globex"])

    # (a) Read-your-writes across replicas: each add is searched for and read back by
    # the next two replicas at once (their vector caches saw the user's generation move).
    for i in range(9):
        text = f"note {i}: the parcel for order {1000 + i} is in locker {i}"
        added = acme.request("POST", "/v1/users/ana/memories", json={"content": text})
        assert added.status_code == 201, added.text
        mid = added.json()["items"][0]["id"]
        found = acme.request(
            "POST", "/v1/users/ana/search", json={"query": f"order {1000 + i} locker", "limit": 3}
        )
        assert found.status_code == 200
        assert mid in [h["memory"]["id"] for h in found.json()["hits"]], found.json()
        assert acme.request("GET", f"/v1/users/ana/memories/{mid}").json()["content"] == text

    # (b) Two tenants, the same user id and identical content: never each other's.
    same = "My passport number is kept in the blue drawer"
    mine = {
        name: client.request("POST", "/v1/users/bob/memories", json={"content": same}).json()[
            "items"
        ][0]["id"]
        for name, client in (("acme", acme), ("globex", globex))
    }
    assert mine["acme"] != mine["globex"]
    for name, client in (("acme", acme), ("globex", globex)):
        other = mine["globex" if name == "acme" else "acme"]
        for _ in range(REPLICAS):
            hits = client.request("POST", "/v1/users/bob/search", json={"query": "passport"})
            assert [h["memory"]["id"] for h in hits.json()["hits"]] == [mine[name]]
            assert client.request("GET", f"/v1/users/bob/memories/{other}").status_code == 404
            listed = client.request("GET", "/v1/users/bob/memories").json()["items"]
            assert [m["id"] for m in listed] == [mine[name]]
    # In SQL, as the application's role, with no WHERE on the tenant: only own rows.
    with psycopg.connect(pg_app_url, autocommit=True) as raw:
        assert raw.execute("SELECT count(*) FROM memories").fetchone() == (0,)  # no tenant
        for name in ("acme", "globex"):
            with raw.transaction():
                raw.execute("SELECT set_config('mnemolayer.tenant', %s, true)", (name,))
                rows = raw.execute("SELECT id FROM memories WHERE user_id = 'bob'").fetchall()
                assert rows == [(mine[name],)]
                tenants = raw.execute("SELECT DISTINCT tenant FROM memories").fetchall()
                assert tenants == [(name,)]
    assert (
        RoundRobin(servers, keys["operator"]).request("GET", "/v1/admin/tenants").status_code == 200
    )

    # Working memory: 3 x 8 turns on one window, at once, through the three replicas.
    window = "/v1/users/ana/sessions/s1/window"

    def turns(worker: int) -> list[int]:
        return [
            acme.request(
                "POST",
                f"{window}/messages",
                json={"role": "user", "content": f"turn {worker}-{n}", "budget_tokens": 100_000},
            ).status_code
            for n in range(8)
        ]

    with ThreadPoolExecutor(3) as pool:
        codes = [c for batch in pool.map(turns, range(3)) for c in batch]
    assert codes == [201] * 24
    kept = [m["content"] for m in acme.request("GET", window).json()["window"]]
    assert sorted(kept) == sorted(f"turn {w}-{n}" for w in range(3) for n in range(8))

    # (c) SIGKILL one replica while three writers add through all three.
    acknowledged: list[tuple[str, str]] = []
    stop = threading.Event()

    def writer(worker: int) -> None:
        for n in itertools.count():
            if stop.is_set():
                return
            text = f"kill run {worker}-{n}: shelf {worker * 100 + n}"
            try:
                r = acme.request("POST", "/v1/users/kim/memories", json={"content": text})
            except httpx.TransportError:
                continue  # the killed replica: nothing acknowledged
            if r.status_code == 201:
                acknowledged.append((r.json()["items"][0]["id"], text))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    servers[0].proc.send_signal(signal.SIGKILL)
    servers[0].proc.wait(timeout=10)
    time.sleep(1.5)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert len(acknowledged) >= 10
    survivors = [s.client(keys["acme"]) for s in servers[1:]]
    for i, (mid, text) in enumerate(acknowledged):
        got = survivors[i % 2].get(f"/v1/users/kim/memories/{mid}")
        assert got.status_code == 200 and got.json()["content"] == text
    listed = survivors[0].get("/v1/users/kim/memories", params={"limit": 1000}).json()["items"]
    assert {mid for mid, _ in acknowledged} <= {m["id"] for m in listed}

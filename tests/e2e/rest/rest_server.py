"""A real ``mnemolayer serve`` process for the REST tests, and the table of every endpoint.

The server runs as a subprocess (``python -m mnemolayer ... serve``) on 127.0.0.1 with the
hashing embedder and the rules extractor; tests talk to it with httpx over loopback.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from mnemolayer import Memory
from mnemolayer.embed import HashingEmbedder
from mnemolayer.server import KeyStore


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    """A running server: its URL, data directory (or store) and log file."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    data_dir: Path | None = None
    keys: dict[str, str] = field(default_factory=dict)
    _clients: dict[tuple[str | None, str], httpx.Client] = field(default_factory=dict)

    def client(self, key: str | None = None, *, header: str = "bearer") -> httpx.Client:
        """A client sending ``key`` (``Authorization: Bearer`` or ``X-API-Key``); cached,
        since making an httpx client costs tens of milliseconds."""
        cached = self._clients.get((key, header))
        if cached is not None:
            return cached
        headers = {}
        if key is not None:
            headers = (
                {"Authorization": f"Bearer {key}"} if header == "bearer" else {"X-API-Key": key}
            )
        made = httpx.Client(base_url=self.url, headers=headers, timeout=30.0)
        self._clients[(key, header)] = made
        return made

    def as_(self, name: str) -> httpx.Client:
        """A client with the key called ``name`` (see :func:`start_with_tenants`)."""
        return self.client(self.keys[name])

    def stop(self) -> None:
        for c in self._clients.values():
            c.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def start(workdir: Path, *serve_args: str, extractor: str = "rules") -> Server:
    """Start ``mnemolayer serve`` with ``serve_args`` and wait until /healthz answers.

    Raises:
        RuntimeError: the process exited or did not answer within 60 s (with its log).
    """
    port = free_port()
    log = workdir / f"server-{port}.log"
    cmd = [
        sys.executable, "-m", "mnemolayer", "--embedder", "hashing", "--extractor", extractor,
        "serve", "--port", str(port), "--log-level", "warning", *serve_args,
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    server = Server(url=f"http://127.0.0.1:{port}", proc=proc, log=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{server.log_text()}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=1.0).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"server did not start:\n{server.log_text()}")


def start_with_tenants(workdir: Path, *serve_args: str) -> Server:
    """A multi-tenant server (more ``serve_args`` if given) with keys:

    * ``acme``: tenant ``acme``, every user; ``acme_alice``: ``acme``, bound to ``alice``;
    * ``acme_admin``: a tenant-admin key of ``acme``; ``globex``: tenant ``globex``, every
      user; ``globex_admin``: a tenant-admin key of ``globex``;
    * ``operator``: the server operator's key (every tenant and key, no tenant's data);
    * ``legacy``: tenant ``legacy``, whose store was embedded with another model than the
      server's (so it cannot be opened).
    """
    data_dir = workdir / "data"
    store = KeyStore(data_dir / "keys.db")
    keys = {
        "acme": store.create("acme", name="acme all")[0],
        "acme_alice": store.create("acme", users=["alice"], name="alice only")[0],
        "acme_admin": store.create("acme", admin=True, name="ops")[0],
        "globex": store.create("globex")[0],
        "globex_admin": store.create("globex", admin=True, name="globex ops")[0],
        "operator": store.create(None, operator=True, name="operator")[0],
        "legacy": store.create("legacy")[0],
    }
    store.close()
    legacy = data_dir / "tenants" / "legacy" / "memory.db"
    legacy.parent.mkdir(parents=True)
    with Memory(legacy, embedder=HashingEmbedder(dim=64), extractor=None) as old:
        old.add("embedded with the old model", user_id="u")  # an empty store would adopt
    server = start(workdir, "--data-dir", str(data_dir), *serve_args)
    server.data_dir = data_dir
    server.keys = keys
    return server


@dataclass(frozen=True)
class Endpoint:
    """One route, with a request that is valid when the ``{...}`` names are filled in."""

    method: str
    path: str
    json: Any = None
    params: dict[str, Any] | None = None

    @property
    def user_scoped(self) -> bool:
        return self.path.startswith("/v1/users/{user_id}")

    @property
    def admin(self) -> bool:
        return self.path.startswith("/v1/admin")

    def call(self, client: httpx.Client, **names: str) -> httpx.Response:
        return client.request(
            self.method, self.path.format(**names), json=self.json, params=self.params
        )


U = "/v1/users/{user_id}"
W = U + "/sessions/{session_id}/window"

#: Every route under /v1 (a test checks this against the server's /openapi.json).
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("POST", U + "/memories", {"content": "I like green tea"}),
    Endpoint("GET", U + "/memories", params={"limit": 5}),
    Endpoint("DELETE", U + "/memories", params={"session_id": "no-such-session"}),
    Endpoint("POST", U + "/search", {"query": "what do I like?", "explain": True}),
    Endpoint("GET", U + "/memories/{memory_id}"),
    Endpoint("PATCH", U + "/memories/{memory_id}", {"importance": 0.9}),
    # The lifecycle routes, in an order that works on one memory: pin, unpin, archive
    # (refused while pinned), restore; before the memory is deleted below.
    Endpoint("GET", U + "/memories/{memory_id}/explain", params={"query": "what do I like?"}),
    Endpoint("PUT", U + "/memories/{memory_id}/pin"),
    Endpoint("DELETE", U + "/memories/{memory_id}/pin"),
    Endpoint("POST", U + "/memories/{memory_id}/archive"),
    Endpoint("POST", U + "/memories/{memory_id}/restore"),
    Endpoint("POST", U + "/maintain", {"dry_run": True}),
    Endpoint("DELETE", U + "/memories/{memory_id}"),
    Endpoint("GET", U + "/memories/{memory_id}/history"),
    # Forget after delete: the id is gone, so this is the not-found answer of get.
    Endpoint("POST", U + "/memories/{memory_id}/forget"),
    Endpoint("GET", U + "/export"),
    Endpoint("POST", U + "/import", {"rows": []}),
    Endpoint("GET", U + "/stats"),
    Endpoint("GET", U + "/facts"),
    Endpoint("GET", U + "/entities"),
    Endpoint("GET", U + "/entities/{entity}/neighbors"),
    Endpoint("GET", U + "/profile"),
    Endpoint("POST", U + "/feedback", {"action": "jazz playlist", "feedback": "positive"}),
    Endpoint("POST", U + "/context", {"query": "what do I like?", "budget_tokens": 300}),
    Endpoint(
        "POST", U + "/outcomes", {"task": "book a table", "strategy": "call", "success": True}
    ),
    Endpoint("GET", U + "/outcomes"),
    Endpoint("GET", U + "/strategies", params={"task": "book a table"}),
    Endpoint("GET", U + "/insights"),
    Endpoint("GET", U + "/sessions"),
    Endpoint("POST", U + "/sessions/{session_id}/end"),
    Endpoint("GET", W),
    Endpoint("DELETE", W),
    Endpoint("POST", W + "/messages", {"role": "user", "content": "hello there"}),
    Endpoint("PUT", W + "/messages/{message_id}/pin"),
    Endpoint("DELETE", W + "/messages/{message_id}/pin"),
    Endpoint("GET", "/v1/whoami"),
    Endpoint("GET", "/v1/stats"),
    Endpoint("GET", "/v1/admin/tenants"),
    Endpoint("POST", "/v1/admin/keys", {"tenant": "acme"}),
    Endpoint("GET", "/v1/admin/keys"),
    Endpoint("DELETE", "/v1/admin/keys/{key_id}"),
)


def ids(endpoints: tuple[Endpoint, ...] = ENDPOINTS) -> Iterator[str]:
    for e in endpoints:
        yield f"{e.method} {e.path}"

"""Scheduled maintenance (``mnemolayer serve --maintain-every``): on a real server process,
an expired memory disappears with no request calling maintain, a tenant that cannot be
opened is reported and skipped, and the server stops cleanly; in process, the passes,
their one-line summaries and the thread's start and stop."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rest_server import start_with_tenants
from test_rest_cli import cli

from mnemolayer import Memory
from mnemolayer.embed import HashingEmbedder
from mnemolayer.models import new_id
from mnemolayer.server import ServerSettings
from mnemolayer.server.rest.scheduler import MaintenanceScheduler
from mnemolayer.server.rest.settings import format_duration, parse_duration
from mnemolayer.server.rest.tenants import TenantPool

PAST = "2000-01-01T00:00:00Z"


def expiring_row(mem: Memory, user: str, content: str, expires_at: str) -> dict[str, Any]:
    """An export row of a memory of ``user`` that expires at ``expires_at`` (written
    through a scratch user, since only import sets ``expires_at``)."""
    source = mem.add(content, user_id=f"{user}-source")[0]
    row = next(r for r in mem.export(user_id=f"{user}-source") if r.get("id") == source.id)
    return {**row, "id": new_id(), "user_id": user, "expires_at": expires_at}


def wait_for(check: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


# -- a real server ---------------------------------------------------------------------------


def test_the_server_expires_memories_on_its_own(tmp_path: Path) -> None:
    server = start_with_tenants(tmp_path, "--maintain-every", "1s", "--log-level", "info")
    try:
        api = server.as_("acme")
        kept = api.post("/v1/users/u1/memories", json={"content": "I have a cat called Miso"})
        kept_id = kept.json()["items"][0]["id"]
        source = api.post("/v1/users/u1-source/memories", json={"content": "Guest wifi: tulip42"})
        rows = api.get("/v1/users/u1-source/export").json()["rows"]
        row = next(r for r in rows if r.get("id") == source.json()["items"][0]["id"])
        row = {**row, "id": new_id(), "user_id": "u1", "expires_at": PAST}
        imported = api.post("/v1/users/u1/import", json={"rows": [row]})
        assert imported.json() == {"count": 1}, imported.text

        # No request calls maintain: the scheduler deletes it within a pass or two.
        wait_for(lambda: api.get(f"/v1/users/u1/memories/{row['id']}").status_code == 404)
        events = api.get(f"/v1/users/u1/memories/{row['id']}/history").json()["events"]
        assert events[-1]["event"] == "EXPIRE"
        assert api.get(f"/v1/users/u1/memories/{kept_id}").status_code == 200
        wait_for(lambda: "expired 1" in server.log_text())
        log = server.log_text()
        line = next(x for x in log.splitlines() if "expired 1" in x)
        assert "maintenance pass" in line and "1 tenant, 2 users" in line
        # The tenant whose store cannot be opened is named, and the server keeps serving.
        assert "legacy (embedding_mismatch" in line
        assert api.get("/v1/whoami").status_code == 200
    finally:
        server.stop()
    # uvicorn shuts down gracefully on SIGTERM, then re-raises it (exit by the signal).
    assert server.proc.returncode in (0, -15)
    log = server.log_text()
    assert "Application shutdown complete" in log and "Traceback" not in log, log


def test_serve_rejects_a_bad_interval(tmp_path: Path) -> None:
    for value in ("soon", "0s", "6"):
        r = cli("serve", "--db", str(tmp_path / "x.db"), "--maintain-every", value)
        assert r.exit_code == 2 and r.stderr.startswith("error: --maintain-every:"), r.stderr
    assert not (tmp_path / "x.db").exists()


def test_durations() -> None:
    assert [parse_duration(t) for t in ("1s", "30m", "6h", "1d", "1h30m", " 90s ")] == [
        1.0, 1800.0, 21600.0, 86400.0, 5400.0, 90.0,
    ]  # fmt: skip
    assert [format_duration(s) for s in (1.0, 1800.0, 5400.0, 86400.0, 1.5)] == [
        "1s", "30m", "1h30m", "1d", "1.5s",
    ]  # fmt: skip


# -- in process ------------------------------------------------------------------------------


@pytest.fixture
def pool(tmp_path: Path) -> Any:
    """Tenants ``acme`` (an expired memory of u1), ``globex`` (nothing to do) and
    ``legacy`` (embedded with another model: cannot be opened)."""
    data = tmp_path / "data"
    settings = ServerSettings(data_dir=data, embedder="hashing", extractor="none")
    made = TenantPool(settings)
    acme = made.get("acme")
    acme.add("I have a cat called Miso", user_id="u1")
    acme.import_rows([expiring_row(acme, "u1", "Guest wifi: tulip42", PAST)])
    made.get("globex").add("Nothing expires here", user_id="g1")
    legacy = data / "tenants" / "legacy" / "memory.db"
    legacy.parent.mkdir(parents=True)
    with Memory(legacy, embedder=HashingEmbedder(dim=64), extractor=None) as old:
        old.add("embedded with the old model", user_id="u")  # an empty store would adopt
    yield made
    made.close()


def test_a_pass_maintains_every_tenant_and_logs_one_line(
    pool: TenantPool, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = MaintenanceScheduler(pool, 3600)
    with caplog.at_level(logging.INFO, logger="mnemolayer.server"):
        first = scheduler.run_once()
    assert first.number == 1 and first.tenants == ["acme", "globex"]
    assert first.users == 3  # u1, u1-source and g1
    assert first.totals["expired"] == 1 and first.changes == 1
    assert list(first.failed) == ["legacy"]
    assert first.failed["legacy"].startswith("embedding_mismatch:")
    [record] = [r for r in caplog.records if "maintenance pass 1" in r.getMessage()]
    assert record.levelno == logging.WARNING  # a tenant failed
    assert record.getMessage().startswith(
        "maintenance pass 1: 2 tenants, 3 users, 1 change (expired 1) in "
    )
    assert "1 failed: legacy (embedding_mismatch:" in record.getMessage()
    assert "\n" not in record.getMessage()

    second = scheduler.run_once()  # idempotent
    assert second.number == 2 and second.changes == 0
    assert ", no changes in " in second.summary()


def test_a_failing_tenant_never_stops_the_pass(
    pool: TenantPool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_get = pool.get

    def get(tenant: str) -> Memory:
        if tenant == "acme":
            raise RuntimeError("a bug")
        return real_get(tenant)

    monkeypatch.setattr(pool, "get", get)
    with caplog.at_level(logging.INFO, logger="mnemolayer.server"):
        run = MaintenanceScheduler(pool, 3600).run_once()
    assert run.tenants == ["globex"]
    assert run.failed["acme"] == "internal_error: RuntimeError"
    assert any("maintenance of tenant acme failed" in r.getMessage() for r in caplog.records)


def test_the_thread_runs_passes_until_stopped(pool: TenantPool) -> None:
    scheduler = MaintenanceScheduler(pool, 1.0)
    scheduler.start()
    try:
        # The first pass at once, then one each second; `last` is set when a pass ends.
        wait_for(lambda: scheduler.last is not None and scheduler.last.number >= 2, timeout=10)
        finished = scheduler.last
    finally:
        scheduler.stop()
    assert not any(t.name == "mnemolayer-maintain" for t in threading.enumerate())  # joined
    scheduler.stop()  # twice is fine
    assert finished is not None and finished.tenants == ["acme", "globex"]
    # A pass that stop() cut short ends between two tenants, never inside one.
    cut = scheduler.last
    assert cut is not None and cut.tenants in ([], ["acme"], ["acme", "globex"])
    with pytest.raises(RuntimeError, match="already started"):
        scheduler.start()


def test_the_interval_is_checked(pool: TenantPool) -> None:
    from mnemolayer.errors import ValidationError

    for bad in (0.5, 366 * 86400.0):
        with pytest.raises(ValidationError, match="every_s"):
            MaintenanceScheduler(pool, bad)

"""Scheduled maintenance in the REST server: ``mnemolayer serve --maintain-every 6h``.

A background thread runs :meth:`mnemolayer.Memory.maintain` (every user, the default
policy, the server's clock) over **every tenant with a store**: the stores under
``<data_dir>/tenants/`` (opened through the server's pool if no request opened them
yet, and then kept open like any other) and any store the server has open, or the one
``--db`` store in single-user mode. Every tenant on disk, not only the open ones, so
that a tenant nobody has called since the server started still has its expired
memories deleted on time.

* The first pass starts when the server has started, then one every interval. Passes
  never overlap: one thread runs them one after the other, and a pass that takes longer
  than the interval skips the starts it overran.
* Each pass logs one line (logger ``mnemolayer.server``): tenants, users, changes by
  action, seconds; at INFO, or at WARNING when a tenant failed.
* A tenant whose store cannot be opened or maintained (another embedding model, a
  damaged file, a busy store) is named in that line and skipped; the pass goes on with
  the other tenants and the server keeps serving. The next pass tries it again.
* At shutdown the thread stops before the stores close: a pass under way finishes the
  tenant it is on and stops there.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from mnemolayer.errors import MnemolayerError, ValidationError
from mnemolayer.lifecycle.maintain import MaintenanceReport
from mnemolayer.server.rest.errors import describe
from mnemolayer.server.rest.settings import MAX_INTERVAL_S, MIN_INTERVAL_S
from mnemolayer.server.rest.tenants import TenantPool

__all__ = ["MaintenanceRun", "MaintenanceScheduler"]

log = logging.getLogger("mnemolayer.server")

#: Counts of ``MaintenanceReport.totals`` that are not changes.
_NOT_CHANGES = ("examined", "active")


@dataclass
class MaintenanceRun:
    """What one scheduled pass did over every tenant.

    Attributes:
        number: 1 for the first pass of this server, then 2, 3...
        tenants: the tenants maintained, in order.
        users: users maintained, over all tenants.
        changes: changes made over every tenant (0: nothing to do).
        totals: each action (``expired``, ``merged``, ...) summed over the tenants.
        failed: tenant → ``"<error type>: <message>"`` for those skipped.
        duration_s: wall-clock seconds of the pass.
    """

    number: int
    tenants: list[str] = field(default_factory=list)
    users: int = 0
    changes: int = 0
    totals: dict[str, int] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    duration_s: float = 0.0

    def add(self, tenant: str, report: MaintenanceReport) -> None:
        """Count one tenant's report in."""
        self.tenants.append(tenant)
        self.users += len(report.users)
        self.changes += report.changes
        for action, n in report.totals.items():
            if action not in _NOT_CHANGES:
                self.totals[action] = self.totals.get(action, 0) + n

    def summary(self) -> str:
        """The pass as one log line."""
        done = [f"{k} {n}" for k, n in self.totals.items() if n]
        what = f"{_count(self.changes, 'change')} ({', '.join(done)})" if done else "no changes"
        line = (
            f"maintenance pass {self.number}: {_count(len(self.tenants), 'tenant')}, "
            f"{_count(self.users, 'user')}, {what} in {self.duration_s:.2f} s"
        )
        if self.failed:
            skipped = "; ".join(f"{t} ({why})" for t, why in self.failed.items())
            line += f"; {len(self.failed)} failed: {skipped}"
        return line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class MaintenanceScheduler:
    """Runs a maintenance pass over every tenant of ``pool`` every ``every_s`` seconds,
    in one background thread (see the module docstring).

    Args:
        pool: the server's tenants.
        every_s: seconds from the start of one pass to the start of the next (≥ 1).

    Raises:
        ValidationError: (``every_s``) an interval out of [1 s, 365 d].
    """

    def __init__(self, pool: TenantPool, every_s: float) -> None:
        if not MIN_INTERVAL_S <= every_s <= MAX_INTERVAL_S:
            raise ValidationError("every_s", f"must be between 1 and {MAX_INTERVAL_S:g} seconds")
        self.pool = pool
        self.every_s = every_s
        self.runs = 0
        self.last: MaintenanceRun | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (the first pass begins at once)."""
        if self._thread is not None:
            raise RuntimeError("the maintenance scheduler is already started")
        self._thread = threading.Thread(target=self._loop, name="mnemolayer-maintain", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it: a pass under way ends after its current
        tenant. Safe to call twice, or without :meth:`start`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _loop(self) -> None:
        due = time.monotonic()
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            self.run_once()
            now = time.monotonic()
            while due <= now:  # skip the starts a long pass overran: never back to back
                due += self.every_s

    def run_once(self) -> MaintenanceRun:
        """One pass over every tenant, now, in the calling thread; logs its summary.

        Never raises: a tenant that fails is recorded in ``failed`` and skipped.
        """
        self.runs += 1
        run = MaintenanceRun(number=self.runs)
        started = time.perf_counter()
        for tenant in self.pool.names():
            if self._stop.is_set():
                break
            try:
                report = self.pool.get(tenant).maintain()
            except MnemolayerError as exc:  # reported, and retried next pass
                info = describe(exc)
                run.failed[tenant] = f"{info.type}: {info.message}"
                continue
            except Exception as exc:  # a bug must not stop the scheduler or the server
                log.error("maintenance of tenant %s failed", tenant, exc_info=exc)
                run.failed[tenant] = f"internal_error: {type(exc).__name__}"
                continue
            run.add(tenant, report)
        run.duration_s = time.perf_counter() - started
        self.last = run
        log.log(logging.WARNING if run.failed else logging.INFO, "%s", run.summary())
        return run

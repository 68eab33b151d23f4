"""Progress for a suite run in parallel (``make test`` runs ``pytest -n auto``,
pytest-xdist's workers, one per core).

pytest's own output names each file as it starts and prints one character per test; with
several workers it prints the characters alone, so a long run would not say where it is.
This plugin, active in the controlling process of an xdist run only, prints

* a line for each file once all of its tests finished: the time since the session started,
  the file, and its counts (``    03:12 tests/contract/test_api.py 166 passed``);
* the name of each test marked ``slow`` as it starts, with the time, as a serial run does
  (tests/conftest.py), so that a long wait in a real-model test says which one it is.

The workers collect; the controller does not, so the ids of the slow tests reach it
through a file the first worker writes (``MNEMOLAYER_TEST_SLOW_IDS``).
"""

from __future__ import annotations

import collections
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

_START = time.monotonic()
_SLOW_IDS_ENV = "MNEMOLAYER_TEST_SLOW_IDS"


def elapsed() -> str:
    """Minutes and seconds since the session started, ``MM:SS``."""
    minutes, seconds = divmod(int(time.monotonic() - _START), 60)
    return f"{minutes:02d}:{seconds:02d}"


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def is_parallel(config: pytest.Config) -> bool:
    """True in the controlling process of an xdist run."""
    return not is_worker(config) and bool(getattr(config.option, "numprocesses", None))


def note_slow_ids(config: pytest.Config, ids: list[str]) -> None:
    """In a worker: write the slow tests' ids where the controller reads them (each worker
    collects the same tests; the first to write wins, atomically)."""
    target = os.environ.get(_SLOW_IDS_ENV)
    if not is_worker(config) or not target or Path(target).exists():
        return
    fd, tmp = tempfile.mkstemp(dir=Path(target).parent, prefix=".slow-ids-")
    with os.fdopen(fd, "w") as out:
        out.write("\n".join(ids))
    os.replace(tmp, target)


class FileProgress:
    """The controller's view: tests per file (from the workers' collection), finished ones
    as their teardown reports arrive."""

    def __init__(self, config: pytest.Config, slow_ids: Path) -> None:
        self.config = config
        self.slow_ids_file = slow_ids
        self.slow: set[str] | None = None
        self.total: collections.Counter[str] = collections.Counter()
        self.done: collections.Counter[str] = collections.Counter()
        self.outcomes: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter
        )
        self.collected = False

    def _write(self, text: str, **markup: bool) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or reporter.verbosity > 0:
            return  # -v names every test anyway
        newline = "\n" if reporter._tw.width_of_current_line else ""
        reporter.write(f"{newline}    {elapsed()} {text}\n", **markup)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.collected:  # every worker collects the same tests
            return
        self.collected = True
        self.total.update(nodeid.split("::", 1)[0] for nodeid in ids)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        if self.slow is None and self.slow_ids_file.exists():
            self.slow = set(self.slow_ids_file.read_text().split("\n"))
        if self.slow and nodeid in self.slow:
            self._write(f"slow {nodeid.rpartition('::')[2]} started", yellow=True)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        path = report.nodeid.split("::", 1)[0]
        if report.when == "call" or (report.when == "setup" and not report.passed):
            outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
            self.outcomes[path][outcome] += 1
        elif report.when == "teardown" and not report.passed:
            self.outcomes[path]["error"] += 1
        if report.when != "teardown":
            return
        self.done[path] += 1
        if self.done[path] == self.total.get(path):
            counts = " ".join(f"{n} {what}" for what, n in sorted(self.outcomes[path].items()))
            bad = bool(self.outcomes[path]["failed"] or self.outcomes[path]["error"])
            self._write(f"{path} {counts}", red=bad, green=not bad)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if not is_parallel(config):
        return
    basetemp = Path(config.option.basetemp or tempfile.mkdtemp(prefix="mnemolayer-progress-"))
    slow_ids = basetemp.resolve().parent / f".{basetemp.name}-slow-ids"
    os.environ[_SLOW_IDS_ENV] = str(slow_ids)  # the workers, started later, inherit it
    config.pluginmanager.register(FileProgress(config, slow_ids), "mnemolayer-file-progress")


def pytest_unconfigure(config: pytest.Config) -> None:
    target = os.environ.get(_SLOW_IDS_ENV)
    if target and is_parallel(config):
        Path(target).unlink(missing_ok=True)

"""Fixtures of the UI tests: one real multi-tenant server per module and one headless
Chromium for all (the server harness is the REST tests' own, ``tests/e2e/rest/rest_server.py``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rest"))

from rest_server import Server, start_with_tenants
from ui_browser import chromium, require_browser

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, ConsoleMessage, Page


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A multi-tenant server (keys in ``server.keys``: ``acme``, ``acme_alice``...)."""
    srv = start_with_tenants(tmp_path_factory.mktemp("ui"))
    yield srv
    srv.stop()
    assert "Traceback" not in srv.log_text(), srv.log_text()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """A headless Chromium with a fresh profile, shared by a module's tests (each test gets
    its own tab); skips when there is none (see ui_browser).

    Module scope, not session: Playwright's sync API keeps an asyncio loop marked as
    running on this thread until it stops, so while it lives no later test can start an
    event loop of its own (``asyncio.run``: "Cannot run the event loop while another loop
    is running")."""
    require_browser()
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """A new tab (empty sessionStorage); fails the test on any script error in the page."""
    tab = browser.new_page()
    errors: list[str] = []

    def on_console(msg: ConsoleMessage) -> None:
        # The browser logs every 4xx answer; those are expected (the tests provoke them).
        # Anything else, a CSP violation above all, is a failure.
        if msg.type == "error" and "status of 4" not in msg.text:
            errors.append(msg.text)

    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", on_console)
    yield tab
    tab.close()
    assert not errors, errors

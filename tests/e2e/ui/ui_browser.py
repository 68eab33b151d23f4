"""Headless Chromium for the UI tests: Debian's ``/usr/bin/chromium`` driven by Playwright.

Playwright's own browser download is never used (``playwright install`` needs the
network): the tests launch the system Chromium through ``executable_path``. Without it
(or without the ``playwright`` package) the tests skip, unless
``MNEMOLAYER_REQUIRE_BROWSER=1`` is set (CI), where they fail instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
VIEWPORT = {"width": 1280, "height": 800}


def missing() -> str | None:
    """Why the browser tests cannot run here, or ``None`` when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install playwright)"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install -y chromium)"
    return None


def require_browser() -> None:
    """Skip the calling test (or fixture) when no browser can run; with
    ``MNEMOLAYER_REQUIRE_BROWSER=1``, fail instead."""
    why = missing()
    if why is None:
        return
    if os.environ.get("MNEMOLAYER_REQUIRE_BROWSER") == "1":
        pytest.fail(f"MNEMOLAYER_REQUIRE_BROWSER=1 but {why}")
    pytest.skip(f"no headless browser: {why}")


@contextmanager
def chromium(user_data_dir: Path) -> Iterator[BrowserContext]:
    """A headless Chromium with a fresh profile in ``user_data_dir`` (emptied first)."""
    from playwright.sync_api import sync_playwright

    shutil.rmtree(user_data_dir, ignore_errors=True)
    user_data_dir.mkdir(parents=True)
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport=VIEWPORT,  # type: ignore[arg-type]
            locale="en-GB",
            timezone_id="UTC",
        )
        context.set_default_timeout(15_000)
        try:
            yield context
        finally:
            context.close()


def sign_in(page: Page, url: str, key: str) -> None:
    """Open the UI in ``page`` (a new tab: its sessionStorage is empty) and sign in."""
    page.goto(f"{url}/ui/")
    page.fill("#api-key", key)
    page.click("#sign-in")
    page.wait_for_selector("#topbar-controls:not([hidden])")

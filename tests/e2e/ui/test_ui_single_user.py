"""The memory browser on a single-user server (``mnemolayer serve --db FILE``): no key is
asked for, and the one store is browsed directly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from rest_server import Server, start

if TYPE_CHECKING:
    from playwright.sync_api import Page


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    workdir: Path = tmp_path_factory.mktemp("ui-single")
    srv = start(workdir, "--db", str(workdir / "memory.db"))
    yield srv
    srv.stop()
    assert "Traceback" not in srv.log_text(), srv.log_text()


def test_no_key_is_asked_for(single: Server, page: Page) -> None:
    made = single.client().post("/v1/users/solo/memories", json={"content": "I play the cello"})
    assert made.status_code == 201, made.text
    page.goto(f"{single.url}/ui/")
    page.wait_for_selector("#topbar-controls:not([hidden])")
    assert page.locator("#api-key").count() == 0
    assert "single-user mode" in page.inner_text("#who")
    assert not page.locator("#sign-out").is_visible()
    page.fill("#user-input", "solo")
    page.click("#user-form button")
    page.fill("#search-query", "which instrument?")
    page.click("#search-form button")
    page.wait_for_selector(f".hit[data-id='{made.json()['items'][0]['id']}']")
    page.goto(f"{single.url}/ui/#/login")  # the sign-in page says there is nothing to do
    page.wait_for_selector("h1:has-text('No key needed')")

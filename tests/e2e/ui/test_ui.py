"""The web memory browser (``/ui``) end to end: a real server, headless Chromium.

The bar (issue 5): memories added through the API with a key are found through the UI
search, opened (content, history), deleted after a confirmation, and gone from the
search and the list. Also: a wrong key is refused with the server's error, a key bound
to one user lands on that user and gets the 403 for others, the list filters and pages,
memory content is shown as text (never parsed as HTML), and the facts graph draws the
nodes and facts of an entity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest
from rest_server import Server
from ui_browser import sign_in

from mnemolayer.server.ui import CONTENT_SECURITY_POLICY

if TYPE_CHECKING:
    from playwright.sync_api import Page


def add(server: Server, user: str, *texts: str, **fields: object) -> list[dict[str, object]]:
    """Store each text for ``user`` with the tenant-wide acme key; the records made."""
    made = []
    for text in texts:
        r = server.as_("acme").post(f"/v1/users/{user}/memories", json={"content": text, **fields})
        assert r.status_code == 201, r.text
        made.extend(r.json()["items"])
    return made


# -- the files -------------------------------------------------------------------------


def test_ui_needs_no_key_and_sends_a_strict_csp(server: Server) -> None:
    assert httpx.get(f"{server.url}/v1/whoami").status_code == 401  # the API does need one
    r = httpx.get(f"{server.url}/ui")
    assert r.status_code in (301, 307, 308) and r.headers["location"].endswith("/ui/")
    page = httpx.get(f"{server.url}/ui/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert (
        "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe" not in CONTENT_SECURITY_POLICY
    )
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["x-frame-options"] == "DENY"
    assert "<script" in page.text and "onclick" not in page.text.lower()
    js = httpx.get(f"{server.url}/ui/app.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert js.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    missing = httpx.get(f"{server.url}/ui/no-such-file.js")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found"
    assert "/ui" not in httpx.get(f"{server.url}/openapi.json").text  # not an API route


# -- signing in --------------------------------------------------------------------------


def test_wrong_key_is_refused_with_the_servers_error(server: Server, page: Page) -> None:
    page.goto(f"{server.url}/ui/")
    page.fill("#api-key", "msk_0000000000000000_not-a-real-secret")
    page.click("#sign-in")
    error = page.locator("#error")
    error.wait_for(state="visible")
    assert "401 unauthorized" in error.inner_text()
    assert "invalid or revoked API key" in error.inner_text()
    assert page.locator("#api-key").is_visible()  # still asking
    assert page.evaluate("sessionStorage.getItem('mnemolayer.apiKey')") is None


def test_a_key_bound_to_one_user_lands_there_and_is_refused_others(
    server: Server, page: Page
) -> None:
    add(server, "alice", "I keep my bike in the garage")
    sign_in(page, server.url, server.keys["acme_alice"])
    page.wait_for_selector("#search-query")
    assert page.url.endswith("#/u/alice/search")
    assert "users: alice" in page.inner_text("#who")
    assert page.locator("#user-options option[value='alice']").count() == 1
    page.fill("#user-input", "bob")
    page.click("#user-form button")
    page.fill("#search-query", "bike")
    page.click("#search-form button")
    error = page.locator("#error")
    error.wait_for(state="visible")
    assert "403 forbidden" in error.inner_text() and "field: user_id" in error.inner_text()


# -- the bar: search, open, delete --------------------------------------------------------


def test_find_open_delete_and_see_it_gone(server: Server, page: Page) -> None:
    user = "bar-user"
    target = add(server, user, "The spare house key is under the blue flowerpot")[0]
    add(server, user, "I had pasta for lunch on Tuesday", "My favourite colour is green")
    sign_in(page, server.url, server.keys["acme"])
    page.fill("#user-input", user)
    page.click("#user-form button")

    page.fill("#search-query", "where is the spare key?")
    page.click("#search-form button")
    hit = page.locator(f".hit[data-id='{target['id']}']")
    hit.wait_for()
    assert page.locator(".hit").first.get_attribute("data-id") == target["id"]
    # The score breakdown: the final score and its parts, as the API returns them.
    api_hit = (
        server.as_("acme")
        .post(f"/v1/users/{user}/search", json={"query": "where is the spare key?"})
        .json()["hits"][0]
    )
    shown = float(hit.locator(".final-value").inner_text())
    assert shown == pytest.approx(api_hit["score"], abs=0.06)  # recall bumps access counts
    parts = hit.locator(".part").evaluate_all("els => els.map(e => e.dataset.part)")
    assert {"relevance", "vector_norm", "keyword_norm", "recency"} <= set(parts)

    hit.locator(".hit-content").click()
    page.wait_for_selector("#memory-content")
    assert page.inner_text("#memory-content") == target["content"]
    history = page.locator("#history-table tbody tr")
    assert history.count() >= 1 and history.first.get_attribute("data-event") == "ADD"

    page.click("#delete-memory")
    dialog = page.locator("#confirm")
    dialog.wait_for(state="visible")
    assert "blue flowerpot" in dialog.inner_text()
    page.click("#confirm-cancel")  # cancelling keeps it
    assert server.as_("acme").get(f"/v1/users/{user}/memories/{target['id']}").status_code == 200
    page.click("#delete-memory")
    page.click("#confirm-ok")

    page.wait_for_selector("#flash:not([hidden])")
    assert target["id"] in page.inner_text("#flash")
    page.wait_for_selector("#search-results .hit")  # back on the search, run again
    assert page.locator(f".hit[data-id='{target['id']}']").count() == 0
    assert server.as_("acme").get(f"/v1/users/{user}/memories/{target['id']}").status_code == 404

    page.click("a.tab:has-text('Memories')")
    page.wait_for_selector("#memory-table")
    assert page.locator(f"#memory-table tr[data-id='{target['id']}']").count() == 0
    assert page.locator("#memory-table tbody tr").count() >= 2

    # The deleted memory's page shows what is left: its history, ending in DELETE.
    page.goto(f"{server.url}/ui/#/u/{user}/memory/{target['id']}")
    page.wait_for_selector("#memory-gone")
    events = page.locator("#history-table tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.event)"
    )
    assert events[0] == "ADD" and events[-1] == "DELETE"


# -- lifecycle: explanation, pin, archive ------------------------------------------------------


def test_the_memory_page_explains_and_pins(server: Server, page: Page) -> None:
    from playwright.sync_api import expect

    user = "pinner"
    target = add(server, user, "Remember that my passport number is X1234567")[0]
    add(server, user, "The weather was nice today")
    path = f"/v1/users/{user}/memories/{target['id']}"
    sign_in(page, server.url, server.keys["acme"])
    page.goto(f"{server.url}/ui/#/u/{user}/memory/{target['id']}")
    page.wait_for_selector("#lifecycle")

    # The explanation, as the API gives it: retention, importance and its reasons, state.
    explained = server.as_("acme").get(f"{path}/explain").json()
    assert page.inner_text("#retention .gauge-value") == f"{explained['retention']['value']:.3f}"
    assert page.inner_text("#importance .gauge-value") == f"{explained['importance']['value']:.2f}"
    reasons = page.locator("#importance-reasons li").all_text_contents()
    assert reasons == explained["importance"]["reasons"] and reasons
    states = page.locator("#memory-state .badge").evaluate_all(
        "els => els.map(e => e.dataset.state)"
    )
    assert states == ["recallable"]
    assert page.locator("#explanation-summary li").count() == len(explained["summary"])

    # Pinning from the page shows it pinned, in the page and in the store.
    page.click("#pin-memory")
    pinned = page.locator("#memory-state .badge[data-state='pinned']")
    pinned.wait_for()
    expect(page.locator("#pin-memory")).to_have_text("Unpin")
    assert "Pinned memory" in page.inner_text("#flash")
    assert page.inner_text("#retention .gauge-value") == "1.000"
    assert page.locator("#archive-memory").is_disabled()  # unpin before archiving
    assert server.as_("acme").get(path).json()["pinned"] is True

    # Unpin, archive (out of search), restore.
    page.click("#pin-memory")
    expect(page.locator("#pin-memory")).to_have_text("Pin")
    assert pinned.count() == 0
    page.click("#archive-memory")
    page.wait_for_selector("#memory-state .badge[data-state='archived']")
    assert "left out of search: archived" in page.inner_text("#memory-state")
    assert server.as_("acme").get(path).json()["archived_at"] is not None
    page.click("#archive-memory")  # now "Restore"
    page.wait_for_selector("#memory-state .badge[data-state='recallable']")
    assert server.as_("acme").get(path).json()["archived_at"] is None
    events = page.locator("#history-table tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.event)"
    )
    assert events == ["ADD", "PIN", "UNPIN", "ARCHIVE", "RESTORE"]


# -- list, filters, pages, escaping --------------------------------------------------------


def test_list_filters_pages_and_shows_content_as_text(server: Server, page: Page) -> None:
    from playwright.sync_api import expect  # here: the module imports without playwright

    user = "lister"
    hostile = '<img src=x id="injected"> <script>window.pwned = 1</script> & "quotes"'
    add(server, user, hostile, session_id="s-other")
    paged = add(
        server, user, *(f"note number {i} about the garden" for i in range(5)), session_id="s-pages"
    )
    sign_in(page, server.url, server.keys["acme"])

    page.goto(f"{server.url}/ui/#/u/{user}/memories")
    page.wait_for_selector("#memory-table")
    assert page.locator("#memory-table tbody tr").count() == 6
    assert page.get_by_text(hostile).count() == 1  # shown literally...
    assert page.locator("#injected").count() == 0  # ...never parsed
    assert page.evaluate("window.pwned") is None

    page.select_option("#list-kind", "episodic")
    page.fill("#list-session", "s-pages")
    page.click("#list-form button")
    rows = page.locator("#memory-table tbody tr")
    expect(rows).to_have_count(5)
    page.fill("#list-text", "number 3")
    page.click("#list-form button")
    expect(rows).to_have_count(1)
    assert "note number 3" in page.inner_text("#memory-table tbody")

    # Cursor pages of two: 2 + 2 + 1, forward and back.
    page.goto(f"{server.url}/ui/#/u/{user}/memories?session_id=s-pages&limit=2")
    seen: list[str] = []
    for number in (1, 2, 3):
        page.wait_for_selector(f".pager:has-text('page {number}')")
        seen += page.locator("#memory-table tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.id)"
        )
        if number < 3:
            page.click("#page-next")
    assert seen == [m["id"] for m in paged]
    assert page.locator("#page-next").count() == 0
    page.click("#page-prev")
    page.wait_for_selector(".pager:has-text('page 2')")
    assert page.locator("#memory-table tbody tr").first.get_attribute("data-id") == paged[2]["id"]


# -- facts graph ---------------------------------------------------------------------------


def test_facts_graph_draws_an_entity_with_its_facts(server: Server, page: Page) -> None:
    user = "grapher"
    add(server, user, "My sister Anna lives in Porto")
    add(server, user, "Anna moved to Lisbon")
    add(server, user, "I work at Globex as a nurse")
    sign_in(page, server.url, server.keys["acme"])

    page.goto(f"{server.url}/ui/#/u/{user}/graph/Anna?depth=1&history=1")
    page.wait_for_selector("#graph")
    nodes = page.locator("#graph .node").evaluate_all("els => els.map(e => e.dataset.name)")
    assert {"Anna", "user", "Porto", "Lisbon"} <= set(nodes)
    assert page.locator("#graph a.node.centre").get_attribute("data-name") == "Anna"
    labels = page.locator("#graph .edge-label").all_text_contents()
    assert "sister" in labels and labels.count("lives_in") == 2
    # One home replaced the other: that fact is drawn dashed and listed with its end.
    assert page.locator("#graph line.edge.past").count() == 1
    rows = page.locator(".facts-table tbody tr").filter(has_text="lives_in")
    ended = rows.and_(page.locator("tr.past"))
    assert rows.count() == 2 and ended.count() == 1
    valid_to = [rows.nth(i).locator("td").nth(4).inner_text() for i in range(2)]
    assert sorted(v == "—" for v in valid_to) == [False, True]  # one ended, one holds
    assert "UTC" in ended.locator("td").nth(4).inner_text()
    api_facts = (
        server.as_("acme")
        .get(f"/v1/users/{user}/facts", params={"predicate": "lives_in", "include_history": True})
        .json()["facts"]
    )
    past = next(f for f in api_facts if not f["current"])
    assert past["object"] in ended.inner_text()

    page.locator("#graph a.node[data-name='user'] circle").click()  # opens its own graph
    page.wait_for_selector("#graph a.node.centre[data-name='user']")
    assert page.url.endswith(f"#/u/{user}/graph/user?depth=1&history=1")
    # A fact whose object is a plain value (the job) is drawn as a value box.
    assert page.locator("#graph .node.value[data-name='nurse']").count() == 1
    assert "job" in page.locator("#graph .edge-label").all_text_contents()

    page.goto(f"{server.url}/ui/#/u/{user}/graph/Nobody")
    error = page.locator("#error")
    error.wait_for(state="visible")
    assert "404" in error.inner_text()

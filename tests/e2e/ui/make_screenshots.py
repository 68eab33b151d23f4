"""Screenshots of the memory browser for docs/ui.md, at a fixed 1280x800 viewport.

Usage: ``.venv/bin/python tests/e2e/ui/make_screenshots.py [OUT_DIR]`` (default
``docs/screenshots``). Starts a multi-tenant server in a temporary directory with the
REST tests' harness, stores a small conversation for user ``alice`` through the API
(with a key), then drives headless Chromium (``/usr/bin/chromium``) through each page.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "server")]

from rest_server import Server, start_with_tenants  # noqa: E402
from ui_browser import chromium, missing, sign_in  # noqa: E402

USER = "alice"
CONVERSATION = [
    ("2024-03-02T09:15:00Z", "trip", "My sister Anna lives in Porto"),
    (
        "2024-03-02T09:16:00Z",
        "trip",
        "We are planning a trip to Portugal in September to visit Anna",
    ),
    ("2024-03-05T18:40:00Z", "daily", "I work at Globex as a data engineer"),
    ("2024-03-05T18:42:00Z", "daily", "My dog Rex loves the beach"),
    ("2024-04-11T08:05:00Z", "daily", "I prefer green tea over coffee in the morning"),
    ("2024-04-19T20:30:00Z", "daily", "I'm allergic to peanuts, please remember that"),
    ("2024-06-14T12:00:00Z", "trip", "Anna moved to Lisbon"),
    ("2024-06-14T12:03:00Z", "trip", "Booked a table at Tasca do Chico for Friday 8pm"),
    ("2024-07-01T07:55:00Z", "trip", "Remind me to renew my passport before the Lisbon trip"),
]


def seed(server: Server) -> dict[str, str]:
    """Store the conversation; returns content → memory id of the episodic records."""
    api = server.as_("acme")
    ids: dict[str, str] = {}
    for when, session, text in CONVERSATION:
        r = api.post(
            f"/v1/users/{USER}/memories",
            json={"content": text, "timestamp": when, "session_id": session,
                  "metadata": {"source": "chat", "channel": "mobile"}},
        )  # fmt: skip
        r.raise_for_status()
        ids[text] = r.json()["items"][0]["id"]
    job = ids["I work at Globex as a data engineer"]
    api.patch(
        f"/v1/users/{USER}/memories/{job}",
        json={"content": "I work at Globex as a senior data engineer", "importance": 0.8},
    ).raise_for_status()
    return ids


def shoot(server: Server, out: Path, ids: dict[str, str], profile: Path) -> list[Path]:
    made: list[Path] = []
    url = f"{server.url}/ui/"
    with chromium(profile) as browser:
        page = browser.new_page()

        def save(name: str, *, full_page: bool = False) -> None:
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=full_page)
            made.append(path)

        page.goto(url)
        page.wait_for_selector("#api-key")
        save("login")
        page.fill("#api-key", "msk_0000000000000000_wrong")
        page.click("#sign-in")
        page.wait_for_selector("#error:not([hidden])")
        save("error")

        sign_in(page, server.url, server.keys["acme"])
        page.goto(f"{url}#/u/{USER}/search?q=where+does+my+sister+live%3F&mode=hybrid&limit=10")
        page.wait_for_selector(".hit")
        save("search")

        page.goto(f"{url}#/u/{USER}/memories?limit=50")
        page.wait_for_selector("#memory-table")
        save("list")

        job = ids["I work at Globex as a data engineer"]
        page.goto(f"{url}#/u/{USER}/memory/{job}")
        page.wait_for_selector("#history-table")
        save("memory", full_page=True)  # the history is below the fold

        page.goto(f"{url}#/u/{USER}/graph/user?depth=2&history=1")
        page.wait_for_selector("#graph")
        save("graph")
    return made


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "docs" / "screenshots"
    why = missing()
    if why:
        print(f"cannot take screenshots: {why}", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mnemolayer-shots-") as tmp:
        server = start_with_tenants(Path(tmp))
        try:
            made = shoot(server, out, seed(server), Path(tmp) / "profile")
        finally:
            server.stop()
    for path in made:
        print(f"{path} {path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

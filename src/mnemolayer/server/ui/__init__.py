"""The web memory browser: a static single-page app served at ``/ui`` (``docs/ui.md``).

The page is plain HTML, CSS and JavaScript modules shipped in ``static/`` (no build step,
nothing fetched from a CDN). It calls the same ``/v1`` routes as any client, with the
API key the user types in (kept in the tab's ``sessionStorage``); the files themselves
need no key, since they hold no data.

Every response of the mount carries a strict Content-Security-Policy: scripts, styles
and API calls from this origin only, no inline script or style, no framing. The page
writes memory content with ``textContent`` only, so a stored ``<script>`` stays text.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import FastAPI
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["CONTENT_SECURITY_POLICY", "STATIC_DIR", "UI_PATH", "UIFiles", "mount_ui"]

#: Where the app's files are (package data).
STATIC_DIR = Path(__file__).parent / "static"

#: The URL path the browser is served under.
UI_PATH = "/ui"

#: Sent with every file of the UI. ``img-src data:`` is for the empty favicon only.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    # Revalidate (ETag) on every load, so an upgraded server serves its own UI at once.
    "Cache-Control": "no-cache",
}


class UIFiles(StaticFiles):
    """:class:`~starlette.staticfiles.StaticFiles` that adds the security headers above
    (CSP, ``nosniff``, no framing, no referrer) to every response it makes."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(_HEADERS)
        return response


def mount_ui(app: FastAPI) -> None:
    """Serve the memory browser at ``/ui/`` (``/ui`` redirects there); no key needed.

    JavaScript modules are served as ``text/javascript`` whatever the host's MIME table
    says, since browsers refuse a module of another type under ``nosniff``.
    """
    mimetypes.add_type("text/javascript", ".js")
    app.mount(UI_PATH, UIFiles(directory=STATIC_DIR, html=True), name="ui")

"""The REST routes, one module per area; :mod:`mnemolayer.server.rest.app` mounts them."""

from mnemolayer.server.rest.routes import admin, knowledge, lifecycle, memories, sessions

ROUTERS = (
    memories.router,
    lifecycle.router,
    knowledge.router,
    sessions.user_router,
    sessions.router,
    admin.router,
)

__all__ = ["ROUTERS"]

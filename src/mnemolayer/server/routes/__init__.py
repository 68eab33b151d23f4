"""The REST routes, one module per area; :mod:`mnemolayer.server.app` mounts them."""

from mnemolayer.server.routes import admin, knowledge, lifecycle, memories, sessions

ROUTERS = (
    memories.router,
    lifecycle.router,
    knowledge.router,
    sessions.user_router,
    sessions.router,
    admin.router,
)

__all__ = ["ROUTERS"]

"""Mem0-compatible REST routes (``/mem0``): point mem0ai's ``MemoryClient`` at this
server (``docs/integrations/mem0.md``)."""

from mnemolayer.server.rest.mem0.routes import PREFIX, router

__all__ = ["PREFIX", "router"]

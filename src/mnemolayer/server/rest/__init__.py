"""The REST server (FastAPI): tenants, keys, routes, scheduler."""

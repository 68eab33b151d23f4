"""The REST server: mnemolayer over HTTP, with tenants and API keys.

``mnemolayer serve`` runs :func:`create_app` under uvicorn. Every route is a thin call to
one :class:`~mnemolayer.Memory` method (``docs/rest.md`` lists them with curl examples;
``/openapi.json`` is the machine-readable schema).

Tenants
-------
A tenant is a separate memory store: one SQLite file per tenant,
``<data_dir>/tenants/<tenant>/memory.db``, or (``serve --database URL``) the tenant's rows
of one PostgreSQL database, which row-level security keeps apart from every other
tenant's, so that several replicas serve the same tenants (``docs/multi-tenant.md``;
:mod:`mnemolayer.server.rest.tenants`). A request is served from the store of the
tenant its API key belongs to and from no other, so a key of tenant A cannot reach
tenant B's data at all: B's memory ids are unknown in A's store (404), B's users are
empty users there. Tenant names are 1-63 characters of ``a-z``, ``0-9``, ``_`` and
``-`` (they are directory names). Stores open on a tenant's first request, stay open,
and close when the server shuts down; all of them share one embedding model and one fact
extractor, loaded once per server process.

Within a tenant, ``user_id`` scopes every memory as in the Python API; all user routes
live under ``/v1/users/{user_id}/...``.

API keys
--------
``mnemolayer keys create --data-dir DIR --tenant T [--user U ...] [--admin] [--name N]``
(or ``--operator`` instead of ``--tenant``) prints a key once: ``msk_<id>_<secret>``, a
32-byte random secret. ``<data_dir>/keys.db`` keeps only its SHA-256 (compared with
:func:`hmac.compare_digest`), the tenant, the bound users, the admin and operator
flags, a name, ``created_at``, ``last_used_at`` (updated at most once a minute) and
``revoked_at``. ``mnemolayer keys list`` and ``mnemolayer keys revoke
ID`` manage them; a revoked key fails at once, also in a running server.

Clients send the key as ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``:

* no key, an unknown, malformed or revoked key → **401**;
* a key bound to user ids (``--user``, repeatable) may only touch those users; any other
  ``user_id`` → **403** naming ``user_id``, and tenant-wide routes (``/v1/stats``) → 403;
* a **tenant-admin** key (``--admin``) also creates, lists and revokes the keys of its
  own tenant over ``/v1/admin/keys`` (another tenant's keys are unknown to it: 404;
  naming another tenant: 403). Its data access is that of an ordinary key of its tenant;
* the **operator** key (``--operator``) belongs to no tenant: it manages every tenant
  and key (a key for a new tenant makes the tenant), reads every tenant's stats
  (``/v1/admin/tenants``), and reaches no tenant's memories (403).

Modes
-----
* ``mnemolayer serve --data-dir DIR``: multi-tenant; every ``/v1`` route needs a key.
* ``mnemolayer serve --database URL [--sessions redis://...]``: multi-tenant on
  PostgreSQL, keys in its ``api_keys`` table (:mod:`mnemolayer.server.rest.pgkeys`),
  windows in Redis; any number of replicas.
* ``mnemolayer serve --db FILE`` (the default, on the ``--db`` store): single-user mode;
  one store (tenant ``"default"``), no keys, no auth; it binds loopback only and refuses
  another host unless ``--insecure-no-auth`` is given. ``--data-dir DIR
  --insecure-no-auth`` likewise serves tenant ``"default"`` without keys.

Maintenance
-----------
``POST /v1/users/{user_id}/maintain`` runs one maintenance pass over one user's
memories. ``mnemolayer serve --maintain-every 6h`` (``ServerSettings.maintain_every_s``)
also runs one over every tenant with a store at that interval, in a background thread
(:mod:`mnemolayer.server.rest.scheduler`).

Errors
------
Every error is a JSON body ``{"error": {"type", "message", "field"}}`` (``field`` names
the offending input when there is one; request-validation errors also list every
problem under ``"errors"``), never a traceback:

====  ======================  ===========================================================
400   usage_error             a request the library rejects without naming a field
401   unauthorized            missing, unknown or revoked key
403   forbidden               key bound to other users, not an admin (or operator) key,
                              or the operator's key on a memory route
404   not_found               no such memory, entity, window message or route
405   method_not_allowed      the route exists, the method does not
409   embedding_mismatch      the tenant's store was built with another embedding model
413   payload_too_large       body over ``max_body_bytes`` (default 1 MiB)
422   validation_error        bad input; ``field`` names it (``limit``, ``messages[0].content``)
422   scope_required          a call that needs ``user_id`` got none
503   store_busy              the store stayed locked past its retry budget
500   store_error / internal  the store or the model failed (details go to the server log)
====  ======================  ===========================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemolayer.server.rest.keys import ApiKey, KeyStore
from mnemolayer.server.rest.settings import ServerSettings, require_server_extra

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["ApiKey", "KeyStore", "ServerSettings", "create_app"]


def create_app(settings: ServerSettings) -> FastAPI:
    """The ASGI application (FastAPI) for ``settings``; see :mod:`mnemolayer.server`.

    Stores, keys and the embedding model open when the application starts (its lifespan)
    and close when it stops.

    Raises:
        UsageError: FastAPI is not installed (``pip install -e '.[server]' in the mnemolayer checkout``).
    """
    require_server_extra()
    from mnemolayer.server.rest.app import build_app

    return build_app(settings)

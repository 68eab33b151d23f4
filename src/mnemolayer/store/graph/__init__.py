"""The knowledge graph of semantic memory, stored in the store's database next to the records.

Four tables (schema migration 3), every row keyed by ``user_id`` first:

- ``entities``: one row per person, place, organisation, pet or thing a user's memory
  knows, unique by normalised name (:func:`normalize_name`) within the user.
- ``entity_aliases``: other names that resolve to an entity ("Lena" for the user after
  "my name is Lena"); an alias belongs to at most one entity of a user.
- ``facts``: subject–predicate–object triples with bi-temporal validity: ``valid_from`` /
  ``valid_to`` (when it held in the world) and ``created_at`` / ``expired_at`` (when the
  store recorded it and when it stopped being current). ``object_id`` is set when the
  object is itself an entity; those facts are the edges that :meth:`GraphStore.neighbors`
  walks.
- ``fact_sources`` mirrors each fact's ``source_ids`` as ``(user_id, source_id, fact_id,
  stated_at)`` rows, so "which facts came from these memories" is an index lookup rather
  than a scan of every fact's JSON, and each source keeps the time it said the fact held
  from (which places facts that arrive out of order).

Facts are never rewritten to say something else: conflict resolution
(:mod:`mnemolayer.lifecycle.conflicts`) only moves the ends of validity intervals (or cuts
one in two) and links the fact that replaced them. They are deleted only when every memory they were extracted from is
deleted (:meth:`GraphStore.remove_sources`) or the whole user is (:meth:`delete_user`).

Reads go through the store's read path (a shared lock, retried while another process
writes); writes take the connection ``c`` of an open ``store.transact(fn)`` transaction,
so records and facts change together or not at all. Times are stored as fixed-width UTC
ISO-8601 strings (see :func:`mnemolayer.store.rows.iso`), so text order is time
order.
"""

from __future__ import annotations

from mnemolayer.store.graph.base import normalize_name
from mnemolayer.store.graph.facts import GraphFacts
from mnemolayer.store.graph.forget import GraphForget, SourceRemoval
from mnemolayer.store.graph.queries import GraphQueries
from mnemolayer.store.graph.traverse import MAX_DEPTH, GraphTraverse

__all__ = ["MAX_DEPTH", "GraphStore", "SourceRemoval", "normalize_name"]


class GraphStore(GraphFacts, GraphQueries, GraphTraverse, GraphForget):
    """Entities, aliases and bi-temporal facts of every user, in a store
    (:class:`~mnemolayer.store.base.SQLStore`).

    Args:
        store: an open store (its schema includes migration 3).

    Write methods take ``c``, the connection of a transaction opened with
    ``store.transact(fn)``; they never commit. Read methods use the store's read path.
    Methods taking ``c_or_None`` read inside the transaction when given one (to see its
    uncommitted writes), else through the read path.
    """

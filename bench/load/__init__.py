"""``python -m bench load``: simulated agents against N replicas of the REST server.

The command starts ``--replicas`` processes of ``mnemolayer serve`` on one store
(``--store``: a fresh SQLite data directory with a key per tenant, or PostgreSQL; see
:mod:`bench.load.servers`), then runs ``--agents`` locust users against them, headless,
for ``--duration``. Each agent speaks for one of ``--tenants`` × ``--users`` users and
adds memories (one turn, or a batch of turns), searches, asks for token-budgeted contexts
and keeps a working-memory window, with think times between requests
(:mod:`bench.load.agents`); requests go round robin over the replicas. The text is a
LoCoMo-format file's turns and questions (``--data``; default the sample conversation
bundled with mnemolayer).

The result (:func:`bench.load.run.run_load`): failed requests (a run with any fails),
p50/p95/p99 per operation, requests per second, the servers' resident memory and CPU
over time, the load average at the start and end, and a chart
(:func:`bench.load.report.plot_load`). locust is imported only when a run starts: it
patches the standard library for gevent.
"""

from __future__ import annotations

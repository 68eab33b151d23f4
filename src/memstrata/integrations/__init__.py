"""Adapters that plug memstrata into agent frameworks.

Each adapter lives in its own module and imports its framework there, so importing
this package needs nothing extra:

* :mod:`memstrata.integrations.langgraph`: :class:`MemstrataStore`, a LangGraph
  ``BaseStore`` (``pip install -e '.[langgraph]' in the memstrata checkout``).
"""

"""Adapters that plug mnemolayer into agent frameworks.

Each adapter lives in its own module and imports its framework there, so importing
this package needs nothing extra:

* :mod:`mnemolayer.integrations.langgraph`: :class:`MnemolayerStore`, a LangGraph
  ``BaseStore`` (``pip install -e '.[langgraph]' in the mnemolayer checkout``);
* :mod:`mnemolayer.integrations.langchain`: :class:`MnemolayerChatMessageHistory` (working
  memory) and :class:`MnemolayerRetriever` (hybrid recall) for LangChain
  (``pip install -e '.[langchain]'``);
* :mod:`mnemolayer.integrations.openai_agents`: :class:`MnemolayerSession` (an OpenAI
  Agents SDK ``Session`` in working memory) and :func:`recall_tool`
  (``pip install -e '.[openai-agents]'``);
* :mod:`mnemolayer.integrations.pydantic_ai`: :func:`memory_toolset` (``remember``,
  ``recall``, ``forget``) and :class:`MemoryHistoryProcessor` for Pydantic AI
  (``pip install -e '.[pydantic-ai]'``);
* :mod:`mnemolayer.integrations.crewai`: :class:`MnemolayerStorage`, a CrewAI 1.x memory
  ``StorageBackend`` (``pip install -e '.[crewai]'``).
"""

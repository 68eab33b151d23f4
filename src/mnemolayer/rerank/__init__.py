"""Rerankers for recall's optional reranking step (:class:`mnemolayer.protocols.Reranker`):
an HTTP ``/rerank`` endpoint (:mod:`mnemolayer.rerank.http`) or a local sentence-transformers
cross-encoder (:mod:`mnemolayer.rerank.cross_encoder`), resolved by
:func:`mnemolayer.registry.get_reranker`. Nothing here is imported unless one is asked for.
"""

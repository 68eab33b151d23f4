"""mnemolayer's benchmarks: retrieval (LoCoMo, MemoryBank), context assembly, fact
extraction, PII detection, near-duplicate merging, forgetting, the simulated lifecycle,
encryption cost and scale.

Not part of the ``mnemolayer`` wheel: run them from the root of a source checkout,
``python -m bench --help`` (see ``bench/README.md``). They use the library through its
public modules (``from mnemolayer... import ...``), as any user would.
"""

"""The OpenAI-compatible chat client and JSON repair shared by the LLM-backed parts."""

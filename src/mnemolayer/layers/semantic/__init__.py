"""Semantic memory: facts, entities and the user profile, as the facade serves them."""

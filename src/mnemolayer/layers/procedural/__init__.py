"""Procedural (reflective) memory: outcomes of strategies, what worked, what to avoid."""

"""Episodic memory: what happened, when, who said it."""

"""Working memory: the live session window under a token budget, and its sessions."""

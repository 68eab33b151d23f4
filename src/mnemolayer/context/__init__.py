"""Context assembly: what the next model call needs, packed under a token budget."""

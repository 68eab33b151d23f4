"""Text processing shared by every layer: keyword terms, token counting."""

"""``python -m memstrata`` runs the CLI."""

from .cli import main

main()

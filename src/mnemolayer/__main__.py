"""``python -m mnemolayer`` runs the CLI."""

from .cli import main

main()

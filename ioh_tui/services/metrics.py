"""CPU and memory of the commands the sandbox is running (children of this process), via psutil.

Sampling walks the process table, so callers run it off the event loop (`asyncio.to_thread`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psutil


@dataclass(frozen=True, slots=True)
class ProcessSample:
    """One running process under ours."""

    pid: int
    name: str
    command: str
    cpu_percent: float
    """Share of one core over the sampling interval (above 100 on several cores)."""
    rss_mb: float
    """Resident memory, in MiB."""
    age_s: float = 0.0
    """Seconds since the process started."""


def sample_processes(parent: int | None = None, *, interval_s: float = 0.1) -> list[ProcessSample]:
    """Every live descendant of `parent` (default: this process) with its CPU share and memory.

    CPU is measured over `interval_s` (blocking: call it in a thread). Zombies (exited, not yet
    reaped by the sandbox) are left out: they no longer run.
    """
    try:
        root = psutil.Process(parent)
        procs = root.children(recursive=True)
    except psutil.Error:
        return []
    for proc in procs:
        try:
            proc.cpu_percent(None)
        except psutil.Error:
            continue
    psutil.cpu_percent(interval=interval_s)  # one wait for all of them
    out = []
    for proc in procs:
        try:
            with proc.oneshot():
                if proc.status() == psutil.STATUS_ZOMBIE:
                    continue
                out.append(
                    ProcessSample(
                        proc.pid,
                        proc.name(),
                        " ".join(proc.cmdline())[:200],
                        proc.cpu_percent(None),
                        proc.memory_info().rss / 2**20,
                        max(0.0, time.time() - proc.create_time()),
                    )
                )
        except psutil.Error:
            continue
    return out

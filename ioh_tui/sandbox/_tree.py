"""Process-tree bookkeeping for one command: resource samples and a kill that leaves nothing behind.

Blocking (reads /proc); the runner calls it through `asyncio.to_thread`, except on the
cancellation path, where killing synchronously is the point.

Every sample and every kill round reads the process table once (`_scan`) and walks it from the
leader and from every process seen before, so the cost is linear in the number of processes.
The first version asked psutil for each known process's descendants, which rescans /proc once per
process ever seen: a 3 s cap on a 1,023-process tree returned after 25 s under bwrap and 34 s on
the floor (issue 18, item 6; benchmarks/bench_sandbox_teardown.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import psutil

_KILL_ROUNDS = 8
"""A process can fork between our snapshot and our SIGKILL; each round kills what the previous
round's victims managed to start. Killed processes cannot fork, so a few rounds always converge."""

TREE_SCAN_MAX = 64
"""A sample reads the tree's own processes while the last one found at most this many; a larger
tree is sampled from the whole table, as before: a tree process costs two reads (its stat and
its children) against one in the table's scan (401 processes: 33 ms of CPU against 25)."""

_ROUND_PAUSE_S = 0.005
"""SIGKILL is delivered asynchronously: give the victims a moment to die before the next scan."""

_LINUX = sys.platform.startswith("linux")
_CHILDREN = _LINUX and os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
"""Whether the kernel lists each thread's children (CONFIG_PROC_CHILDREN): a sample then reads
the tree's processes alone; otherwise the whole process table, as the kill always does."""


@dataclass(frozen=True, slots=True)
class _Row:
    ppid: int
    start: float
    """Creation time (seconds since the epoch); with the pid, the identity of a process."""
    zombie: bool
    usage: tuple[int, float] | None = None
    """(RSS bytes, CPU seconds with reaped children's) from the same read of /proc/PID/stat, so
    a sample reads each process once; None where psutil answers instead (not Linux)."""
    threads: int = 1


@dataclass(slots=True)
class _Clock:
    boot: float = 0.0
    hz: int = 100
    page: int = 4096


_clock = _Clock()
if _LINUX:
    with contextlib.suppress(OSError, ValueError, psutil.Error):
        _clock.boot = psutil.boot_time()
        _clock.hz = os.sysconf("SC_CLK_TCK")
        _clock.page = os.sysconf("SC_PAGE_SIZE")


def _scan() -> dict[int, _Row]:
    """The whole process table in one pass: pid to (parent, creation time, zombie)."""
    if not _LINUX:
        return _scan_psutil()
    table: dict[int, _Row] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (row := _scan_pid(int(name))) is not None:
            table[int(name)] = row
    return table


def _scan_tree(roots: Iterable[int]) -> dict[int, _Row]:
    """The rows of `roots` and of all their descendants, reading only their own /proc entries.

    Each process's children are listed by the kernel (`/proc/PID/task/TID/children`, one file
    a thread), so a sample costs the tree's size, not the machine's: the whole table was 111
    processes here, 4.6 ms of CPU a sample under load (docs/performance.md). A process started
    or ended while the files are read can be missed by one sample and is seen by the next; a
    kill reads the tree this way only under a PID namespace, and again each round until nothing
    is left (`ProcessTree._kill_table`).
    """
    table: dict[int, _Row] = {}
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid in table or (row := _scan_pid(pid)) is None:
            continue
        table[pid] = row
        stack += _children(pid, row.threads)
    return table


def _children(pid: int, threads: int) -> list[int]:
    """The pids of `pid`'s children, from each of its `threads` threads' `children` file."""
    try:
        # One thread (nearly every process): its id is the pid, no directory to list.
        tids = [str(pid)] if threads == 1 else os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as listed:
                out += map(int, listed.read().split())
        except OSError:
            continue
    return out


def _scan_psutil() -> dict[int, _Row]:
    table: dict[int, _Row] = {}
    for proc in psutil.process_iter(["ppid", "create_time", "status"]):
        info = proc.info
        if info["ppid"] is None or info["create_time"] is None:
            continue
        zombie = info["status"] == psutil.STATUS_ZOMBIE
        table[proc.pid] = _Row(info["ppid"], info["create_time"], zombie)
    return table


def _same(row: _Row | None, start: float) -> bool:
    """The pid still names the process we saw (its creation time matches within a tick)."""
    return row is not None and abs(row.start - start) < 0.05


class ProcessTree:
    """The leader, its descendants, and every descendant ever seen (escapees keep counting)."""

    def __init__(
        self,
        leader_pid: int,
        marker: tuple[str, str] | None,
        *,
        wrapped: bool = False,
        reaper: bool = False,
    ) -> None:
        """Start tracking.

        Args:
            leader_pid: the process we spawned (its own session and process group).
            marker: (variable, token) placed in the command's environment, used at kill time to
                find descendants that left the tree before any sample saw them; None when a PID
                namespace already guarantees that nothing outlives the leader's namespace.
            wrapped: the leader and its direct children are the backend's wrapper (bwrap and its
                namespace init, or unshare and the launcher); their memory is not the command's.
                Killing those children ends the PID namespace, and with it the whole tree.
            reaper: the leader is the floor's subreaper: every orphan of the command is
                reparented to it, so it is killed only once nothing else of the tree is left
                (an orphan of a later death would otherwise go to init, out of the tree).
        """
        self.leader_pid = leader_pid
        self._marker = marker
        self._wrapped = wrapped
        self._reaper = reaper
        self._since = time.time() - 1.0
        self._seen: dict[int, float] = {}
        """pid to creation time of every process ever found in the tree (the leader included)."""
        self._procs: dict[int, psutil.Process] = {}
        self._lock = threading.Lock()
        """Guards `_seen` and `_procs`: a sample still running in its thread can overlap the
        final kill's."""
        row = _scan_one(leader_pid)
        if row is not None:
            self._seen[leader_pid] = row.start
        self.peak_rss = 0
        """Largest summed RSS (bytes) of the live tree in any sample."""
        self.cpu_s = 0.0
        """Largest summed CPU time (user + system, seconds) of the tree in any sample."""
        self._last_count = 0
        """Live processes of the tree at the last sample (`TREE_SCAN_MAX`)."""

    def _walk(self, table: dict[int, _Row]) -> list[int]:
        """Live pids of the tree in `table`: descendants of the leader and of every one seen."""
        children: defaultdict[int, list[int]] = defaultdict(list)
        for pid, row in table.items():
            children[row.ppid].append(pid)
        with self._lock:
            roots = [pid for pid, start in self._seen.items() if _same(table.get(pid), start)]
        found: set[int] = set()
        stack = list(roots)
        while stack:
            pid = stack.pop()
            if pid in found:
                continue
            found.add(pid)
            stack.extend(children.get(pid, ()))
        with self._lock:
            for pid in found:
                self._seen.setdefault(pid, table[pid].start)
        return [pid for pid in found if not table[pid].zombie]

    def members(self) -> list[psutil.Process]:
        """Live processes of the tree: the leader's descendants plus every one seen before."""
        return self._processes(self._walk(_scan()))

    def _processes(self, pids: Iterable[int]) -> list[psutil.Process]:
        out: list[psutil.Process] = []
        with self._lock:
            for pid in pids:
                proc = self._procs.get(pid)
                if proc is None:
                    try:
                        proc = psutil.Process(pid)
                    except psutil.Error:
                        continue
                    self._procs[pid] = proc
                out.append(proc)
        return out

    def measure(self) -> tuple[int, float, int]:
        """Refresh the member set; (RSS bytes, CPU seconds, live processes) of the tree.

        CPU adds each live member's reaped-children times, so work done by descendants that
        already exited (and were waited for inside the tree) still counts against the cap.
        The wrappers' memory and the wrappers themselves are not the command's.
        """
        if _CHILDREN and self._last_count <= TREE_SCAN_MAX:
            with self._lock:
                roots = list(self._seen)
            table = _scan_tree(roots)
        else:
            table = _scan()
        pids = self._walk(table)
        wrappers = self._wrappers(table)
        rss = 0
        cpu = 0.0
        on_psutil = []
        for pid in pids:
            usage = table[pid].usage
            if usage is None:
                on_psutil.append(pid)
                continue
            if pid not in wrappers:
                rss += usage[0]
            cpu += usage[1]
        for proc in self._processes(on_psutil):
            try:
                with proc.oneshot():
                    if proc.pid not in wrappers:
                        rss += proc.memory_info().rss
                    times = proc.cpu_times()
            except psutil.Error:
                continue
            cpu += times.user + times.system + times.children_user + times.children_system
        self.peak_rss = max(self.peak_rss, rss)
        self.cpu_s = max(self.cpu_s, cpu)
        self._last_count = len(pids)
        return rss, cpu, len([p for p in pids if p not in wrappers])

    def _wrappers(self, table: dict[int, _Row]) -> set[int]:
        if self._reaper:
            return {self.leader_pid}
        if not self._wrapped:
            return set()
        return {self.leader_pid, *self._namespace_inits(table)}

    def _namespace_inits(self, table: dict[int, _Row]) -> list[int]:
        """The leader's direct children: PID 1 of the namespace under bwrap and unshare."""
        leader = table.get(self.leader_pid)
        if leader is None or not _same(leader, self._seen.get(self.leader_pid, -1.0)):
            return []
        return [pid for pid, row in table.items() if row.ppid == self.leader_pid]

    def _marked(self, table: dict[int, _Row], known: set[int]) -> list[int]:
        if self._marker is None:
            return []
        key, token = self._marker
        needle = f"{key}={token}".encode()
        own = os.getpid()
        out: list[int] = []
        for pid, row in table.items():
            if pid in known or pid == own or row.start < self._since or row.zombie:
                continue
            if needle in _environ(pid):
                out.append(pid)
        return out

    def _kill_table(self) -> dict[int, _Row]:
        """The rows a kill round walks: the tree's own, where nothing can have left it.

        Under a PID namespace (`wrapped`, no marker) every process of the command is in the
        namespace and a descendant of its PID 1, itself a child of the leader; an orphan is
        reparented to that PID 1. Walking from the leader and every process seen finds them
        all, as the whole table would. Only a rung without that (the floor, `none`) needs the
        whole table, to look for the marker of a daemon that left the tree. The whole table was
        4–7 ms of each command's teardown here (111–150 processes), the tree's own a few reads;
        a tree the last sample found large is read whole, as a sample does (`TREE_SCAN_MAX`).
        """
        small = self._last_count <= TREE_SCAN_MAX
        if _CHILDREN and small and self._wrapped and self._marker is None:
            with self._lock:
                roots = list(self._seen)
            return _scan_tree(roots)
        return _scan()

    def kill_all(self) -> None:
        """SIGKILL the whole tree, escapees included, until nothing of it is left alive."""
        table = self._kill_table()
        if self._wrapped:
            # The namespace's PID 1 dying makes the kernel kill everything in the namespace in
            # one step, however many processes it holds.
            for pid in self._namespace_inits(table):
                _kill(pid)
        for round_ in range(_KILL_ROUNDS):
            if round_:
                time.sleep(_ROUND_PAUSE_S * round_)
                table = self._kill_table()
            victims = self._walk(table)
            victims += self._marked(table, set(victims))
            if not victims:
                return
            spare = self._reaper and len(victims) > 1
            if spare:
                # The subreaper last (and so no group kill, which would take it too): while it
                # lives, whatever a victim forks before dying stays in the tree.
                victims = [pid for pid in victims if pid != self.leader_pid]
            # The group kill is atomic for everything still in the leader's group, so a forking
            # loop in that group cannot outrun the per-process kills below. Only while one of
            # ours is in it: otherwise the number may name someone else's group by now.
            if not spare and any(_pgid(pid) == self.leader_pid for pid in victims):
                with contextlib.suppress(OSError):
                    os.killpg(self.leader_pid, signal.SIGKILL)
            for pid in victims:
                with self._lock:
                    self._seen.setdefault(pid, table[pid].start)
                _kill(pid)


def _scan_one(pid: int) -> _Row | None:
    if _LINUX:
        return _scan_pid(pid)
    try:
        proc = psutil.Process(pid)
        return _Row(proc.ppid(), proc.create_time(), proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return None


def _scan_pid(pid: int) -> _Row | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return None
    # The command name is in parentheses and may contain anything, so split after the last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 22:
        return None
    # proc(5): utime, stime, cutime, cstime (ticks) and rss (pages); what psutil's cpu_times()
    # and memory_info().rss report, read from this one file instead of two more.
    ticks = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return _Row(
        int(fields[1]),
        _clock.boot + int(fields[19]) / _clock.hz,
        fields[0] in (b"Z", b"X"),
        (int(fields[21]) * _clock.page, ticks / _clock.hz),
        int(fields[17]),
    )


def _environ(pid: int) -> bytes:
    if _LINUX:
        try:
            with open(f"/proc/{pid}/environ", "rb") as env:
                return b"\0" + env.read()
        except OSError:
            return b""
    try:
        pairs = psutil.Process(pid).environ()
    except psutil.Error:
        return b""
    return b"\0" + b"\0".join(f"{k}={v}".encode() for k, v in pairs.items())


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None

"""Process-tree bookkeeping for one command: resource samples and a kill that leaves nothing behind.

Blocking (reads /proc); the runner calls it through `asyncio.to_thread`, except on the
cancellation path, where killing synchronously is the point.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import psutil

_KILL_ROUNDS = 8
"""A process can fork between our snapshot and our SIGKILL; each round kills what the previous
round's victims managed to start. Killed processes cannot fork, so a few rounds always converge."""


def _alive(proc: psutil.Process) -> bool:
    try:
        # is_running() also compares the creation time, so a reused pid never counts as ours.
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class ProcessTree:
    """The leader, its descendants, and every descendant ever seen (escapees keep counting)."""

    def __init__(
        self, leader_pid: int, marker: tuple[str, str] | None, *, wrapped: bool = False
    ) -> None:
        """Start tracking.

        Args:
            leader_pid: the process we spawned (its own session and process group).
            marker: (variable, token) placed in the command's environment, used at kill time to
                find descendants that left the tree before any sample saw them; None when a PID
                namespace already guarantees that nothing outlives the leader's namespace.
            wrapped: the leader and its direct children are the backend's wrapper (bwrap and its
                namespace init, or unshare and the launcher); their memory is not the command's.
        """
        self.leader_pid = leader_pid
        self._marker = marker
        self._wrapped = wrapped
        self._since = time.time() - 1.0
        self._seen: dict[int, psutil.Process] = {}
        self._lock = threading.Lock()
        """Guards `_seen`: a sample still running in its thread can overlap the final kill's."""
        try:
            self._leader: psutil.Process | None = psutil.Process(leader_pid)
        except psutil.Error:
            self._leader = None
        self.peak_rss = 0
        """Largest summed RSS (bytes) of the live tree in any sample."""
        self.cpu_s = 0.0
        """Largest summed CPU time (user + system, seconds) of the tree in any sample."""

    def members(self) -> list[psutil.Process]:
        """Live processes of the tree: the leader's descendants plus every one seen before."""
        found: dict[int, psutil.Process] = {}
        roots: list[psutil.Process] = []
        if self._leader is not None and _alive(self._leader):
            roots.append(self._leader)
        with self._lock:
            seen = list(self._seen.values())
        roots.extend(p for p in seen if _alive(p))
        for root in roots:
            found[root.pid] = root
            with contextlib.suppress(psutil.Error):
                for child in root.children(recursive=True):
                    found.setdefault(child.pid, child)
        with self._lock:
            for pid, proc in found.items():
                if pid != self.leader_pid:
                    self._seen.setdefault(pid, proc)
        return [p for p in found.values() if _alive(p)]

    def sample(self) -> tuple[int, float]:
        """Refresh the member set and return (RSS bytes, CPU seconds) of the tree.

        CPU adds each live member's reaped-children times, so work done by descendants that
        already exited (and were waited for inside the tree) still counts against the cap.
        """
        rss = 0
        cpu = 0.0
        wrappers = self._wrappers()
        for proc in self.members():
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
        return rss, cpu

    def _wrappers(self) -> set[int]:
        if not self._wrapped or self._leader is None:
            return set()
        try:
            return {self.leader_pid, *(c.pid for c in self._leader.children())}
        except psutil.Error:
            return {self.leader_pid}

    def _marked(self, known: set[int]) -> list[psutil.Process]:
        if self._marker is None:
            return []
        key, token = self._marker
        own = os.getpid()
        out: list[psutil.Process] = []
        for proc in psutil.process_iter(["create_time"]):
            if proc.pid in known or proc.pid == own:
                continue
            try:
                if proc.info["create_time"] < self._since:
                    continue
                if proc.environ().get(key) == token:
                    out.append(proc)
            except psutil.Error:
                continue
        return out

    def kill_all(self) -> None:
        """SIGKILL the whole tree, escapees included, until nothing of it is left alive."""
        for _ in range(_KILL_ROUNDS):
            victims = self.members()
            victims += self._marked({p.pid for p in victims})
            # The group kill is atomic for everything still in the leader's group, so a forking
            # loop in that group cannot outrun the per-process kills below.
            if any(_pgid(p) == self.leader_pid for p in victims):
                with contextlib.suppress(OSError):
                    os.killpg(self.leader_pid, signal.SIGKILL)
            alive = [p for p in victims if _alive(p)]
            if not alive:
                return
            for proc in alive:
                with self._lock:
                    self._seen.setdefault(proc.pid, proc)
                with contextlib.suppress(psutil.Error):
                    proc.kill()


def _pgid(proc: psutil.Process) -> int | None:
    try:
        return os.getpgid(proc.pid)
    except OSError:
        return None

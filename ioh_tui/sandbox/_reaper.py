"""Subreaper for the floor and `none`: `python -I -S _reaper.py -- ARGV`.

Standalone on purpose (standard library only, no ioh_tui import), like `_ns_launcher.py`. Without
a PID namespace, a daemon (fork, setsid, fork, exec) leaves the command's process tree: it is
reparented to init, and a daemon that also clears its environment carries no marker teardown could
find (issue 18, item 13). This process marks itself a child subreaper
(`prctl(PR_SET_CHILD_SUBREAPER)`), so every orphan of the command is reparented to it instead and
stays inside the tree the supervisor walks. It:

1. forks the payload, which restores the default action of the signals Python ignores (SIGPIPE,
   SIGXFSZ), sets the parent-death signal (so it dies with this process) and execs ARGV (never
   through a shell);
2. reaps every child until the payload exits;
3. SIGKILLs whatever the payload left behind (all of it is now its child or below one), until
   it has no children left;
4. ends the way the payload ended: the same exit status, or the same signal.

A payload that cannot be executed exits 127 with one line on stderr starting `ioh-sandbox: exec`.

It starts once per command, so it imports as little as it can: `_signal` (the C module behind
`signal`, without the enum wrappers that cost as much again as the interpreter's own start) and
no `typing` or `contextlib`. It took 28 ms more than `python -I -S -c pass` to run `true`
here; 6 ms more since.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (no stubs: see the module docstring)
import ctypes
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

EXEC_FAILED = 127
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1


def _children() -> list[int]:
    me = os.getpid()
    try:
        with open(f"/proc/self/task/{me}/children") as listing:
            return [int(pid) for pid in listing.read().split()]
    except OSError:
        pass
    # Kernels without CONFIG_PROC_CHILDREN: the parent field of every process.
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                raw = stat.read()
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def _sweep() -> None:
    """Kill every child (orphans arrive as children) and reap, until none is left."""
    while True:
        children = _children()
        if not children:
            return
        for pid in children:
            try:  # noqa: SIM105 (contextlib is not imported here: see the module docstring)
                os.kill(pid, _signal.SIGKILL)
            except OSError:
                pass
        for _ in children:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break
            except InterruptedError:
                continue


def _payload(argv: list[str], libc: ctypes.CDLL, reaper: int) -> NoReturn:
    for sig in (_signal.SIGPIPE, _signal.SIGXFSZ):
        _signal.signal(sig, _signal.SIG_DFL)
    # The harness's death signal reaches this process (its leader) only: pass it on, so a
    # long-lived payload (an MCP server) does not outlive a harness that was SIGKILLed.
    libc.prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
    if os.getppid() != reaper:
        os._exit(EXEC_FAILED)  # the subreaper died before the signal was set
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"ioh-sandbox: exec {argv[0]}: {exc.strerror or exc}\n")
        sys.stderr.flush()
    os._exit(EXEC_FAILED)


def _wait_for(child: int) -> int:
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        if pid == child:
            return status


def main() -> None:
    """Run the payload as a subreaper; sweep what it left; end as it ended."""
    argv = sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.stderr.write("ioh-sandbox: cannot become a subreaper\n")
    # Our own output must never be what stops us: the payload has the pipes too.
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)
    me = os.getpid()
    child = os.fork()
    if child == 0:
        _payload(argv, libc, me)
    status = _wait_for(child)
    _sweep()
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (_signal.SIGKILL, _signal.SIGSTOP):
            _signal.signal(sig, _signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # a signal whose default action is to ignore it
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()

"""Issue 18, item 9: on the floor and `none`, a command cannot read the harness's keys.

Each test starts a small harness process with a fake key in its environment, as an unprivileged
user when the suite runs as root (root reads any process's environment: docs/security.md says
so). The harness runs one command in the sandbox asked for, which reads the harness's
`/proc/<pid>/environ` and prints its own environment. Neither shows the key: the harness made
itself non-dumpable, and the key variables are not passed on (`none` passes everything else).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import ioh_tui
from ioh_tui.sandbox import probe

KEY = "sk-test-ENVIRONCANARY-0123456789abcdef"
NOBODY = 65534
SYSTEM = "/usr/local/bin:/usr/bin:/bin"
HARNESS = """
import asyncio, os, sys
from pathlib import Path
from ioh_tui.sandbox import select

async def main() -> None:
    script = f"cat /proc/{os.getpid()}/environ; echo; echo ENV; env"
    result = await select(sys.argv[1]).run(["sh", "-c", script], Path(sys.argv[2]))
    sys.stdout.write(result.stdout + result.stderr)

asyncio.run(main())
"""
ROOT = os.geteuid() == 0
# As root the harness runs as nobody, from an interpreter nobody may run, finding this checkout
# and its installed packages by path (the suite's own interpreter may sit in root's home).
IMPORTS = os.pathsep.join(
    [str(Path(ioh_tui.__file__).parents[1]), sysconfig.get_paths()["purelib"]]
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def _unprivileged() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    if ROOT:
        env = {**env, "PYTHONPATH": IMPORTS}
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        preexec_fn=_unprivileged if ROOT else None,
    )


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A directory the harness can work in (pytest's own are closed to other users)."""
    with tempfile.TemporaryDirectory(dir="/tmp") as made:
        os.chmod(made, 0o777)
        yield Path(made)


@pytest.fixture
def python(workspace: Path) -> str:
    """An interpreter the harness's user can run with ioh_tui importable."""
    system = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}", path=SYSTEM)
    candidates = [sys.executable, os.path.realpath(sys.executable), system]
    for candidate in dict.fromkeys(c for c in candidates if c):
        try:
            tried = _run([candidate, "-c", "import ioh_tui.sandbox"], {}, workspace)
        except PermissionError:  # in a directory the user may not enter
            continue
        if tried.returncode == 0:
            return candidate
    pytest.skip("no interpreter an unprivileged user can run")


@pytest.mark.parametrize("rung", ["floor", "none"])
def test_a_command_cannot_read_the_harness_environment(
    workspace: Path, python: str, rung: str
) -> None:
    if rung not in probe():
        pytest.skip(f"{rung} is not available here")
    env = {
        "PATH": os.environ["PATH"],
        "OPENAI_API_KEY": KEY,
        "MY_SERVICE_API_KEY": KEY + "-2",
        "HOME": str(workspace),
    }
    done = _run([python, "-c", HARNESS, rung, str(workspace)], env, workspace)
    assert done.returncode == 0, done.stderr
    seen = done.stdout
    assert "ENV" in seen and "PATH=" in seen  # the command ran and printed its environment
    assert "Permission denied" in seen  # the harness's /proc entry is closed to it
    assert KEY not in seen
    assert "OPENAI_API_KEY" not in seen and "MY_SERVICE_API_KEY" not in seen

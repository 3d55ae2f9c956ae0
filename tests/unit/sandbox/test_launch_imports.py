"""The programs that start once per command import as little as they can (issue 23)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ioh_tui.sandbox

SANDBOX = str(Path(ioh_tui.sandbox.__file__).resolve().parent)

HEAVY = {"typing", "contextlib", "signal", "enum", "json", "re", "socket", "functools"}
"""Each of these cost milliseconds of every command's start (the floor's subreaper took 45 ms
against 16 for `python -I -S -c pass`, the namespaces launcher 50)."""


def test_the_subreaper_and_the_namespace_launcher_import_nothing_heavy() -> None:
    code = (
        f"import sys; sys.path.insert(0, {SANDBOX!r}); import _reaper, _ns_launcher;"
        " print(' '.join(sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    )
    loaded = set(done.stdout.split())
    assert {"_reaper", "_ns_launcher", "ctypes", "marshal"} <= loaded
    assert loaded & HEAVY == set()

"""The demo's temporary directory: kept while a decision waits on its run, removed once it ends.

The directory holds the demo's `workspace/` and its scenario (the run's stored driver names it, so
a resume rebuilds the scripted model). A marker file names the directory as the demo's own: only
such a directory is ever removed, by whoever ends the run for good (the app's supervisor, the
headless resume, or the demo itself when its run did not wait on a decision).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

PREFIX = "ioh-tui-demo-"
MARKER = "ioh-tui-demo"
"""The file naming a directory as the demo's own (so it may be removed)."""
WAITING = "waiting"
"""The file present while a decision waits on the demo's run (the directory is kept)."""
KEPT_OUTCOME = "awaiting_approval"


def make_home() -> Path:
    """A fresh demo directory in the system's temporary directory, marked as the demo's own."""
    home = Path(tempfile.mkdtemp(prefix=PREFIX))
    (home / MARKER).write_text(
        "ioh-tui's demo: removed when its run has ended for good\n", encoding="utf-8"
    )
    (home / "workspace").mkdir()
    return home


def demo_home(root: Path) -> Path | None:
    """The demo directory whose `workspace/` is `root`, or None for any other workspace.

    All three must hold, so no project directory is ever taken for the demo's: the workspace is a
    `workspace/` folder, in a `ioh-tui-demo-*` directory of the system's temporary directory,
    which carries the marker file.
    """
    home = root.parent
    if root.name != "workspace" or not home.name.startswith(PREFIX):
        return None
    if home.parent.resolve() != Path(tempfile.gettempdir()).resolve():
        return None
    return home if (home / MARKER).is_file() else None


def settle(root: Path, outcome: str) -> None:
    """A run in `root` ended with `outcome`: keep a demo's directory while a decision waits.

    Any other outcome ends the demo's run for good, and its directory is removed. A workspace that
    is not the demo's is left alone.
    """
    home = demo_home(root)
    if home is None:
        return
    if outcome == KEPT_OUTCOME:
        (home / WAITING).write_text("a decision waits on the demo's run\n", encoding="utf-8")
    else:
        shutil.rmtree(home, ignore_errors=True)


def release(home: Path) -> None:
    """The demo's block ends: remove its directory unless a decision waits on its run."""
    if not (home / WAITING).exists():
        shutil.rmtree(home, ignore_errors=True)

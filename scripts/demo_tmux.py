"""Play `ioh-tui demo` in a real terminal (tmux, 120x40), answer its decision, and keep the evidence.

Starts the demo in a detached tmux session, waits for the decision modal, sends `y`, waits for
`success` on screen, and saves each screen as text (`tmux capture-pane`) in screenshots/. Then it
runs scripts/screenshots.py for the SVG (and PNG, when a converter exists) pictures, unless
`--no-pictures` is given. Exits non-zero if the demo did not reach success.

Usage: python scripts/demo_tmux.py [--out DIR] [--timeout SECONDS] [--no-pictures]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 120, 40
MODAL_MARK = "y approve"
"""Text only the decision modal shows (its list of answers)."""
SUCCESS_MARK = "■ success"
"""The status line once the run ended in success."""


def tmux(*args: str) -> str:
    """Run one tmux command; its stdout."""
    done = subprocess.run(["tmux", *args], check=True, capture_output=True, text=True)
    return done.stdout


def screen(session: str) -> str:
    """The visible pane, as text."""
    return tmux("capture-pane", "-p", "-t", session)


def wait_for(session: str, marks: tuple[str, ...], timeout: float) -> str:
    """Poll the pane until one of `marks` shows; the screen text (raises on timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = screen(session)
        if any(mark in text for mark in marks):
            return text
        time.sleep(0.2)
    raise TimeoutError(f"none of {marks} appeared within {timeout:.0f}s:\n{screen(session)}")


def demo_command(store: Path) -> str:
    """`ioh-tui demo` when installed, else the module from this checkout."""
    if shutil.which("ioh-tui"):
        return f"ioh-tui demo --store {shlex.quote(str(store))}"
    return f"cd {shlex.quote(str(ROOT))} && {shlex.quote(sys.executable)} -m ioh_tui demo --store {shlex.quote(str(store))}"


def play(out: Path, timeout: float) -> int:
    """Run the demo to success in tmux; 0 when it got there."""
    session = f"ioh-demo-{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="ioh-demo-tmux-") as tmp:
        command = f"{demo_command(Path(tmp) / 'store.db')}; echo IOH-EXIT=$?; sleep 30"
        tmux("new-session", "-d", "-s", session, "-x", str(WIDTH), "-y", str(HEIGHT), command)
        try:
            answered = 0
            while True:
                text = wait_for(session, (MODAL_MARK, SUCCESS_MARK), timeout)
                if SUCCESS_MARK in text:
                    break
                answered += 1
                (out / f"demo-tmux-decision-{answered}.txt").write_text(text)
                print(f"demo_tmux: decision {answered} on screen; sending y")
                tmux("send-keys", "-t", session, "y")
                wait_for_gone(session, timeout)
            (out / "demo-tmux-success.txt").write_text(text)
            print(f"demo_tmux: success after {answered} decision(s); screens saved in {out}")
            tmux("send-keys", "-t", session, "q")
            final = wait_for(session, ("IOH-EXIT=",), timeout)
            status = final.split("IOH-EXIT=", 1)[1].split()[0]
            print(f"demo_tmux: the app exited with status {status}")
            return 0 if status == "0" else 1
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def wait_for_gone(session: str, timeout: float) -> None:
    """Wait until the modal closed (so the same decision is not answered twice)."""
    deadline = time.monotonic() + timeout
    while MODAL_MARK in screen(session):
        if time.monotonic() > deadline:
            raise TimeoutError("the decision modal did not close after `y`")
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("--no-pictures", action="store_true")
    args = parser.parse_args()
    if not shutil.which("tmux"):
        raise SystemExit("demo_tmux: tmux is not installed")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    status = play(out, args.timeout)
    if status == 0 and not args.no_pictures:
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "screenshots.py"), "--out", str(out)],
            check=True,
        )
    raise SystemExit(status)


if __name__ == "__main__":
    main()

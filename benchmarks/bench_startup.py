"""Start-up: `ioh-tui --version` and `--help` against a bare interpreter (`python -c pass`).

Prints figures; asserts nothing. Each command runs 10 times in a fresh interpreter; the medians
are compared.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 10
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "ioh-tui --version": [sys.executable, "-m", "ioh_tui", "--version"],
    "ioh-tui --help": [sys.executable, "-m", "ioh_tui", "--help"],
}


def median_seconds(argv: list[str]) -> float:
    """The median wall time of `argv` over `RUNS` runs."""
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    """Print each command's median and its ratio to the bare interpreter."""
    medians = {name: median_seconds(argv) for name, argv in COMMANDS.items()}
    bare = medians["python -c pass"]
    for name, seconds in medians.items():
        print(f"startup: {name:<18} median {seconds * 1000:6.0f} ms  {seconds / bare:5.1f}x bare")
    for name in ("ioh-tui --version", "ioh-tui --help"):
        print(
            f"table | `{name}` | {medians[name] / bare:.1f}x ({medians[name] * 1000:.0f} ms vs"
            f" {bare * 1000:.0f} ms) | `python -c pass` | ≤ 5x"
        )


if __name__ == "__main__":
    main()

"""Run every benchmark in this folder, print its figures, then issue 23's table from this run.

Each benchmark prints the rows of the table it measures as `table | what | now | reference |
goal` lines, its reference measured in the same run where one can be; they are gathered here and
printed once more at the end as the Markdown table README's "Measured" section is made from. The
benchmarks assert nothing.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path
from typing import TextIO

PREFIX = "table | "


class _Tee(io.TextIOBase):
    """Writes through to the real stdout and keeps the table rows."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._line = ""
        self.rows: list[str] = []

    def write(self, text: str) -> int:
        self._out.write(text)
        self._line += text
        *done, self._line = self._line.split("\n")
        self.rows += [line[len(PREFIX) :] for line in done if line.startswith(PREFIX)]
        return len(text)

    def flush(self) -> None:
        self._out.flush()


def main() -> None:
    """Run each `bench_*.py` in a fresh interpreter; then print the table.

    Not imported into this one: a benchmark's heap, threads and settings stayed for the next (the
    tree's left 300 MiB; the app stream then measured 7.3x headless in-process, 1.9-2.1x alone).
    """
    here = Path(__file__).parent
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        for path in sorted(here.glob("bench_*.py")):
            print(f"== {path.stem}", flush=True)
            with subprocess.Popen(
                [sys.executable, str(path)], stdout=subprocess.PIPE, text=True, cwd=here.parent
            ) as bench:
                assert bench.stdout is not None
                for line in bench.stdout:
                    print(line, end="", flush=True)
            if bench.returncode:
                print(f"{path.stem} failed (exit status {bench.returncode})", flush=True)
    print("\n| what | now | reference | goal |\n| --- | --- | --- | --- |")
    for row in tee.rows:
        print(f"| {row} |")


if __name__ == "__main__":
    main()

"""Run every benchmark in this folder, print its figures, then issue 23's table from this run.

Each benchmark prints the rows of the table it measures as `table | what | now | reference |
goal` lines, its reference measured in the same run where one can be; they are gathered here and
printed once more at the end as the Markdown table README's "Measured" section is made from. The
benchmarks assert nothing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
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
    """Import each `bench_*.py` and call its `main()`; then print the table."""
    here = Path(__file__).parent
    sys.path.insert(0, str(here.parent))
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        for path in sorted(here.glob("bench_*.py")):
            print(f"== {path.stem}", flush=True)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.main()
    print("\n| what | now | reference | goal |\n| --- | --- | --- | --- |")
    for row in tee.rows:
        print(f"| {row} |")


if __name__ == "__main__":
    main()

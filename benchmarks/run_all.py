"""Run every benchmark in this folder and print its figures (they assert nothing)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def main() -> None:
    """Import each `bench_*.py` and call its `main()`."""
    here = Path(__file__).parent
    sys.path.insert(0, str(here.parent))
    for path in sorted(here.glob("bench_*.py")):
        print(f"== {path.stem}", flush=True)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.main()


if __name__ == "__main__":
    main()

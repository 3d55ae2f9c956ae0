"""`--help` and `--version` build the parser without loading the engine, a provider or MCP."""

from __future__ import annotations

import subprocess
import sys

import pytest

# Runs the command line in this interpreter, then prints every ioh_tui module and the heavy
# third-party ones that were imported.
PROGRAM = """
import sys
from ioh_tui.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("httpx", "aiosqlite", "mcp", "textual")
loaded = [m for m in sys.modules if m.startswith("ioh_tui") or m.split(".")[0] in heavy]
print(" ".join(sorted(loaded)), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["exec", "--help"], ["mcp", "--help"]])
def test_the_parser_imports_only_the_command_lines_own_modules(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith(("usage: ioh-tui", "ioh-tui "))
    loaded = set(done.stderr.split())
    assert loaded <= {
        "ioh_tui",
        "ioh_tui.cli",
        "ioh_tui.cli.arguments",
        "ioh_tui.cli.terminal",
        "ioh_tui.core",
        "ioh_tui.core.errors",
        "ioh_tui.core.redact",
        "ioh_tui.core.shown",
        "ioh_tui.core.visible",
    }, loaded


def test_the_parsers_own_copies_of_the_choices_agree_with_the_real_ones() -> None:
    from ioh_tui.cli import arguments
    from ioh_tui.config.schema import PROVIDERS
    from ioh_tui.core.transcript import EFFORTS

    assert arguments.EFFORTS == EFFORTS
    assert arguments.PROVIDERS == PROVIDERS

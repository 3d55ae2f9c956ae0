"""`ioh-tui acp` without the `acp` extra: one line naming it, exit 2, nothing on stdout."""

from __future__ import annotations

import subprocess
import sys

# The SDK is made unimportable in the child (a None in sys.modules), as on a base install.
NO_SDK = (
    "import sys; sys.modules['acp'] = None; from ioh_tui.cli import main; sys.exit(main(['acp']))"
)


def test_without_the_extra_acp_names_it_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_SDK], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "ioh-tui: ioh-tui acp needs the acp extra: pip install 'ioh-tui[acp]'"
    ]

"""`python -m ioh_tui` runs the command line."""

import sys

from ioh_tui.cli import main

sys.exit(main())

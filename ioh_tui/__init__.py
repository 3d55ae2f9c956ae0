"""ioh-tui: the IO Harness agent loop in Python, with a Textual app for live supervision.

Importing this package loads nothing else (in particular never Textual).
"""

__version__ = "0.1.0"

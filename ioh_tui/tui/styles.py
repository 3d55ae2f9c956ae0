"""Finds the `.tcss` stylesheets: the installed `ioh_tui/styles` first, then the checkout's.

Textual resolves a relative `CSS_PATH` against the defining module, and the top-level `styles/`
folder is outside the package, so every screen asks here for absolute paths instead.
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent
_INSTALLED = _HERE.parent / "styles"
"""Where the wheel puts the stylesheets (hatch force-include maps `styles` to `ioh_tui/styles`)."""
_CHECKOUT = _HERE.parent.parent / "styles"
"""The repository's top-level `styles/` folder, used when running from a checkout."""


def styles_dir() -> Path:
    """The directory holding the stylesheets.

    Returns:
        The installed copy when present, else the checkout's `styles/`.
    """
    if (_INSTALLED / "base.tcss").is_file():
        return _INSTALLED
    return _CHECKOUT


def stylesheet(name: str) -> Path:
    """The absolute path of one stylesheet.

    Args:
        name: The file name without `.tcss` (`base`, `run`, `approval`, ...).

    Returns:
        The path; it is not checked here (a unit test asserts every referenced file exists).
    """
    return styles_dir() / f"{name}.tcss"

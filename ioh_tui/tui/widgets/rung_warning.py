"""RungWarning: a loud line across the run view while commands run on a rung that contains nothing.

Also, under a root harness, on a contained rung whose commands keep uid 0 (docs/security.md).

On the floor and `none` a command can reach the store (every run's transcript) and its key, your
files and the network: the same warning `ioh-tui exec` prints, where the person is looking.
"""

from __future__ import annotations

from textual.widgets import Static

from ioh_tui.sandbox.floor import key_exposure

WEAK_RUNGS = ("portable-floor", "none")
"""The rungs that confine neither files nor the network (docs/sandbox.md)."""


def rung_warning(backend: str) -> str | None:
    """The warning for a sandbox backend, or None when the backend contains its commands."""
    if backend not in WEAK_RUNGS:
        return None
    return (
        f"WARNING: sandbox {backend} contains nothing: commands can reach the store and its key, "
        "your files and the network (only bwrap and namespaces contain them)"
    )


class RungWarning(Static):
    """Hidden until `show` is given a weak rung; then one bold line in the error colour."""

    DEFAULT_CSS = """
    RungWarning {
        display: none;
        height: auto;
        padding: 0 1;
        color: $text;
        background: $error 70%;
        text-style: bold;
    }
    RungWarning.-shown {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)

    def show(self, backend: str) -> None:
        """Warn for `backend`, or hide when it contains its commands as an unprivileged user."""
        text = rung_warning(backend)
        exposure = key_exposure(backend)
        if text is None and exposure is not None:
            # A contained rung whose commands keep uid 0 under a root harness (it cannot start
            # them as another user here, or IOH_TUI_SANDBOX_ROOT_USER=root): `exec` warns too.
            text = f"WARNING: {exposure}"
            exposure = None
        self.update(text or "")
        self.set_class(text is not None, "-shown")
        # Whether the keys are exposed too depends on the user (root) and the platform: said on
        # hover, so the line reads the same everywhere.
        self.tooltip = exposure

"""Where the configuration files are: one for the user, one for each project."""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_NAME = "config.toml"
RULES_NAME = "policy.toml"
"""Remembered rules, beside each configuration file."""
PROJECT_DIR = ".ioh-tui"


def user_dir() -> Path:
    """`$XDG_CONFIG_HOME/ioh-tui`, else `~/.config/ioh-tui`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ioh-tui"


def user_file() -> Path:
    """The user's configuration file (it need not exist)."""
    return user_dir() / CONFIG_NAME


def project_file(workspace: Path) -> Path:
    """`<workspace>/.ioh-tui/config.toml` (it need not exist)."""
    return workspace / PROJECT_DIR / CONFIG_NAME


def user_rules_file() -> Path:
    """The user's remembered rules (`$XDG_CONFIG_HOME/ioh-tui/policy.toml`; it need not exist)."""
    return user_dir() / RULES_NAME


def project_rules_file(workspace: Path) -> Path:
    """The project's remembered rules, `<workspace>/.ioh-tui/policy.toml` (it need not exist)."""
    return workspace / PROJECT_DIR / RULES_NAME

"""The effective configuration under the command's options, and what `ioh-tui` hands the app.

Light on purpose: `ioh-tui` (the start screen) and `ioh-tui demo` read the configuration before
the app's first frame, so reading it loads the configuration package and nothing of a run (no
engine, provider, policy or sandbox: issue 23); `options.py` builds the run's parts from it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ioh_tui.config import Config, load_config
from ioh_tui.config.trust import TrustBook, keep_trusted, trust_all
from ioh_tui.paths import default_store

ROOT_USER_ENV = "IOH_TUI_SANDBOX_ROOT_USER"
"""`ioh_tui.sandbox.user.ROOT_USER_ENV`, named here so handing it over loads no sandbox."""
NOTIFY_ENV = "IOH_TUI_NOTIFY"
"""`ioh_tui.tui.notify.NOTIFY_ENV`: the app's desktop notification style."""

_FLAG_DESTS = (
    "provider",
    "model",
    "base_url",
    "api_key_env",
    "reasoning_effort",
    "fallback",
    "max_steps",
    "time_budget",
    "token_budget",
    "max_retries",
    "stall_after",
    "context_window",
    "sandbox",
    "store",
    "gate_timeout",
    "gate_cpu",
    "gate_memory",
)


def effective_config(args: argparse.Namespace) -> Config:
    """The configuration files and the environment under these options (flags win).

    `--scenario` without `--provider` names `scripted`, as it always has, over the files.

    Raises:
        ConfigError: a bad configuration file or variable, or an unknown `--profile`.
    """
    config, root = loaded_config(args)
    book = TrustBook()
    if getattr(args, "trust_project", False):
        # The user agreed on the command line: recorded, so the app does not ask again.
        trust_all(config, root, book)
        return config
    return keep_trusted(config, root, book)[0]


def loaded_config(args: argparse.Namespace) -> tuple[Config, Path]:
    """Every file as written, no section left out, and the workspace it was read for."""
    flags = {dest: getattr(args, dest, None) for dest in _FLAG_DESTS}
    if flags["provider"] is None and getattr(args, "scenario", None):
        flags["provider"] = "scripted"
    workspace = getattr(args, "workspace", None)
    root = Path(workspace) if workspace else Path.cwd()
    return load_config(flags, workspace=root, profile=getattr(args, "profile", None)), root


def store_path(args: argparse.Namespace) -> Path:
    """The store file to use: `--store`, else the configuration's, else the default."""
    given = getattr(args, "store", None)
    if given:
        return Path(given)
    configured = effective_config(args).given("store.path")
    return Path(configured) if configured else default_store()


def hand_over(config: Config) -> None:
    """Hand the configuration to the app's parts that read variables.

    `notifications.style` as `IOH_TUI_NOTIFY` (a variable already set wins), and
    `sandbox.root_user` as `IOH_TUI_SANDBOX_ROOT_USER` (runs started from the start screen build
    no sandbox here; a gate's or server's process started later reads it too).
    """
    style = config.given("notifications.style")
    if style and not os.environ.get(NOTIFY_ENV):
        os.environ[NOTIFY_ENV] = style
    os.environ[ROOT_USER_ENV] = str(config.get("sandbox.root_user"))

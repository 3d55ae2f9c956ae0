"""Configuration files: the user's and the project's, layered under the flags and the environment.

`load_config(flags, workspace=, profile=)` gives the effective `Config`: every key of
`schema.KEYS` with its value and its source, the `[policy]` tables for the policy layers, and the
MCP servers and hooks as written (checked for shape). docs/configuration.md describes every key.
"""

from ioh_tui.config.loading import FileLayer, Setting, load_file
from ioh_tui.config.locations import project_file, user_file
from ioh_tui.config.merge import Config, Value, load_config
from ioh_tui.config.schema import KEYS, Key

__all__ = [
    "KEYS",
    "Config",
    "FileLayer",
    "Key",
    "Setting",
    "Value",
    "load_config",
    "load_file",
    "project_file",
    "user_file",
]

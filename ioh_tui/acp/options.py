"""The session settings an ACP client can change: the reasoning effort of the session's runs.

Offered as one `select` config option (category `thought_level`, which clients show beside the
model): `default` (what the flags and configuration say) or one of `EFFORTS`.
"""

from __future__ import annotations

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from ioh_tui.core.transcript import EFFORTS

EFFORT_OPTION = "reasoning_effort"
DEFAULT = "default"


def effort_option(chosen: str | None, configured: str | None) -> SessionConfigOptionSelect:
    """The option as the client shows it: `chosen` selected, else `default` (`configured`)."""
    default = f"As configured ({configured or 'the model’s own'})"
    return SessionConfigOptionSelect(
        type="select",
        id=EFFORT_OPTION,
        name="Reasoning effort",
        description="How hard a model that reasons thinks (Anthropic: extended thinking)",
        category="thought_level",
        current_value=chosen or DEFAULT,
        options=[
            SessionConfigSelectOption(value=DEFAULT, name=default),
            *(SessionConfigSelectOption(value=e, name=e.capitalize()) for e in EFFORTS),
        ],
    )


def chosen_effort(config_id: str, value: str | bool) -> str | None:
    """The effort a `session/set_config_option` chooses (None: back to the configured one).

    Raises:
        ValueError: an unknown option or value (said back to the client).
    """
    if config_id != EFFORT_OPTION:
        raise ValueError(f"unknown config option {config_id!r} (there is {EFFORT_OPTION!r})")
    if value == DEFAULT:
        return None
    if isinstance(value, str) and value in EFFORTS:
        return value
    raise ValueError(f"{config_id}: {value!r} is not one of {DEFAULT}, {', '.join(EFFORTS)}")

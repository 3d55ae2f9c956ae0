"""Building blocks of the JSON schemas the model sees for each tool's arguments."""

from __future__ import annotations

from typing import Any

from ioh_tui.core.transcript import ToolSpec

STRING: dict[str, Any] = {"type": "string"}
POSITIVE: dict[str, Any] = {"type": "integer", "minimum": 1}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
STRINGS: dict[str, Any] = {"type": "array", "items": STRING, "minItems": 1}


def spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    """A tool's spec: its arguments are an object with exactly these properties."""
    return ToolSpec(
        name,
        description,
        {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    )

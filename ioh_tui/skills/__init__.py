"""Skills: folders holding a `SKILL.md` the model may load (docs/extending.md, "Skills").

`find_skills` reads every skill's front matter (name and description) and the list of its files;
`Skills.block` is the pinned message naming them; the `skill` tool (`tools/skill.py`) returns one
skill's instructions when the model asks for it.
"""

from __future__ import annotations

from ioh_tui.skills.finding import (
    MAX_BODY_CHARS,
    MAX_FILE_CHARS,
    Skill,
    Skills,
    find_skills,
    read_bounded,
)

__all__ = ["MAX_BODY_CHARS", "MAX_FILE_CHARS", "Skill", "Skills", "find_skills", "read_bounded"]

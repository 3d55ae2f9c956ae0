"""Finding skills: `<dir>/NAME/SKILL.md` with front matter, read bounded and never through a link.

A `SKILL.md` opens with front matter between two `---` lines holding `name: ...` and
`description: ...` (one line each; quotes around a value are dropped); its instructions follow.
A skill's other files (those beside `SKILL.md`, in subfolders too) are listed by their path in
the skill's folder. A skill that cannot be read as one (no front matter, no name, a bad name) is
skipped with a warning; a later folder's skill of a name already found is skipped the same way.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

SKILL_FILE = "SKILL.md"
MAX_SKILLS = 100
MAX_DESCRIPTION_CHARS = 1_024
MAX_BODY_CHARS = 16_000
"""A skill's instructions as the `skill` tool returns them (as `AGENTS.md` is capped)."""
MAX_FILE_CHARS = 16_000
"""One of a skill's files as the `skill` tool returns it."""
MAX_LISTED_FILES = 200
_READ_BYTES = 1 << 20
_BLOCK_CHARS = 8_000
"""The pinned list's share of every request; past it, skills are named without descriptions."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill as found."""

    name: str
    description: str
    body: str
    """The instructions below the front matter, cut to `MAX_BODY_CHARS`."""
    folder: Path
    scope: str
    """`project` (the workspace's `.ioh-tui/skills`) or `user` (the configuration directory's)."""
    files: tuple[str, ...] = ()
    """Its other files, by path relative to `folder`."""

    @property
    def path(self) -> Path:
        """Its `SKILL.md`."""
        return self.folder / SKILL_FILE


@dataclass(frozen=True, slots=True)
class Skills:
    """The skills a run offers, and the warnings about those it skipped."""

    skills: tuple[Skill, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        """Whether there is a skill to offer."""
        return bool(self.skills)

    def get(self, name: str) -> Skill | None:
        """The skill called `name`."""
        return next((s for s in self.skills if s.name == name), None)

    def block(self) -> str:
        """The pinned message: every skill's name and description."""
        head = (
            "Skills you can load (call the `skill` tool with a name to read its instructions "
            "before doing what it covers):"
        )
        lines = [head, *(f"- {s.name}: {s.description}" for s in self.skills)]
        text = "\n".join(lines)
        if len(text) <= _BLOCK_CHARS:
            return text
        return "\n".join([head, *(f"- {s.name}" for s in self.skills)])[:_BLOCK_CHARS]


def find_skills(folders: Sequence[tuple[str, Path]]) -> Skills:
    """The skills of `folders` ((scope, directory), the first's winning a name), in name order."""
    found: dict[str, Skill] = {}
    warnings: list[str] = []
    for scope, folder in folders:
        for entry in _entries(folder):
            if len(found) >= MAX_SKILLS:
                warnings.append(f"{folder}: more than {MAX_SKILLS} skills; the rest are skipped")
                break
            skill = _read_skill(scope, entry, warnings)
            if skill is None:
                continue
            if skill.name in found:
                warnings.append(
                    f"{skill.path}: skipped, a skill named {skill.name!r} was found first "
                    f"({found[skill.name].path})"
                )
                continue
            found[skill.name] = skill
    return Skills(tuple(sorted(found.values(), key=lambda s: s.name)), tuple(warnings))


def _entries(folder: Path) -> list[Path]:
    """The skill folders in `folder` (real directories, not links), in name order."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        try:
            if stat.S_ISDIR(os.lstat(folder / name).st_mode):
                out.append(folder / name)
        except OSError:
            continue
    return out


def _read_skill(scope: str, folder: Path, warnings: list[str]) -> Skill | None:
    raw = read_bounded(folder / SKILL_FILE)
    if raw is None:
        warnings.append(f"{folder}: skipped, no readable {SKILL_FILE} (a regular file, no link)")
        return None
    text = raw.decode("utf-8", errors="replace").replace("\x00", "")
    front, body = _front_matter(text)
    where = folder / SKILL_FILE
    if front is None:
        warnings.append(f"{where}: skipped, no front matter (--- name: ... description: ... ---)")
        return None
    name, description = front.get("name", ""), front.get("description", "")
    if not name:
        warnings.append(f"{where}: skipped, its front matter has no name")
        return None
    if not _NAME.fullmatch(name):
        warnings.append(
            f"{where}: skipped, name {name[:80]!r} is not letters, digits, '-', '_' or '.' "
            "(at most 64)"
        )
        return None
    if not description:
        warnings.append(f"{where}: skipped, its front matter has no description")
        return None
    return Skill(
        name=name,
        description=" ".join(description.split())[:MAX_DESCRIPTION_CHARS],
        body=body.strip()[:MAX_BODY_CHARS],
        folder=folder,
        scope=scope,
        files=_files(folder),
    )


def _front_matter(text: str) -> tuple[dict[str, str] | None, str]:
    """The `key: value` lines between the opening `---` lines, and the text after them."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None, text
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        return None, text
    front: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "#")):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            front[key.strip()] = value
    return front, "\n".join(lines[end + 1 :])


def _files(folder: Path) -> tuple[str, ...]:
    """The skill's other regular files (links are not followed), by relative path."""
    out: list[str] = []
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(top) / name
            rel = path.relative_to(folder).as_posix()
            if rel == SKILL_FILE or name.startswith("."):
                continue
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
            except OSError:
                continue
            out.append(rel)
            if len(out) >= MAX_LISTED_FILES:
                return tuple(out)
    return tuple(out)


def read_bounded(path: Path) -> bytes | None:
    """A regular file's first MiB, opened once with `O_NOFOLLOW` (None: no such file, or a link).

    A link could point anywhere on the host, and checking then reading would let it be swapped
    in between.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return file.read(_READ_BYTES)

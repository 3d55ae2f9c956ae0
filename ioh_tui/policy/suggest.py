"""Similar requests and the one rule that would cover them (approval batching).

Two requests are similar when they do the same act to the same kind of thing: a command with the
same program (and subcommand, when it has one: `git log ...` and `git log -p ...`, not `git push`);
a path in the same directory. The suggested rule is the narrowest glob of the house syntax
(`glob.py`: `*` matches anything) that matches every target of the group: their longest common
prefix, cut back to a word or path boundary, then `*`. It is only a suggestion: the person sees it,
can narrow it, and a remembered allow never beats a configured deny (nor a default deny). It is
never a bare `*`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from ioh_tui.core.acts import Act

BOUNDARIES = " /"
"""Where a suggested pattern may end before its `*` (a word or a path component)."""


def similarity_key(act: Act, target: str) -> tuple[str, str]:
    """What makes requests similar: the act, and the program (+ subcommand) or the directory."""
    if act is Act.EXEC:
        try:
            words = shlex.split(target)
        except ValueError:
            words = target.split()
        head = words[:1]
        if len(words) > 1 and not words[1].startswith("-"):
            head = words[:2]  # a subcommand (`git log`, `cargo test`) names what is done
        return (act.value, " ".join(head))
    return (act.value, os.path.dirname(target))


def suggest_pattern(targets: Sequence[str]) -> str:
    """The narrowest pattern matching every target (one target: that target exactly).

    Never a bare `*` (approving it would allow every target of the act): when the targets share
    nothing, the suggestion is the first of them alone, for the person to widen by hand.

    Args:
        targets: The targets of similar requests.

    Returns:
        A glob: the common start cut at a word or path boundary (`pytest -q *`, `src/*`), else
        the common start itself (`ls*`), else a common extension (`*.py`); else the first target.
    """
    distinct = sorted(set(targets))
    if len(distinct) == 1:
        return distinct[0]
    pattern = _covering(distinct)
    return distinct[0] if set(pattern) <= {"*"} else pattern


def _covering(distinct: Sequence[str]) -> str:
    prefix = _common_start(distinct)
    cut = max(prefix.rfind(c) for c in BOUNDARIES) + 1
    if cut:
        return prefix[:cut] + "*"
    if prefix:
        return prefix + "*"
    ending = _common_start([t[::-1] for t in distinct])[::-1]
    if "." in ending:
        return "*" + ending[ending.index(".") :]
    return "*"


def _common_start(texts: Sequence[str]) -> str:
    """The longest common start, character by character (targets are not only paths)."""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def group_similar(requests: Sequence[tuple[Act, str]]) -> list[list[int]]:
    """Indexes of `requests` grouped by similarity, groups in order of their first member."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (act, target) in enumerate(requests):
        groups.setdefault(similarity_key(act, target), []).append(i)
    return list(groups.values())

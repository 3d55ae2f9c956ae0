"""The policy glob: `*` is any run of characters (including `/`), `?` is one character.

Everything else in a pattern is literal and matching is case-sensitive on every platform. This is
deliberately not `fnmatch`: that module understands `[...]` classes and folds case on Windows, so
a rule written as `[prod].env` or `*.PEM` would mean something different from what the user read.
A pattern matches a target when it matches the whole target or the target's last `/`-segment, so
`.env` also covers `config/.env` and `*.pem` covers `certs/site.pem`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Glob", "basename", "compile_glob", "glob_match", "glob_match_any", "glob_to_regex"]


def glob_to_regex(pattern: str) -> str:
    """Translate a policy glob into regular expression source: the definition of its meaning.

    `Glob` matches exactly what `re.fullmatch(glob_to_regex(p), target, re.DOTALL)` matches, without
    the regex engine's backtracking over stars.

    Args:
        pattern: the glob.

    Returns:
        Regex source (use with `re.fullmatch` and `re.DOTALL`); runs of `*` become one `.*`.
    """
    parts: list[str] = []
    previous_star = False
    for char in pattern:
        if char == "*":
            if not previous_star:
                parts.append(".*")
            previous_star = True
            continue
        previous_star = False
        parts.append("." if char == "?" else re.escape(char))
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Glob:
    """A compiled glob: the literal runs between its stars, each a fixed-length regex.

    Matching the pattern as one regex (`.*` per star) backtracks badly: `*a*a*a*a*b` takes seconds
    on a 200-character target, and exec targets are argv strings the model writes. Splitting on
    the stars and placing each run at its leftmost possible position gives the same answer (a
    star can always absorb what lies between two runs) in at most `len(target)` tries per run.
    """

    head: re.Pattern[str]
    """The run before the first star; the whole pattern when there is no star."""
    middle: tuple[re.Pattern[str], ...]
    """The runs between stars (empty runs, from `**`, left out)."""
    tail: re.Pattern[str] | None
    """The run after the last star; None when the pattern has no star."""
    head_size: int
    tail_size: int

    def fullmatch(self, target: str) -> bool:
        """Whether the pattern matches all of `target`."""
        if self.tail is None:
            return self.head.fullmatch(target) is not None
        end = len(target) - self.tail_size
        if end < self.head_size:
            return False
        if self.head.match(target) is None or self.tail.match(target, end) is None:
            return False
        position = self.head_size
        for run in self.middle:
            found = run.search(target, position, end)
            if found is None:
                return False
            position = found.end()
        return True


def _run(text: str) -> re.Pattern[str]:
    # DOTALL because targets are data, not lines: a `?` must match a newline in a file name or
    # an argv string, or a deny could be slipped past with an embedded newline.
    return re.compile(glob_to_regex(text), re.DOTALL)


@functools.lru_cache(maxsize=4096)
def compile_glob(pattern: str) -> Glob:
    """The compiled, cached matcher for `pattern`."""
    runs = pattern.split("*")
    if len(runs) == 1:
        return Glob(_run(pattern), (), None, len(pattern), 0)
    middle = tuple(_run(run) for run in runs[1:-1] if run)
    return Glob(_run(runs[0]), middle, _run(runs[-1]), len(runs[0]), len(runs[-1]))


def basename(target: str) -> str:
    """The last `/`-separated segment of `target` (the whole target when it has no `/`)."""
    return target.rpartition("/")[2]


def glob_match(pattern: str, target: str) -> bool:
    """Whether `pattern` matches `target` as a whole or its basename.

    Args:
        pattern: a policy glob.
        target: a path, program, argv string or `host[:port]`.

    Returns:
        True when the pattern matches.
    """
    matcher = compile_glob(pattern)
    if matcher.fullmatch(target):
        return True
    name = basename(target)
    return name != target and matcher.fullmatch(name)


def glob_match_any(pattern: str, targets: Iterable[str]) -> bool:
    """Whether `pattern` matches any of `targets` (see `glob_match`)."""
    return any(glob_match(pattern, target) for target in targets)

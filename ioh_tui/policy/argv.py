"""The forms an exec target is checked in: the command line, its program, and what it wraps.

An exec rule matches argv, not effects. To keep a deny on `rm` from being stepped around by the
wrappers everyone knows, a command that runs another (`env rm`, `sudo rm`, `nice`, `timeout`,
`xargs`, `find -exec`, `sh -c '...'`) is also checked as the command it runs, and `find -delete`
as the `rm` it is. These inner forms count for deny and ask only: an allow names what it allows
(`allow ruff *` does not allow `sudo ruff`). Interpreters (`python3 -c`, `node -e`, `perl -e`) are
not looked into: code is not argv; see docs/policy.md.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence

__all__ = ["exec_forms", "split_line"]

_MAX_DEPTH = 8
_PLAIN = frozenset({"nohup", "time", "command", "exec", "setsid", "builtin", "chronic"})
"""Wrappers whose first word not starting with `-` is the command."""
_VALUED: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": frozenset({"-n", "-I", "-P", "-d", "-L", "-s", "-a", "-E", "-i", "-l", "-e"}),
    "chrt": frozenset({"-p"}),
    "taskset": frozenset(),
    "busybox": frozenset(),
    "toybox": frozenset(),
    "watch": frozenset({"-n", "-d"}),
}
"""Wrappers and the options of each that take a separate value."""
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "fish"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&", ";;"})


def split_line(line: str) -> list[str]:
    """The argv of a command line as the exec tool splits it (shlex), or words when it cannot."""
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def exec_forms(target: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The forms an exec target is checked in: (its own, those of the commands it runs).

    Its own forms are the line as written, its program, and the line with the program's directory
    left out (`/bin/rm -rf x` is also `rm -rf x`). The inner forms are the same three for every
    command a known wrapper runs, at any depth.
    """
    argv = split_line(target)
    outer = _dedupe((target, *_own(argv)))
    inner: list[str] = []
    for wrapped in _wrapped(argv, 0):
        inner.extend(_own(wrapped))
    return outer, tuple(f for f in _dedupe(inner) if f not in outer)


def _own(argv: Sequence[str]) -> list[str]:
    if not argv:
        return []
    forms = [shlex.join(argv), argv[0]]
    name = argv[0].rpartition("/")[2]
    if name and name != argv[0]:
        forms += [shlex.join([name, *argv[1:]]), name]
    return forms


def _dedupe(forms: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(forms))


def _wrapped(argv: Sequence[str], depth: int) -> Iterator[list[str]]:
    """Every command `argv` runs through a known wrapper, outermost first, recursively."""
    if not argv or depth >= _MAX_DEPTH:
        return
    for inner in _unwrap(list(argv)):
        if inner:
            yield inner
            yield from _wrapped(inner, depth + 1)


def _unwrap(argv: list[str]) -> list[list[str]]:
    name = argv[0].rpartition("/")[2]
    rest = argv[1:]
    if name in _SHELLS:
        return _shell(rest)
    if name == "find":
        return _find(rest)
    if name in _PLAIN or name in _VALUED:
        return [_after_options(name, rest)]
    return []


def _after_options(name: str, rest: list[str]) -> list[str]:
    """The command a wrapper runs: after its options, `NAME=value` (env), a duration (timeout)."""
    valued = _VALUED.get(name, frozenset())
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            i += 1
            break
        if word in valued:
            if name == "env" and word in ("-S", "--split-string") and i + 1 < len(rest):
                return split_line(rest[i + 1]) + rest[i + 2 :]
            i += 2
            continue
        if word.startswith("-") and len(word) > 1:
            i += 1
            continue
        if name == "env" and "=" in word:
            i += 1
            continue
        break
    if name in ("timeout", "taskset", "chrt") and i < len(rest):
        i += 1  # the duration, mask or priority
    if name == "nice" and i < len(rest) and rest[i].lstrip("+-").isdigit():
        i += 1
    return rest[i:]


def _shell(rest: list[str]) -> list[list[str]]:
    """`sh -c 'a; b | c'`: each command of the string (split on the shell's separators)."""
    for i, word in enumerate(rest):
        if word.startswith("-") and "c" in word[1:] and i + 1 < len(rest):
            return _commands(rest[i + 1])
    return []


def _commands(script: str) -> list[list[str]]:
    try:
        lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = script.split()
    commands: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS or set(word) <= set(";&|()"):
            commands.append([])
        else:
            commands[-1].append(word)
    return [command for command in commands if command]


def _find(rest: list[str]) -> list[list[str]]:
    """`find -exec cmd {} ;` runs `cmd`; `find -delete` is an `rm` of what it finds."""
    found: list[list[str]] = []
    starts = []
    for word in rest:
        if word.startswith("-") or word in ("(", "!", ")"):
            break
        starts.append(word)
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in _FIND_RUNS:
            end = i + 1
            while end < len(rest) and rest[end] not in (";", "+"):
                end += 1
            found.append(rest[i + 1 : end])
            i = end
        elif word == "-delete":
            found.append(["rm", "-r", *(starts or ["."])])
        i += 1
    return found

"""Which line of a TOML text each key is written on (`tomllib` reports no positions).

A scanner, not a parser: the text is already known to be valid TOML (tomllib read it first), so it
only has to follow the shapes that decide where a key lives: `[table]` and `[[array.of.tables]]`
headers, dotted and quoted keys (`a."b.c" = 1`), inline tables (`p = { model = "m" }`, whose keys
sit on the line of the `{`), and values that span lines (multi-line strings and arrays), whose
contents must never be mistaken for keys.

Paths are tuples of key parts; the n-th table of an array of tables is the part `"#n"`.
"""

from __future__ import annotations

Path = tuple[str, ...]

_BARE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.found: dict[Path, int] = {}
        self.arrays: dict[Path, int] = {}

    # -- low level ---------------------------------------------------------------------------

    def peek(self, n: int = 1) -> str:
        return self.text[self.i : self.i + n]

    def advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self.i < len(self.text):
                if self.text[self.i] == "\n":
                    self.line += 1
                self.i += 1

    def skip_space(self, newlines: bool = False) -> None:
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.advance()
            elif c == "#":
                while self.i < len(self.text) and self.text[self.i] != "\n":
                    self.advance()
            else:
                return

    def skip_line(self) -> None:
        while self.i < len(self.text) and self.text[self.i] != "\n":
            self.advance()
        self.advance()

    # -- keys and strings --------------------------------------------------------------------

    def string(self) -> str:
        """A string starting here (basic, literal, or multi-line); returns its raw contents."""
        for quote in ('"""', "'''"):
            if self.peek(3) == quote:
                self.advance(3)
                start = self.i
                while self.i < len(self.text):
                    if quote[0] == '"' and self.peek() == "\\":
                        self.advance(2)
                        continue
                    if self.peek(3) == quote:
                        # A closing run may be 4 or 5 quotes: the extra ones belong to the text.
                        while self.peek(4) == quote + quote[0]:
                            self.advance()
                        raw = self.text[start : self.i]
                        self.advance(3)
                        return raw
                    self.advance()
                return self.text[start:]
        quote = self.peek()
        self.advance()
        out: list[str] = []
        while self.i < len(self.text) and self.peek() != quote and self.peek() != "\n":
            if quote == '"' and self.peek() == "\\":
                out.append(self._escape())
                continue
            out.append(self.peek())
            self.advance()
        self.advance()
        return "".join(out)

    def _escape(self) -> str:
        self.advance()
        c = self.peek()
        simple = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\"}
        if c in simple:
            self.advance()
            return simple[c]
        if c in "uU":
            width = 4 if c == "u" else 8
            digits = self.text[self.i + 1 : self.i + 1 + width]
            self.advance(1 + width)
            try:
                return chr(int(digits, 16))
            except ValueError:
                return ""
        self.advance()
        return c

    def key(self) -> Path:
        """A dotted key: bare and quoted parts."""
        parts: list[str] = []
        while True:
            self.skip_space()
            c = self.peek()
            if c in ('"', "'"):
                parts.append(self.string())
            else:
                start = self.i
                while self.i < len(self.text) and self.text[self.i] in _BARE:
                    self.advance()
                parts.append(self.text[start : self.i])
            self.skip_space()
            if self.peek() != ".":
                return tuple(parts)
            self.advance()

    # -- values ------------------------------------------------------------------------------

    def value(self, path: Path) -> None:
        """Skip one value, recording the keys of any inline table in it under `path`."""
        self.skip_space()
        c = self.peek()
        if c in ('"', "'"):
            self.string()
        elif c == "[":
            self.advance()
            index = 0
            while self.i < len(self.text):
                self.skip_space(newlines=True)
                if self.peek() == "]":
                    self.advance()
                    return
                if self.peek() == ",":
                    self.advance()
                    index += 1
                    continue
                self.value((*path, f"#{index}"))
        elif c == "{":
            self.advance()
            while self.i < len(self.text):
                self.skip_space()
                if self.peek() == "}":
                    self.advance()
                    return
                if self.peek() == ",":
                    self.advance()
                    continue
                line = self.line
                key = (*path, *self.key())
                self.found.setdefault(key, line)
                self.skip_space()
                if self.peek() == "=":
                    self.advance()
                self.value(key)
        else:
            while self.i < len(self.text) and self.peek() not in ",]}\n#":
                self.advance()

    # -- documents ---------------------------------------------------------------------------

    def scan(self) -> dict[Path, int]:
        table: Path = ()
        while self.i < len(self.text):
            self.skip_space(newlines=True)
            if self.i >= len(self.text):
                break
            line = self.line
            if self.peek(2) == "[[":
                self.advance(2)
                name = self.key()
                count = self.arrays.get(name, 0)
                self.arrays[name] = count + 1
                table = (*name, f"#{count}")
                self.found.setdefault(name, line)
                self.found.setdefault(table, line)
                self.skip_line()
            elif self.peek() == "[":
                self.advance()
                table = self.key()
                self.found.setdefault(table, line)
                self.skip_line()
            else:
                key = (*table, *self.key())
                for n in range(len(table) + 1, len(key) + 1):
                    self.found.setdefault(key[:n], line)
                self.skip_space()
                if self.peek() == "=":
                    self.advance()
                self.value(key)
                self.skip_line()
        return self.found


def key_lines(text: str) -> dict[Path, int]:
    """Every key, table and array element of a valid TOML `text`, with the line it starts on."""
    return _Scanner(text).scan()


def line_of(lines: dict[Path, int], path: Path) -> int | None:
    """The line of `path`, else of its nearest enclosing key or table that has one."""
    for n in range(len(path), 0, -1):
        if path[:n] in lines:
            return lines[path[:n]]
    return None

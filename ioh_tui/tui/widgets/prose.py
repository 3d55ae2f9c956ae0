"""`Prose`: a reply's consecutive paragraphs, drawn line by line from strips kept per paragraph.

Streamed text grows one paragraph at a time. A `Static` draws its whole text again on every
change (wrapping all of it to measure its height, and again to draw it), and every change costs
the screen a layout pass. `Prose` draws through Textual's line API instead: each paragraph is
wrapped once into `Strip`s and kept; a change wraps only the paragraphs that changed (the last,
while a reply streams), and repaints only their lines. The screen is laid out again only when the
block's height changes, not for text that fills a line already there.

The lines are the ones Textual's own paragraph blocks draw: each paragraph is wrapped on its own,
at the same width and with the same styles (`Prose` is a `MarkdownParagraph` to the stylesheet),
with the blank lines their margins leave between them. This leans on two private parts of
Textual's `Content` (`_wrap_and_format`, and the line a formatted line says it comes from), as
`agent_text` does on parts of `Markdown`: both are checked by the tests at the pinned version.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple

from markdown_it.token import Token
from textual.content import Content, _FormattedLine
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownParagraph  # public only as Markdown.BLOCKS' value

from ioh_tui.tui.widgets.settled import settled_size


class Paragraph(NamedTuple):
    """A top-level paragraph of a reply, parsed."""

    token: Token
    """Its `paragraph_open` token."""
    content: Content
    """Its text, styled as Textual's paragraph block styles it."""


class Prose(MarkdownParagraph):
    """Consecutive paragraphs of one reply, drawn as one block; the last may still grow."""

    virtual_size = settled_size()

    def __init__(self, markdown: Markdown, token: Token, first: Content) -> None:
        super().__init__(markdown, token)
        self.parts: list[Content] = [first]
        """Each paragraph's text, styled."""
        self._wrapped = 0
        """How many paragraphs, from the first, are wrapped at `_width` (the rest changed)."""
        self._lines: list[list[_FormattedLine]] = []
        """Each wrapped paragraph's lines, as formatted for `_width`."""
        self._strips: list[list[Strip | None]] = []
        """Each wrapped paragraph's lines, drawn (None: not drawn yet, only measured)."""
        self._starts: list[int] = []
        """The block's line each wrapped paragraph starts on."""
        self._sources: list[int] = []
        """The line of the paragraphs joined (what selection counts) each starts on."""
        self._width = 0
        self._height = 0
        """The block's height in lines at `_width`, as last measured (the layout's figure)."""

    # -- the text --------------------------------------------------------------------------------

    def add(self, paragraph: Content) -> None:
        """Add the paragraph that follows."""
        self.parts.append(paragraph)

    def drop_last(self) -> None:
        """Take the last paragraph out (it is parsed again, with what came after it)."""
        self.parts.pop()
        self._wrapped = min(self._wrapped, len(self.parts))

    def show(self) -> None:
        """Draw the paragraphs as they are now: repaint the changed lines, or lay out if taller.

        The paragraphs from `_wrapped` on changed (the ones added since the last draw).
        """
        if not self._width or not self.is_mounted:
            self.refresh(layout=True)  # not measured yet: the first layout measures it
            return
        changed = self._wrapped
        first = self._starts[changed] if changed < len(self._starts) else self._height
        height = self._measure(self._width)
        if height != self._height:
            self._height = height
            self.refresh(layout=True)
        elif first < height:
            self.refresh(Region(0, first, self._width, height - first))

    @property
    def plain(self) -> str:
        """The block's text, as selecting all of it copies it."""
        return ("\n" * (1 + self.styles.margin.bottom)).join(part.plain for part in self.parts)

    # -- the line API ----------------------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The height of the wrapped paragraphs (wrapping only those not wrapped at `width`)."""
        self._height = self._measure(width)
        return self._height

    def render_line(self, y: int) -> Strip:
        """One line of the block: a paragraph's line, or a blank line between two."""
        width = self.content_size.width
        if width != self._width or self._wrapped < len(self.parts):
            self._measure(width)
        index = bisect_right(self._starts, y) - 1
        if index < 0:
            return Strip.blank(0)  # no paragraph (for a moment, while the last is parsed again)
        lines = self._lines[index]
        row = y - self._starts[index]
        if row >= len(lines):
            return Strip.blank(0)  # a margin between paragraphs
        if self.text_selection is not None:
            # Drawn with the selection, not kept: it changes as the mouse moves.
            return self._draw(self._format(index, self.text_selection)[row])
        strip = self._strips[index][row]
        if strip is None:
            strip = self._strips[index][row] = self._draw(lines[row])
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text (offsets count lines of the paragraphs joined, as drawn)."""
        return selection.extract(self.plain), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        """Draw every line again, with or without the selection."""
        self.refresh()

    def notify_style_update(self) -> None:
        """Styles changed (a theme, a class): every paragraph is wrapped again."""
        super().notify_style_update()
        self._wrapped = 0

    # -- wrapping --------------------------------------------------------------------------------

    def _measure(self, width: int) -> int:
        """Wrap the paragraphs not wrapped at `width`; the block's height in lines."""
        if width != self._width:
            self._width = width
            self._wrapped = 0
        gap = self.styles.margin.bottom
        done = self._wrapped
        del self._lines[done:], self._strips[done:], self._starts[done:], self._sources[done:]
        if done:
            line = self._starts[-1] + len(self._lines[-1]) + gap
            source = self._sources[-1] + self.parts[done - 1].plain.count("\n") + 1 + gap
        else:
            line = source = 0
        for index in range(done, len(self.parts)):
            self._starts.append(line)
            self._sources.append(source)
            lines = self._format(index, None)
            self._lines.append(lines)
            self._strips.append([None] * len(lines))
            line += len(lines) + gap
            source += self.parts[index].plain.count("\n") + 1 + gap
        self._wrapped = len(self.parts)
        return max(0, line - gap)

    def _format(self, index: int, selection: Selection | None) -> list[_FormattedLine]:
        """One paragraph's lines, wrapped as `Content.render_strips` wraps them in a `Static`.

        Each line says which line of the paragraphs joined it comes from (selection reads it),
        as it would in one `Static` holding them all.
        """
        source = self._sources[index]
        selection_style: Style | None = None
        if selection is not None:
            selection_style = Style.from_styles(
                self.screen.get_component_styles("screen--selection")
            )
            start, end = selection
            # The selection counts the joined lines; this paragraph counts from its own first.
            selection = Selection(
                start and start._replace(y=start.y - source),
                end and end._replace(y=end.y - source),
            )
        styles = self.styles
        lines = self.parts[index]._wrap_and_format(
            self._width,
            align=styles.text_align,
            overflow=styles.text_overflow,
            no_wrap=styles.text_wrap == "nowrap",
            line_pad=styles.line_pad,
            selection=selection,
            selection_style=selection_style,
            get_style=self._get_style,
        )
        for line in lines:
            line.y += source
        return lines

    def _draw(self, line: _FormattedLine) -> Strip:
        """A formatted line drawn, as `Visual.to_strips` draws it for a `Static`."""
        strip = Strip(*line.to_strip(self.visual_style))
        if self.auto_links and not self.screen._selecting:
            strip = strip._apply_link_style(self.link_style)
        return strip

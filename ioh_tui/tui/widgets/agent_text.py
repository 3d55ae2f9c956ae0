"""Model text or thinking of one step, fed token by token through Textual's `MarkdownStream`.

Paragraphs, most of a reply, are drawn by `Prose` blocks, one for each run of consecutive
paragraphs rather than one widget a paragraph, through Textual's line API (`prose.py`): a streamed
fragment rewraps and repaints only the paragraph it lands in. Everything else (lists, code,
tables, headings) is drawn by Textual's own Markdown blocks.

Textual's Markdown makes each paragraph a widget: mounting one costs milliseconds of styling, and
every layout pass walks every widget on the screen, so a long reply made each frame slower than
the last (20,000 streamed tokens: 364 paragraph widgets, seconds of layout;
benchmarks/bench_tui_stream.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from functools import cache

from markdown_it import MarkdownIt  # Textual's own Markdown parser (a dependency of textual)
from markdown_it.token import Token
from textual.await_complete import AwaitComplete
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownParagraph  # public only as Markdown.BLOCKS' value
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

from ioh_tui.tui.widgets.prose import Paragraph, Prose
from ioh_tui.tui.widgets.settled import settled_size

FLUSH_S = 1 / 10
"""Fragments are handed to the stream at most this often, as often as the run view shows events
(`RunScreen.frame`). An append that adds a line costs the screen a layout pass and a redraw of the
scrolled pane (15-40 ms on a 2-core machine); at 20 a second a fast stream spent most of the loop
on them (app vs headless 3.2-4.2x; at 10 a second 1.5-2.6x, benchmarks/bench_tui_stream.py)."""
PARSE_CHARS = 4_000
"""A longer batch of text is parsed and drawn this much at a time, the event loop running between.

Parsing is most of what drawing a streamed reply costs (Textual's Markdown parser takes about
2 ms a kilobyte here), and a stream that outruns the screen hands it tens of kilobytes at once:
parsed in one go, that kept keys waiting for a tenth of a second (benchmarks/bench_tui_stream.py).
Slicing changes nothing drawn: a slice ends mid-block as any streamed fragment does."""


@cache
def _parser() -> MarkdownIt:
    """The one parser every block shares (parsing keeps no state between calls).

    Making one costs about 0.3 ms, and a 100-agent run makes a block for every step of every agent.
    """
    return MarkdownIt("gfm-like")


class AgentText(Markdown):
    """One run of streamed model output (text, or thinking with the `-thinking` class).

    Fragments go through a `MarkdownStream`, which batches whatever arrives while the block is
    busy; each append parses only the document's last block again, with what came after it.
    """

    virtual_size = settled_size()

    def __init__(self, *, step: int, thinking: bool = False, agent: int | None = None) -> None:
        super().__init__(classes="-thinking" if thinking else "-text")
        self.step = step
        """The step whose output this is."""
        self.thinking = thinking
        """Whether this block is the model's reasoning rather than its answer."""
        self.agent = agent
        """The agent (sub-agent run id) that produced it; None for the root."""
        self._stream: MarkdownStream | None = None
        self._pieces: list[str] = []
        self._unsent: list[str] = []
        self._timer: Timer | None = None
        self._finished = False
        self._parsed_to = 0
        """Where the document's last block starts in the source: the next append parses from it."""
        self._prose: Prose | None = None
        """The last block while the document ends in a paragraph (it holds that paragraph)."""

    @property
    def text(self) -> str:
        """Everything received so far (the screen may show it up to `FLUSH_S` later)."""
        return "".join(self._pieces)

    @property
    def streaming(self) -> bool:
        """Whether more output may still come."""
        return not self._finished

    async def write(self, fragment: str) -> None:
        """Take a fragment; it reaches the stream at the next flush (once the block is mounted)."""
        self._pieces.append(fragment)
        if self.agent is not None and len(self._pieces) == 1:
            # Sub-agents stream concurrently with the root; each block says whose it is.
            self._unsent.append(f"**[agent {self.agent}]** ")
        self._unsent.append(fragment)
        if self.is_mounted:
            self._schedule()

    def _schedule(self) -> None:
        if self._stream is None:
            # Created on the caller's task (the run screen, or this block's mount), never on the
            # flush timer's: the stream's task mounts blocks into this widget.
            self._stream = Markdown.get_stream(self)
        if self._timer is None:
            self._timer = self.set_timer(FLUSH_S, self._flush, name="flush")

    def on_mount(self) -> None:
        """Mounted (the transcript mounts blocks in batches): stream what came meanwhile.

        After the first refresh: `Markdown` sets its (empty) document as it mounts, which would
        replace anything appended before that.
        """
        if self._unsent:
            self.call_after_refresh(self._caught_up)

    async def _caught_up(self) -> None:
        self._schedule()
        if self._finished:
            await self.close()

    def append(self, markdown: str) -> AwaitComplete:
        """Append a fragment to the document (what the stream calls), paragraphs into `Prose`.

        As Textual's `append` does, the document's last block is parsed again with the fragment
        (it may have grown, or turned into another kind of block) and replaced.
        """
        return AwaitComplete(self._append(markdown))

    async def _append(self, markdown: str) -> None:
        async with self.lock:  # a stopped stream's last append may run alongside another
            for start in range(0, len(markdown), PARSE_CHARS):
                if start:
                    await asyncio.sleep(0)  # the loop runs between two slices
                self._markdown += markdown[start : start + PARSE_CHARS]
                tail = self._markdown[self._parsed_to :]
                tokens = _parser().parse(tail)
                blocks = list(self._blocks(tokens))
                for token in reversed(tokens):
                    if token.map is not None and token.level == 0:
                        lines = tail.splitlines(keepends=True)[: token.map[0]]
                        self._parsed_to += sum(map(len, lines))
                        break
                if blocks:
                    with self.app.batch_update():
                        await self._replace_last(blocks)

    def _blocks(self, tokens: list[Token]) -> Iterator[Paragraph | MarkdownBlock]:
        """The document's top-level blocks: a paragraph as its text, the rest as Textual's blocks.

        A paragraph needs no widget of its own (it goes into a `Prose`), and making one for each
        cost more than parsing it.
        """
        others: list[Token] = []
        opened: Token | None = None
        for token in tokens:
            if token.type == "paragraph_open" and token.level == 0:
                yield from self._parse_markdown(others)
                others, opened = [], token
            elif opened is not None:
                if token.type == "inline":
                    yield Paragraph(opened, self._inline(token))
                elif token.type == "paragraph_close":
                    opened = None
            else:
                others.append(token)
        yield from self._parse_markdown(others)

    def _inline(self, token: Token) -> Content:
        """A paragraph's text, styled as Textual's paragraph block styles it."""
        if self._prose is not None:
            return self._prose._token_to_content(token)
        return MarkdownParagraph(self, token)._token_to_content(token)

    async def _replace_last(self, blocks: list[Paragraph | MarkdownBlock]) -> None:
        """Replace the document's last block with `blocks` (the tail, parsed again)."""
        prose = self._prose
        existing = [child for child in self.children if isinstance(child, MarkdownBlock)]
        if prose is not None:
            prose.drop_last()
            if not prose.parts and not isinstance(blocks[0], Paragraph):
                self._prose = None  # its one paragraph turned into another kind of block
                await prose.remove()
        elif existing:
            last, first = existing[-1], blocks[0]
            if isinstance(first, Paragraph):
                await last.remove()  # a block that turned into a paragraph
            else:
                await last._update_from_block(first)  # Textual's own, in place where it can
                blocks = blocks[1:]
        for block in blocks:
            await self._add(block)
        if self._prose is not None:
            self._prose.show()

    async def _add(self, block: Paragraph | MarkdownBlock) -> None:
        """Put a block at the end: a paragraph into the last `Prose` if the document ends in one."""
        prose = self._prose
        if prose is not None and isinstance(block, Paragraph):
            prose.add(block.content)
            return
        if prose is not None:
            prose.show()  # its last paragraph is finished: drawn as it ends
        if isinstance(block, Paragraph):
            self._prose = Prose(self, block.token, block.content)
            await self.mount(self._prose)
        else:
            self._prose = None
            await self.mount(block)

    async def flush(self) -> None:
        """Hand what came so far to the stream now, not at the next timer."""
        if self._timer is not None:
            self._timer.stop()
        await self._flush()

    async def _flush(self) -> None:
        self._timer = None
        if self._unsent and self._stream is not None:
            batch = "".join(self._unsent)
            self._unsent.clear()
            await self._stream.write(batch)

    async def close(self) -> None:
        """Flush what is pending and stop the stream (the step's output is complete)."""
        self._finished = True
        if not self.is_mounted:
            return  # `on_mount` streams it all and closes
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        await self._flush()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

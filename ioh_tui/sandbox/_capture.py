"""Output capture for one command: a subprocess protocol with a combined byte cap and a live tail.

A protocol rather than `asyncio.create_subprocess_exec` streams because, on Python 3.11,
`Process.wait()` only returns once every pipe is closed: a daemon holding stdout would make a
finished command look like it was still running. `process_exited` fires on the exit itself.
"""

from __future__ import annotations

import asyncio
import codecs
import logging

from ioh_tui.sandbox.base import CapHit, OutputSink

_log = logging.getLogger(__name__)


class Capture(asyncio.SubprocessProtocol):
    """Collects stdout (fd 1) and stderr (fd 2), trips `output` past the cap, tails live."""

    def __init__(self, cap: int | None, sink: OutputSink | None) -> None:
        """Start empty.

        Args:
            cap: combined bytes kept; the first byte past it trips the `output` cap.
            sink: receives decoded text as it arrives (disabled if it raises).
        """
        self._cap = cap
        self._sink = sink
        self._chunks: dict[int, list[bytes]] = {1: [], 2: []}
        self._decoders = {
            fd: codecs.getincrementaldecoder("utf-8")(errors="replace") for fd in (1, 2)
        }
        self._open = {1, 2}
        self._total = 0
        self.cap_hit: CapHit | None = None
        """`output` once the cap was passed."""
        self.tripped = asyncio.Event()
        """Set when a cap was hit (by this capture or by the monitor)."""
        self.exited = asyncio.Event()
        """Set when the leader process has exited (its pipes may still be open)."""
        self.drained = asyncio.Event()
        """Set when both pipes reached end of file."""

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        """Keep `data` up to the cap and pass it to the live tail."""
        if self.cap_hit is not None or fd not in self._chunks:
            return  # past the cap: still read (so writers never block) but keep nothing
        if self._cap is not None and self._total + len(data) > self._cap:
            data = data[: self._cap - self._total]
            self.cap_hit = "output"
            self.tripped.set()
        self._total += len(data)
        self._chunks[fd].append(data)
        self._tail(self._decoders[fd].decode(data))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        """Flush the decoder of a closed pipe; mark the capture drained after the last one."""
        if fd in self._open:
            self._open.discard(fd)
            self._tail(self._decoders[fd].decode(b"", final=True))
        if not self._open:
            self.drained.set()

    def process_exited(self) -> None:
        """The leader exited."""
        self.exited.set()

    def text(self, fd: int) -> str:
        """Everything kept from `fd` (1 or 2), decoded as UTF-8 with replacement."""
        return b"".join(self._chunks[fd]).decode("utf-8", errors="replace")

    def raw(self, fd: int) -> bytes:
        """Everything kept from `fd` (1 or 2)."""
        return b"".join(self._chunks[fd])

    def _tail(self, text: str) -> None:
        if not text or self._sink is None:
            return
        try:
            self._sink(text)
        except Exception:
            # A broken live tail must not stop the capture or the command; drop it.
            _log.exception("on_output sink failed; live output disabled for this command")
            self._sink = None

"""Processes: the commands the sandbox is running — pid, command, CPU, memory, age — once a second.

The sandbox starts every command as a child of this process (and nothing else in the app spawns
one: the demo's model server runs in-process), so the live descendants of this process are the
sandbox's commands, wrappers included. psutil reads /proc and blocks, so sampling runs in a
thread; the widget only updates its table on the loop. Sampling lasts as long as the run.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import PurePath
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from ioh_tui.services import ProcessSample, sample_processes
from ioh_tui.tui.describe import duration, one_line

SAMPLE_GROUP = "processes"
"""The worker group of the sampler."""
PERIOD_S = 1.0
"""How often the processes are sampled."""
CPU_WINDOW_S = 0.2
"""How long each sample measures CPU over (the sampling thread waits this long)."""
COMMAND_WIDTH = 60
"""Commands are cut to this many characters (the details are in the transcript)."""

Sampler = Callable[[], list[ProcessSample]]
"""What the widget calls (in a thread) to learn the processes: blocking is allowed."""


def memory(mib: float) -> str:
    """Resident memory in short form: `14.2M`, `1.3G`."""
    return f"{mib / 1024:.1f}G" if mib >= 1024 else f"{mib:.1f}M"


class Processes(Widget):
    """A table of the running commands' processes, or `no command running`."""

    def __init__(self, *, sampler: Sampler | None = None, id: str | None = None) -> None:
        super().__init__(id=id, classes="-empty")
        self.sampler: Sampler = sampler or partial(
            sample_processes, os.getpid(), interval_s=CPU_WINDOW_S
        )
        """Where samples come from (attributes down: a snapshot gives a fixed one)."""
        self.samples: list[ProcessSample] = []
        """The processes on screen, in pid order."""
        self.rounds = 0
        """Samples taken (tests wait on it)."""

    def compose(self) -> ComposeResult:
        """The empty state and the table."""
        yield Static("no command running", classes="processes--empty", markup=False)
        table: DataTable[str | Text] = DataTable(
            id="process-table", cursor_type="row", zebra_stripes=False
        )
        # Fixed widths: columns that grew to the widest reading ever seen would jitter.
        table.add_column("pid", key="pid", width=7)
        table.add_column("cpu", key="cpu", width=5)
        table.add_column("mem", key="mem", width=7)
        table.add_column("age", key="age", width=7)
        table.add_column("command", key="command")
        yield table

    def on_mount(self) -> None:
        """Titled and empty until the run starts."""
        self.border_title = "processes · none"

    def follow(self, until: asyncio.Future[Any] | None = None) -> Worker[None]:
        """Sample once a second from now until `until` (the run) is done, or the widget goes."""
        return self.run_worker(
            self._poll(until),
            name="process-sampler",
            group=SAMPLE_GROUP,
            description="sample the sandbox's processes",
            exit_on_error=False,
            exclusive=True,
        )

    async def _poll(self, until: asyncio.Future[Any] | None) -> None:
        loop = asyncio.get_running_loop()
        while until is None or not until.done():
            began = loop.time()
            samples = await asyncio.to_thread(self.sampler)
            self.show(samples)
            pause = max(0.0, PERIOD_S - (loop.time() - began))
            if until is None:
                await asyncio.sleep(pause)
            else:
                await asyncio.wait([until], timeout=pause)  # wakes at once when the run ends
        self.show([])  # the run is over: nothing of it runs any more

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed sampler is a notice, not a crash: the run goes on without the pane."""
        if event.worker.group == SAMPLE_GROUP and event.state == WorkerState.ERROR:
            self.notify(f"Process sampling stopped: {event.worker.error}", severity="warning")
            event.stop()

    def show(self, samples: Iterable[ProcessSample]) -> None:
        """One sample: gone processes leave, new ones join, the others' readings change."""
        self.samples = sorted(samples, key=lambda s: s.pid)
        self.rounds += 1
        table = self.query_one("#process-table", DataTable)
        now = {str(s.pid): s for s in self.samples}
        for gone in [row for row in table.rows if row.value not in now]:
            table.remove_row(gone)
        for key, sample in now.items():
            cells = _cells(sample)
            if key in table.rows:
                for column, cell in zip(("cpu", "mem", "age"), cells[1:4], strict=True):
                    table.update_cell(key, column, cell)
            else:
                table.add_row(*cells, key=key)
        table.sort("pid", key=int)
        count = len(self.samples)
        self.border_title = f"processes · {count or 'none'}"
        self.set_class(not count, "-empty")


def _cells(sample: ProcessSample) -> tuple[str, Text, Text, str, str]:
    return (
        str(sample.pid),
        Text(f"{sample.cpu_percent:.0f}%", justify="right"),
        Text(memory(sample.rss_mb), justify="right"),
        duration(sample.age_s),
        one_line(command(sample), COMMAND_WIDTH),
    )


def command(sample: ProcessSample) -> str:
    """The command line with its program by name, not by path (the path eats the column)."""
    program, _, rest = (sample.command or sample.name).partition(" ")
    return f"{PurePath(program).name} {rest}".rstrip()

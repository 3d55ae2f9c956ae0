"""The cluster a run's tree is placed on (`--ray`), as the app shows it. No Textual here.

The fleet knows where each child runs (`placed`) and can count the cluster (`census`, a blocking
call to Ray). `follow` asks both, off the event loop, every `EVERY_S` while the run goes, and
hands the app what to show: the status line's cluster and each agent's node label.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ioh_tui.engine.tree import Fleet
from ioh_tui.fleet.census import Census, node_label

EVERY_S = 1.0
"""How often the cluster is counted while a run goes (a call to Ray's control store each)."""


class ClusterView(Protocol):
    """What the app reads of a fleet (`RayFleet` is one)."""

    @property
    def placed(self) -> Mapping[int, str]:
        """The node id each child runs on, or last ran on, by run id."""
        ...

    def census(self) -> Census | None:
        """The cluster now (blocking); None once the fleet has let go of it."""
        ...


class AppFleet(Fleet, ClusterView, Protocol):
    """A fleet the app drives a tree on and shows."""


def cluster_text(census: Census) -> str:
    """The status line's fact: `ray 2 nodes · 3.5/4 CPUs free`."""
    nodes = f"{census.nodes} node{'' if census.nodes == 1 else 's'}"
    return f"ray {nodes} · {_cpus(census.free_cpus)}/{_cpus(census.total_cpus)} CPUs free"


def _cpus(n: float) -> str:
    return f"{round(n, 2):g}"


Shown = Callable[[Census | None, dict[int, str]], None]
"""Takes the census (None: not counted this time) and each placed agent's node label."""


async def follow(view: ClusterView, until: asyncio.Future[Any], show: Shown) -> None:
    """Show the cluster and the placements every `EVERY_S` until `until` is done, then once more.

    The last look after the end places the children that ended between two looks (the census
    is None by then when the fleet has let go of the cluster: the labels already known serve).
    """
    labels: dict[str, str] = {}
    while True:
        ended = until.done()
        try:
            census = await asyncio.to_thread(view.census)
        except Exception:  # Ray could not count (a node going away): the last count stays shown
            census = None
        if census is not None:
            labels.update(census.labels)
        show(census, {run: node_label(node, labels) for run, node in view.placed.items()})
        if ended:
            return
        await asyncio.wait({until}, timeout=EVERY_S)

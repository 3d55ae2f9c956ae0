"""What the app shows of the cluster: its nodes, its free CPUs, a short label per node.

No Ray here (the app imports this module without `--ray`): `RayFleet.census` reads the figures
from Ray and builds a `Census` with `census_of`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

HERE = "here"
"""The label of the root's node (where the store and the app are)."""
SHORT_ID = 6
"""How many characters of a node's id label it when its address does not."""


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """One node as Ray lists it."""

    node_id: str
    address: str
    """The node's IP address."""
    alive: bool


@dataclass(frozen=True, slots=True)
class Census:
    """The cluster at one moment."""

    nodes: int
    """Nodes alive."""
    free_cpus: float
    total_cpus: float
    labels: Mapping[str, str]
    """A short label by node id, dead nodes' included (a child may have run on one)."""


def census_of(nodes: Sequence[NodeFacts], here: str, free_cpus: float, total_cpus: float) -> Census:
    """The census of `nodes`, `here` being the root's node's id."""
    return Census(sum(n.alive for n in nodes), free_cpus, total_cpus, node_labels(nodes, here))


def node_labels(nodes: Sequence[NodeFacts], here: str) -> dict[str, str]:
    """`here` for the root's node; another node's address, or its short id if nodes share it.

    Several nodes of one machine (or the tests' nodes on loopback) share an address: each is told
    apart by the start of its id.
    """
    shared = Counter(n.address for n in nodes)
    return {
        n.node_id: HERE
        if n.node_id == here
        else n.address
        if n.address and shared[n.address] == 1
        else n.node_id[:SHORT_ID]
        for n in nodes
    }


def node_label(node_id: str, labels: Mapping[str, str]) -> str:
    """A node's label; its short id when the census has not listed it (yet)."""
    return labels.get(node_id) or node_id[:SHORT_ID]

"""What the app shows of a cluster: node labels, the status line's count, an agent's node."""

from __future__ import annotations

from ioh_tui.fleet.census import HERE, NodeFacts, census_of, node_label, node_labels
from ioh_tui.tui.cluster import cluster_text
from ioh_tui.tui.widgets.agent_tree import AgentRow, Ledger, agent_label, root_label

HEAD = NodeFacts("a1b2c3d4e5", "10.0.0.1", alive=True)


def test_the_roots_node_is_here_and_another_machine_is_its_address() -> None:
    other = NodeFacts("f0e1d2c3b4", "10.0.0.2", alive=True)
    assert node_labels([HEAD, other], here=HEAD.node_id) == {
        HEAD.node_id: HERE,
        other.node_id: "10.0.0.2",
    }


def test_nodes_sharing_an_address_are_told_apart_by_their_short_id() -> None:
    # Two node processes of one machine (the tests' cluster, on loopback) share its address.
    one = NodeFacts("1111aaaa", "127.0.0.1", alive=True)
    two = NodeFacts("2222bbbb", "127.0.0.1", alive=False)
    assert node_labels([HEAD, one, two], here=HEAD.node_id) == {
        HEAD.node_id: HERE,
        "1111aaaa": "1111aa",
        "2222bbbb": "2222bb",
    }
    # A node the last census did not list is still named, by its short id.
    assert node_label("3333cccc", {}) == "3333cc"


def test_the_status_line_counts_alive_nodes_and_free_cpus() -> None:
    dead = NodeFacts("deadbeef00", "10.0.0.9", alive=False)
    census = census_of([HEAD, dead], HEAD.node_id, free_cpus=3.7500000001, total_cpus=4.0)
    assert census.nodes == 1 and census.labels[dead.node_id] == "10.0.0.9"
    assert cluster_text(census) == "ray 1 node · 3.75/4 CPUs free"
    two = census_of([HEAD, NodeFacts("b", "10.0.0.2", True)], HEAD.node_id, 0.0, 8.0)
    assert cluster_text(two) == "ray 2 nodes · 0/8 CPUs free"


def test_an_agents_line_names_its_node_after_its_state() -> None:
    row = AgentRow(7, 1, goal="look", state="done", outcome="finished", node="10.0.0.2")
    assert str(agent_label(row)).startswith("✓ agent 7 done @10.0.0.2 · look · ")
    root = AgentRow(1, None, state="running", node=HERE)
    assert str(root_label(root, Ledger())).startswith("⋯ root running @here · tree ")
    # Not on a cluster: no node at all.
    assert "@" not in str(agent_label(AgentRow(8, 1, goal="look")))

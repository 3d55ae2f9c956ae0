"""One local Ray cluster for the session: a head and a second node process (another machine).

Start and stop take seconds, so every Ray test shares it (Ray's testing advice). Ray
binds loopback only, with no dashboard and no usage report.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

# Read when Ray is imported: no usage report, and no address found by routing towards the
# internet (Ray's "cluster" mode asks the route; loopback only here).
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray")

NODE_CPUS = 2


@pytest.fixture(scope="session")
def cluster() -> Iterator[Any]:
    """The head (this process's node) and a second node, each with `NODE_CPUS` CPUs."""
    from ray.cluster_utils import Cluster

    local: dict[str, Any] = {"num_cpus": NODE_CPUS, "node_ip_address": "127.0.0.1"}
    made = Cluster(initialize_head=True, head_node_args={**local, "include_dashboard": False})
    made.add_node(**local)
    ray.init(address=made.address, log_to_driver=False, configure_logging=False)
    made.wait_for_nodes()
    yield made
    ray.shutdown()
    made.shutdown()  # type: ignore[no-untyped-call]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def fleet(cluster: Any) -> AsyncIterator[Any]:
    """One fleet for every Ray test: its actors (a worker process each) are reused."""
    from ioh_tui.fleet.placement import connect

    # A quarter of a CPU each: the pool's idle actors hold their CPUs, and the `exec --ray` test's
    # own driver needs two of the four for its actors.
    made = connect("auto", cpus_per_child=0.25)
    yield made
    await made.close()

"""Real-server harness: private MariaDB servers started, wired for replication and torn down.

`mariadb` is the lifecycle layer: find the binaries, start a topology of servers in a private
temporary directory, run SQL on them, crash and restart them, and always clean up.
"""
from replcheck.harness.mariadb import (
    Channel,
    Cluster,
    HarnessError,
    Node,
    ServerBinaries,
    ServerNotFound,
    ServerStartError,
    SqlError,
    Topology,
    TopologyError,
    find_server,
    free_port,
    wait_for,
)

__all__ = [
    "Channel", "Cluster", "HarnessError", "Node", "ServerBinaries", "ServerNotFound", "ServerStartError", "SqlError",
    "Topology", "TopologyError", "find_server", "free_port", "wait_for",
]

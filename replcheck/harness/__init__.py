"""Real-server harness: private MariaDB servers started, wired for replication and torn down.

The lifecycle by job: `binaries` finds the build, `topology` checks the servers and channels asked
for, `processes` starts and always ends what runs, `sqlclient` talks SQL through the `mariadb`
client, and `mariadb.Cluster` puts them together (start a topology in a private temporary directory,
run SQL, crash and restart servers, clean up).
"""
from replcheck.harness.binaries import ServerBinaries, find_server
from replcheck.harness.errors import HarnessError, ServerNotFound, ServerStartError, SqlError, TopologyError
from replcheck.harness.mariadb import Cluster
from replcheck.harness.processes import free_port, wait_for
from replcheck.harness.topology import Channel, Node, Topology

__all__ = [
    "Channel", "Cluster", "HarnessError", "Node", "ServerBinaries", "ServerNotFound", "ServerStartError", "SqlError",
    "Topology", "TopologyError", "find_server", "free_port", "wait_for",
]

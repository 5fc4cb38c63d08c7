"""Incident events (WL#3464): a mark in the binlog that changes were lost on the way to it.

The master writes an Incident_log_event (a code and an optional message) and rotates to a fresh
binlog, so the log after the gap is clean. A replica's SQL thread stops on any incident with
ER_SLAVE_INCIDENT; the DBA resumes just after it with SQL_SLAVE_SKIP_COUNTER = 1 and START SLAVE.
"""
from __future__ import annotations

from replcheck.spec import formats as F
from replcheck.spec.formats import ER_STMT_CACHE_FULL

INCIDENT_NONE, INCIDENT_LOST_EVENTS = 0, 1
SYMBOLS = {INCIDENT_NONE: "NONE", INCIDENT_LOST_EVENTS: "LOST_EVENTS"}  # INCIDENT_COUNT = 2

ER_SLAVE_INCIDENT = 1590
ER_TRANS_CACHE_FULL = 1197
ER_ERROR_ON_WRITE = F.ER_ERROR_ON_WRITE

# The seed's three gaps, with the messages the cluster code gives them.
GAP_MESSAGES = {
    "cluster_node_crash": "Cluster did not provide continuous replication log",
    "server_crash": "mysqld startup: events queued before the crash were lost",
    "network_outage": "Network outage between NDB node and MySQL server",
}
BINLOG_WRITE_MESSAGE = "error writing to the binary log"

def symbol(code: int) -> str:
    return SYMBOLS.get(code, "UNKNOWN")


def error_message(code: int, message: str, mariadb: bool = False) -> str:
    """Last_SQL_Error for an incident, in the seed's words: ER_SLAVE_INCIDENT, which MySQL spells
    'occured' (5.1 to 8.0) and MariaDB 'occurred' (its rpl_incident.result)."""
    return f"The incident {symbol(code)} {'occurred' if mariadb else 'occured'} on the master. Message: {message or '<none>'}"


def binlog_failure(engine: str, failure: str, mariadb: bool = False) -> tuple[int, str, bool]:
    """(client errno, message, whether changes were committed and so need an incident) when a
    statement's changes cannot be binlogged. A transactional change that overflows the cache is
    rolled back; a non-transactional one has happened and cannot be undone (Bug #43929).
    ER_STMT_CACHE_FULL's text ends at 'storage.' in MariaDB (binlog_incident.result)."""
    if failure == "cache_overflow":
        if engine == "innodb":
            return ER_TRANS_CACHE_FULL, ("Multi-statement transaction required more than 'max_binlog_cache_size' "
                                         "bytes of storage; increase this mysqld variable and try again"), False
        return ER_STMT_CACHE_FULL, ("Multi-row statements required more than 'max_binlog_stmt_cache_size' bytes of "
                                    + ("storage." if mariadb else "storage; increase this mysqld variable and try again")), True
    # A failed binlog write of a transactional change on MariaDB, where the binlog is the transaction
    # coordinator: log_and_order fails, and ha_commit_trans (sql/handler.cc) rolls the transaction
    # back ("Transaction was rolled back"): nothing to mark with an incident (MDEV-21443's bug is
    # the incident written anyway). A non-transactional change has happened and needs one.
    committed = not (mariadb and engine == "innodb")
    return ER_ERROR_ON_WRITE, "Error writing file 'binlog' (errno: 28 \"No space left on device\")", committed

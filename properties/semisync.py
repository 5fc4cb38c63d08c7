"""Semi-synchronous replication (WL#1720, WL#6355, WL#7169, MDEV-11853, MDEV-21117): one check per requirement.

The checks rebuild from observations alone: where each client transaction ends in its master's
binlog, which replicas hold that position in their relay logs and when, the acks the master
received, the master's semi-sync status over time (server_status samples), and the settings in
force (trace header, SET GLOBAL statements). Order within one instant is the trace's line order.
"""
from __future__ import annotations

# Importing each module registers its properties, in this order (the order of a Judgement's verdicts).
from . import semisync_timeline, semisync_ack, semisync_timeout, semisync_counters, semisync_failover  # noqa: F401
from .semisync_timeline import NO_SLAVE, STATUS, TIMEOUT_LOG, VARIABLES, SemiSyncIndex, Timeline, index  # noqa: F401

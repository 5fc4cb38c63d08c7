"""Hypothesis state machine for global group IDs and their crash recovery.

Three --rpl-hierarchical servers, a root master A with slaves B and C (side by side, or chained
A -> B -> C). Commits on the root, local writes on slaves (filtered), crashes armed at every
crash point of the design (before/after the binlog write, between engine commit and the
relay-log.info flush, during start-up recovery before/after the new binlog; inside a binlog write
or before its sync), kill -9 or a machine crash (under sync_binlog = 1 and
innodb_flush_log_at_trx_commit = 1), clean restarts, FLUSH LOGS, SET BINLOG_GROUP_ID, PURGE BINARY LOGS, reconnects by group ID, failover
to the most advanced slave and restores of the failed master. Every group-ID and recovery property holds after every step.
"""
from __future__ import annotations

from replcheck.model.steps.groupid import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class GroupIdMachine(family_machine(FAMILY)):
    """Commits, filtered local writes, crashes at every crash point, kill -9, restarts, FLUSH
    LOGS, SET BINLOG_GROUP_ID, PURGE BINARY LOGS, reconnects by group ID, failover to the most
    advanced slave and restores; every group-ID and recovery property holds after every step."""

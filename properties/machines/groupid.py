"""Hypothesis state machine for global group IDs and their crash recovery.

Three --rpl-hierarchical servers, a root master A with slaves B and C (side by side, or chained
A -> B -> C). Commits on the root, local writes on slaves (filtered), crashes armed at every
crash point of the design (before/after the binlog write, between engine commit and the
relay-log.info flush, during start-up recovery before/after the new binlog), kill -9, clean
restarts, FLUSH LOGS, SET BINLOG_GROUP_ID, PURGE BINARY LOGS, reconnects by group ID, failover
to the most advanced slave and restores of the failed master. Every group-ID and recovery property holds after every step.
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from replcheck.generate import GroupIds
from replcheck.model import recovery as R

from ..core import machine
from .base import HistoryMachine, requirements_of

REQUIREMENTS = requirements_of("groupid", "recovery")
SERVERS = GroupIds.SERVERS


@machine(*REQUIREMENTS)
class GroupIdMachine(HistoryMachine):
    """Commits, filtered local writes, crashes at every crash point, kill -9, restarts, FLUSH
    LOGS, SET BINLOG_GROUP_ID, PURGE BINARY LOGS, reconnects by group ID, failover to the most
    advanced slave and restores; every group-ID
    and recovery property holds after every step. The steps themselves are GroupIds', which the
    campaign generator takes too."""

    REQUIREMENTS = REQUIREMENTS
    # how GroupIds grows a History (replcheck.generate.Builder's names)
    op = HistoryMachine._op
    trx_name = HistoryMachine._trx_name

    @initialize(chain=st.booleans(), latency=st.sampled_from(GroupIds.LATENCIES),
                transactional=st.sampled_from(GroupIds.TRANSACTIONAL))
    def topology(self, chain, latency, transactional):
        self.g = GroupIds(self, "state-machine", chain, latency, transactional)

    @rule(statements=st.integers(1, 3), ddl=st.booleans())
    def commit(self, statements, ddl):
        self.g.commit(statements, ddl)

    @rule(node=st.sampled_from(SERVERS))
    def local_write_on_slave(self, node):
        self.g.local_write_on_slave(node)

    @rule(node=st.sampled_from(SERVERS), point=st.sampled_from(R.CRASH_POINTS), pause=st.integers(300_000, 2_000_000))
    def crash_at_point(self, node, point, pause):
        self.g.crash_at_point(node, point, pause)

    @rule(node=st.sampled_from(SERVERS), pause=st.integers(0, 2_000_000), clean=st.booleans())
    def crash_and_restart(self, node, pause, clean):
        self.g.crash_and_restart(node, pause, clean)

    @rule(node=st.sampled_from(SERVERS))
    def restart(self, node):
        self.g.restart(node)

    @rule(node=st.sampled_from(SERVERS))
    def flush_logs(self, node):
        self.g.flush_logs(node)

    @rule(step=st.integers(1, 1000))
    def set_group_id(self, step):
        self.g.set_group_id(step)

    @rule(node=st.sampled_from(SERVERS))
    def purge(self, node):
        self.g.purge(node)

    @rule(node=st.sampled_from(SERVERS))
    def connect_by_group_id(self, node):
        self.g.connect_by_group_id(node)

    @rule(pause=st.integers(0, 1_000_000))
    def failover(self, pause):
        self.g.failover(pause)

    @rule(donor=st.sampled_from(SERVERS))
    def restore(self, donor):
        self.g.restore(donor)

"""Hypothesis state machine for global group IDs and their crash recovery.

Three --rpl-hierarchical servers, a root master A with slaves B and C (side by side, or chained
A -> B -> C). Commits on the root, local writes on slaves (filtered), crashes armed at every
crash point of the design (before/after the binlog write, between engine commit and the
relay-log.info flush, during start-up recovery before/after the new binlog), kill -9, clean
restarts, FLUSH LOGS, SET BINLOG_GROUP_ID, failover to the most advanced slave and restores of
the failed master. Every group-ID and recovery property holds after every step.
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from replcheck.model import recovery as R

from ..core import machine
from .base import HistoryMachine, requirements_of

REQUIREMENTS = requirements_of("groupid", "recovery")
SERVERS = ("A", "B", "C")


@machine(*REQUIREMENTS)
class GroupIdMachine(HistoryMachine):
    """Commits, filtered local writes, crashes at every crash point, kill -9, restarts, FLUSH
    LOGS, SET BINLOG_GROUP_ID, failover to the most advanced slave and restores; every group-ID
    and recovery property holds after every step."""

    REQUIREMENTS = REQUIREMENTS

    @initialize(chain=st.booleans(), latency=st.sampled_from([0, 1000, 200_000]),
                transactional=st.sampled_from([(True, True, True), (True, False, True), (True, True, False)]))
    def topology(self, chain, latency, transactional):
        links = [("A", "B"), ("B", "C")] if chain else [("A", "B"), ("A", "C")]
        nodes = [{"id": n, "rpl_hierarchical": True, "rpl_transaction_enabled": t} for n, t in zip(SERVERS, transactional)]
        self.header = {"schema": "replcheck.history/1", "name": "state-machine", "sample_every_us": 900_000,
                       "topology": {"nodes": nodes, "channels": [{"source": s, "replica": r, "latency_us": latency}
                                                                 for s, r in links]}}
        self.root = "A"
        self.source = {r: s for s, r in links}
        self.failed: set[str] = set()  # failed masters: out of the system until restored

    def _in_system(self, node: str) -> str:
        """The node, or the root if the node is a failed master awaiting its restore."""
        return self.root if node in self.failed else node

    @rule(statements=st.integers(1, 3), ddl=st.booleans())
    def commit(self, statements, ddl):
        self._op("trx", self.root, trx=self._trx_name(), statements=[{}] * statements, **({"ddl": True} if ddl else {}))

    @rule(node=st.sampled_from(SERVERS))
    def local_write_on_slave(self, node):
        if node != self.root and node not in self.failed:
            self._op("trx", node, trx=self._trx_name())

    @rule(node=st.sampled_from(SERVERS), point=st.sampled_from(R.CRASH_POINTS), pause=st.integers(300_000, 2_000_000))
    def crash_at_point(self, node, point, pause):
        """Arm a crash point, drive a server through it (a commit on the root reaches every
        server's commit points; a kill reaches the recovery points), then restart it."""
        node = self._in_system(node)
        self._op("crash", node, point=point)
        if point in R.COMMIT_POINTS:
            self._op("trx", self.root, trx=self._trx_name())
        else:
            self._op("crash", node)
        for _ in range(1 if point in R.COMMIT_POINTS else 2):  # a crash during recovery needs a second start
            self.now += pause
            self._op("restart", node)

    @rule(node=st.sampled_from(SERVERS), pause=st.integers(0, 2_000_000), clean=st.booleans())
    def crash_and_restart(self, node, pause, clean):
        node = self._in_system(node)
        self._op("shutdown" if clean else "crash", node)
        self.now += pause
        self._op("restart", node)

    @rule(node=st.sampled_from(SERVERS))
    def restart(self, node):
        self._op("restart", self._in_system(node))

    @rule(node=st.sampled_from(SERVERS))
    def flush_logs(self, node):
        self._op("flush_logs", self._in_system(node))

    @rule(step=st.integers(1, 1000))
    def set_group_id(self, step):
        self._op("show_master_status", self.root)
        self._op("set_binlog_group_id", self.root, group_id=self._last_id(self.root) + step)

    # No preconditions: a rule that does not apply does nothing, so that deleting a step while
    # shrinking leaves the meaning of the steps after it alone.
    @rule(pause=st.integers(0, 1_000_000))
    def failover(self, pause):
        if self.failed:  # one failed master at a time: it is restored before the next failover
            return
        slaves = sorted(r for r, s in self.source.items() if s == self.root)
        self._op("crash", self.root)
        self.now += pause
        self._op("failover", slaves[0], elect=True)
        self.now += 1
        _, obs = self.trace()
        promoted = [o for o in obs if o["kind"] == "promoted"]
        if promoted and promoted[-1]["old"] == self.root:
            new = promoted[-1]["node"]
            self.failed.add(self.root)
            del self.source[new]
            self.source = {r: (new if s == self.root else s) for r, s in self.source.items()}
            self.root = new

    @rule(donor=st.sampled_from(SERVERS))
    def restore(self, donor):
        if not self.failed:
            return
        node = sorted(self.failed)[0]
        donor = self._in_system(donor)
        self._op("restore", node, **{"from": donor, "source": self.root})
        self.failed.discard(node)
        self.source[node] = self.root

    def _last_id(self, node: str) -> int:
        _, obs = self.trace()
        ids = [o["Group_ID"] for o in obs if o["kind"] == "master_status" and o["node"] == node and "Group_ID" in o]
        return ids[-1] if ids else 0

"""Hypothesis state machine for semi-synchronous replication, with delayed replicas.

A primary A with semi-sync enabled and two replicas (one of them possibly delayed): commits,
reads by other sessions, replicas stopping and starting their IO threads, lost acks, settings
changed on the fly, a shutdown, and a crash of A followed by failover to the most advanced
replica. Every semi-sync and every delay property holds after every step, unless the system
under test is declared to violate it (AFTER_COMMIT and WL#6355).
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule

from ..core import machine
from .base import S, HistoryMachine, requirements_of

MS = 1000
REQUIREMENTS = requirements_of("semisync", "delay")


@machine(*REQUIREMENTS)
class SemiSyncMachine(HistoryMachine):
    """Commits, reads, IO threads stopping, lost acks, SET GLOBAL, shutdown, crash and failover
    around a semi-sync primary; every semi-sync and delay property holds after every step."""

    REQUIREMENTS = REQUIREMENTS

    @initialize(
        timeout_ms=st.sampled_from([500, 2000, 5000]),
        count=st.integers(1, 2),
        delay=st.sampled_from([0, 0, 5]),
        latencies=st.lists(st.sampled_from([1 * MS, 50 * MS, 400 * MS]), min_size=2, max_size=2),
        c_semi=st.booleans(),
        wait_no_slave=st.booleans(),
    )
    def topology(self, timeout_ms, count, delay, latencies, c_semi, wait_no_slave):
        master = {"rpl_semi_sync_master_enabled": True, "rpl_semi_sync_master_timeout": timeout_ms,
                  "rpl_semi_sync_master_wait_for_slave_count": count, "rpl_semi_sync_master_wait_no_slave": wait_no_slave}
        nodes = [{"id": "A", "variables": master},
                 {"id": "B", "variables": {"rpl_semi_sync_slave_enabled": True}},
                 {"id": "C", "variables": {"rpl_semi_sync_slave_enabled": c_semi}}]
        channels = [{"source": "A", "replica": "B", "delay": delay, "latency_us": latencies[0]},
                    {"source": "A", "replica": "C", "latency_us": latencies[1]}]
        self.primary, self.replicas, self.failed_over = "A", ["B", "C"], False
        self.header = {"schema": "replcheck.history/1", "name": "state-machine", "sample_every_us": 700_000,
                       "topology": {"nodes": nodes, "channels": channels}}

    @rule(statements=st.integers(1, 2))
    def commit(self, statements):
        self._op("trx", self.primary, trx=self._trx_name(), statements=[{}] * statements)

    @rule(micros=st.sampled_from([1, 10 * MS, 300 * MS]))
    def another_session_reads(self, micros):
        self.now += micros
        self._op("read", self.primary)

    @rule(data=st.data(), start=st.booleans())
    def io_thread(self, data, start):
        self._op("start_slave" if start else "stop_slave", data.draw(st.sampled_from(self.replicas)), thread="io")

    @rule(data=st.data(), count=st.integers(1, 2))
    def lose_acks(self, data, count):
        self._op("lose_acks", data.draw(st.sampled_from(self.replicas)), count=count)

    @rule(enabled=st.booleans())
    def set_enabled(self, enabled):
        self._op("set_global", self.primary, variable="rpl_semi_sync_master_enabled", value=enabled)

    @rule(count=st.integers(1, 3))
    def set_wait_for_slave_count(self, count):
        self._op("set_global", self.primary, variable="rpl_semi_sync_master_wait_for_slave_count", value=count)

    @precondition(lambda self: not self.failed_over)
    @rule(pause=st.integers(0, 2 * S))
    def shutdown_and_restart(self, pause):
        self._op("shutdown", self.primary)
        self.now += pause
        self._op("restart", self.primary)

    @precondition(lambda self: not self.failed_over)
    @rule(pause=st.integers(1, S))
    def crash_and_failover(self, pause):
        """A dies; the replica holding most of A's binlog takes over (as an operator would choose)."""
        self._op("crash", self.primary)
        self.now += pause
        _, obs = self.trace()
        relayed = {r: sum(1 for o in obs if o["kind"] == "relay" and o["node"] == r and o.get("source") == "A")
                   for r in self.replicas}
        new = max(self.replicas, key=lambda r: (relayed[r], r == "B"))
        self._op("failover", new)
        self.primary, self.replicas, self.failed_over = new, [r for r in self.replicas if r != new], True

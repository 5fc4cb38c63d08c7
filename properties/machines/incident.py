"""Hypothesis state machine for incident events.

A primary A and a replica B, possibly delayed: transactional and non-transactional statements,
binlog cache overflows and write errors, incidents recorded directly or through the injector
(known and unknown codes), the seed's cluster gaps, skip counters, STOP/START SLAVE, and crashes
of the replica. Every incident and every delay property holds after every step.
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from ..core import machine
from .base import S, HistoryMachine, requirements_of

REQUIREMENTS = requirements_of("incident", "delay")


@machine(*REQUIREMENTS)
class IncidentMachine(HistoryMachine):
    """Statements on InnoDB and MyISAM, cache overflows, write errors, cluster gaps, incidents of
    known and unknown codes, skips, STOP/START SLAVE and replica crashes; every incident and delay
    property holds after every step."""

    REQUIREMENTS = REQUIREMENTS

    @initialize(delay=st.sampled_from([0, 0, 3]), latency=st.sampled_from([0, 1000, 200_000]))
    def topology(self, delay, latency):
        self.header = {"schema": "replcheck.history/1", "name": "state-machine", "sample_every_us": 900_000,
                       "topology": {"nodes": [{"id": "A"}, {"id": "B"}],
                                    "channels": [{"source": "A", "replica": "B", "delay": delay, "latency_us": latency}]}}

    @rule(engine=st.sampled_from(["innodb", "myisam"]), statements=st.integers(1, 3),
          failure=st.sampled_from([None, None, "cache_overflow", "write_error"]))
    def commit(self, engine, statements, failure):
        kw = {"trx": self._trx_name(), "engine": engine, "statements": [{}] * statements}
        if failure:
            kw["binlog_failure"] = failure
        self._op("trx", "A", **kw)

    @rule(code=st.sampled_from([0, 1, 1, 9]), via=st.sampled_from(["binlog", "injector"]))
    def record_incident(self, code, via):
        self._op("record_incident", "A", code=code, message="" if code == 0 else "recorded by the test", via=via)

    @rule(cause=st.sampled_from(["cluster_node_crash", "server_crash", "network_outage"]), lost=st.integers(1, 2))
    def cluster_gap(self, cause, lost):
        self._op("cluster_gap", "A", cause=cause, trxs=[self._trx_name() for _ in range(lost)])

    @rule(count=st.integers(1, 3))
    def skip_and_start(self, count):
        self._op("stop_slave", "B", thread="sql")
        self._op("set_global", "B", variable="sql_slave_skip_counter", value=count)
        self._op("start_slave", "B", thread="sql")

    @rule(thread=st.sampled_from([None, "sql", "io"]), start=st.booleans())
    def slave_threads(self, thread, start):
        self._op("start_slave" if start else "stop_slave", "B", **({"thread": thread} if thread else {}))

    @rule(pause=st.integers(0, S), recovery=st.booleans())
    def replica_crash(self, pause, recovery):
        self._op("crash", "B")
        self.now += pause
        self._op("restart", "B", relay_log_recovery=recovery)

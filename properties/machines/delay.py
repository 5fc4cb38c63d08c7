"""Hypothesis state machine for delayed replication.

It grows a History one operation at a time (commits, time passing, STOP/START SLAVE, CHANGE
MASTER, RESET SLAVE, crashes, clock steps, log rotation) on a topology drawn at the start
(single replica, chain or fan-out, with clock offsets), runs the model on it, and checks every
delay property on the resulting Trace after each step. A violation shrinks to a short list of
steps, which Hypothesis prints.
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from ..core import machine
from .base import S, HistoryMachine, requirements_of

TOPOLOGIES = {
    "pair": (["A", "B"], [("A", "B")]),
    "chain": (["A", "B", "C"], [("A", "B"), ("B", "C")]),
    "fan-out": (["A", "B", "C"], [("A", "B"), ("A", "C")]),
}


@machine(*requirements_of("delay"))
class DelayMachine(HistoryMachine):
    """Commits, waits, STOP/START SLAVE, CHANGE MASTER, RESET SLAVE, crashes and clock steps on
    a pair, a chain or a fan-out; every delay property holds after every step."""

    REQUIREMENTS = requirements_of("delay")
    # Long enough for both hops of a chain to wait out their largest delays (8 s each, D4: the
    # end-to-end delay is their sum): a shorter tail leaves C nothing applied to judge.
    TAIL_US = 2 * 8 * S + 4 * S

    @initialize(
        shape=st.sampled_from(sorted(TOPOLOGIES)),
        delays=st.lists(st.integers(0, 8), min_size=2, max_size=2),
        offsets=st.lists(st.sampled_from([0, 0, -3 * S, 2 * S + 400_000, 3600 * S]), min_size=3, max_size=3),
        latency=st.sampled_from([0, 1000, 300_000]),
        old_master=st.booleans(),
    )
    def topology(self, shape, delays, offsets, latency, old_master):
        names, links = TOPOLOGIES[shape]
        nodes = [{"id": n, "clock_offset_us": off} for n, off in zip(names, offsets)]
        if old_master:
            nodes[0]["commit_timestamps"] = False
        channels = [{"source": s, "replica": r, "delay": d, "latency_us": latency} for (s, r), d in zip(links, delays)]
        self.replicas = [r for _, r in links]
        self.header = {"schema": "replcheck.history/1", "name": "state-machine", "sample_every_us": 1_300_000,
                       "topology": {"nodes": nodes, "channels": channels}}
        # Every History starts with a commit, so every hop has an event to delay whatever steps
        # Hypothesis draws: without it, chain coverage (WL344.CHAIN.IMMEDIATE, WL7318.F1) hung on
        # the draw order and fell to nothing when unrelated modules shifted it.
        self._op("trx", "A", trx=self._trx_name(), statements=[{"duration_us": 1000, "replica_cost_us": 0}])

    @rule(statements=st.lists(st.tuples(st.integers(0, 3 * S), st.sampled_from([0, 0, 2 * S])), min_size=1, max_size=3),
          ddl=st.booleans(), timestamp=st.sampled_from([None, None, None, 1_700_000_000, 1_700_000_050]))
    def commit(self, statements, ddl, timestamp):
        kw = {"trx": self._trx_name(), "statements": [{"duration_us": d, "replica_cost_us": c} for d, c in statements]}
        if ddl:
            kw["ddl"] = True
            kw["statements"] = kw["statements"][:1]
        if timestamp is not None:
            kw["timestamp"] = timestamp
        self._op("trx", "A", **kw)

    @rule(data=st.data(), thread=st.sampled_from([None, "sql", "io"]))
    def stop_slave(self, data, thread):
        self._op("stop_slave", data.draw(st.sampled_from(self.replicas)), **({"thread": thread} if thread else {}))

    @rule(data=st.data(), thread=st.sampled_from([None, "sql"]))
    def start_slave(self, data, thread):
        self._op("start_slave", data.draw(st.sampled_from(self.replicas)), **({"thread": thread} if thread else {}))

    @rule(data=st.data(), delay=st.one_of(st.integers(0, 10), st.sampled_from(["-1", "2147483648", "x", "2147483647"])))
    def change_master(self, data, delay):
        node = data.draw(st.sampled_from(self.replicas))
        self._op("change_master", node, **({"delay": delay} if isinstance(delay, int) else {"delay_sql": delay}))

    @rule(data=st.data())
    def reset_slave(self, data):
        self._op("reset_slave", data.draw(st.sampled_from(self.replicas)))

    @rule(data=st.data())
    def crash_and_restart(self, data):
        node = data.draw(st.sampled_from(self.replicas + ["A"]))
        self._op("crash", node)
        self.now += data.draw(st.integers(0, 3 * S))
        self._op("restart", node)

    @rule(data=st.data(), delta=st.sampled_from([-2 * S, S + 250_000, 3600 * S]))
    def clock_step(self, data, delta):
        self._op("clock_step", data.draw(st.sampled_from(self.replicas + ["A"])), delta_us=delta)

    @rule()
    def flush_logs(self):
        self._op("flush_logs", "A")

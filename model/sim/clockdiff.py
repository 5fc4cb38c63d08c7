"""The clock difference a replica subtracts for its master's clock, as the servers measure it: at
each connect the IO thread asks `SELECT UNIX_TIMESTAMP()` and keeps its own time() minus the answer,
in whole seconds, until the next connect (get_master_version_and_clock: MariaDB sql/slave.cc,
MySQL sql/rpl_replica.cc). The delay counts to when + clock_diff_with_master + MASTER_DELAY
(sql_delay_event) and Seconds_Behind_Master subtracts it. A feature on the connect hook, for the
systems whose mechanics measure it (Mechanics.clock_difference); the seed models compensate the
exact difference, as WL#344 asks.
"""
from __future__ import annotations

from ..delay import US
from .component import Feature
from .state import Channel

NEXT_SECOND = "next_second"  # a channel's clock_reply: the answer reaches the replica in the next second
LATE_MARGIN_US = 50_000  # how far into that second (the harness's relay releases it so: harness/proxy.py)


class ClockDiff(Feature):
    """clock_diff_with_master, measured at the IO thread's connect."""

    def on_connect(self, ch: Channel) -> None:
        if self.mech.clock_difference != "measured_at_connect":
            return
        now, epoch = self.sim.now, self.sim.epoch
        answer = self.sim.local(ch.source, now) // US
        got = now
        if ch.clock_reply == NEXT_SECOND:  # held by the network until just into the next second
            got = ((now + epoch) // US + 1) * US + LATE_MARGIN_US - epoch
        ch.clock_diff_s = self.sim.local(ch.node, got) // US - answer
        self.emit("clock_query", ch.node.id, source=ch.source.id, asked=now, answered=now,
                  master_unix_timestamp=answer, clock_diff_with_master=ch.clock_diff_s, held=got != now)

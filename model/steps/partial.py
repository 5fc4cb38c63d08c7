"""Events travel one at a time: the step that cuts a replica's IO thread
between two events, maybe inside a group, so the relay log holds the start of a group and not its
end. Any family with replicas takes it: the partial group meets their delays, semi-sync acks,
incidents and skip counters, and GTID reconnects (MariaDB's skip of what it already queued, the
MySQL flavour's rollback at the source's format description event)."""
from __future__ import annotations

from . import Builder, Draw, Step


def cut_io(b: Builder, d: Draw) -> None:
    """The connection of one replica drops after it queues its next 1..4 events of groups (a
    one-statement group is three: GTID, statement, XID), then reconnects at once or stops as STOP
    SLAVE IO_THREAD would (a START SLAVE of the family's, or its failover, starts it again)."""
    node = d.choice(b.state["replicas"])
    after = d.integer(1, 4)
    then = d.choice(["reconnect", "reconnect", "stop"])
    b.op("cut_io", node, after_events=after, **({} if then == "reconnect" else {"then": then}))


CUT_IO = Step("cut_io", 1, cut_io)

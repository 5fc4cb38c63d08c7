"""Events travel one at a time: what a replica does with a group whose
transfer was cut, so that its relay log holds the start of a group and not its end.

The IO thread queues each event as it arrives (MariaDB slave.cc, queue_event); a cut (network
drop, STOP SLAVE IO_THREAD, a crash of either side) can leave a partial group at the relay log's
tail. The reconnect completes it or replaces it: by position the source resumes after the last
event received; MariaDB by GTID asks from Gtid_IO_Pos, which moves only with whole groups, and
skips the events of the partial group it already queued; MySQL by GTID gets the whole group again
after the source's format description event, on which the SQL thread rolls the partial copy back.
"""
from __future__ import annotations


def queued_since_gtid(relay: list) -> int:
    """MariaDB's events_queued_since_last_gtid: how many events of a group the relay log's tail
    holds without its last event (0 when the tail ends a group). Events in no group (fake Rotates,
    format description, Gtid_list) between them do not count (queue_event counts group events)."""
    tail = [e for e in relay if e.ev.trx is not None]
    if not tail or tail[-1].ev.last:
        return 0
    gtid = tail[-1].ev.gtid
    start = max(i for i, e in enumerate(tail) if e.ev.gtid == gtid and e.ev.idx == 0)
    return len(tail) - start


def partial_gtid(relay: list) -> str | None:
    """The GTID of the partial group at the relay log's tail, or None."""
    tail = [e for e in relay if e.ev.trx is not None]
    return tail[-1].ev.gtid if tail and not tail[-1].ev.last else None


def own_events(entries: list) -> list:
    """The events of a group the SQL thread logs when it commits it (log_slave_updates): its own,
    not the fake Rotate, artificial format description or Gtid_list a reconnect inside it put
    between them. Those only move the SQL thread's coordinates (log_event.cc,
    Rotate_log_event::exec_event: "We can't rotate the slave's BINlog"); what the replica logs
    is the transaction its statements wrote."""
    return [e for e in entries if e.ev.trx is not None]

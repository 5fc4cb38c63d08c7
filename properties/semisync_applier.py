"""Replicated groups a replica binlogs (log_slave_updates) while its own semi-sync master is enabled:
its SQL thread's commit waits for an ack as a client's does (MariaDB: report_binlog_update and
ha_commit_trans's wait_after_commit, sql/semisync_master.cc and sql/handler.cc, look at no THD's
kind; MySQL's observer alike). The Trace has no commit row for it: when its wait ended is told by
an ack covering it, a switch OFF (a timeout releases every waiter), or a STOP SLAVE (the kill ends
the wait)."""
from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

from .core import TraceView
from .semisync_timeline import END, SemiSyncIndex, index, line_key

STOPS_SQL = (None, "sql")
# the SQL thread's state while its commit waits (Repl_semi_sync_master::commit_trx enters
# stage_waiting_for_semi_sync_ack_from_slave, MariaDB sql/semisync_master.cc)
ACK_WAIT = "Waiting for semi-sync ACK from slave"


def applier_waits(v: TraceView) -> list[dict]:
    """Each replicated group binlogged on a node whose semi-sync master was enabled, with its place
    in that binlog, whether its counter may be yes_tx or no_tx, and `early`/`late`: the keys between
    which its wait ended (late END: the Trace never shows it ended)."""
    return v.memo("semisync.applier_waits", lambda: _waits(v, index(v)))


def may_still_wait(v: TraceView, node: str, gtid: str, key: tuple[int, int]) -> bool:
    """The group's commit on node may still have been waiting for an ack at key."""
    by_group = v.memo("semisync.applier_waits_by_group", lambda: _by(applier_waits(v), "node", "gtid"))
    return _any_waiting(v, by_group.get((node, gtid), ()), key)


def waits_by_node(v: TraceView) -> dict[str, list[dict]]:
    """applier_waits, per node."""
    return v.memo("semisync.applier_waits_by_node", lambda: _by(applier_waits(v), "node"))


def any_may_wait(v: TraceView, node: str, key: tuple[int, int]) -> bool:
    """A replicated group's commit on node may have been waiting for an ack at key."""
    return _any_waiting(v, waits_by_node(v).get(node, ()), key)


def _any_waiting(v: TraceView, waits, key: tuple[int, int]) -> bool:
    return any(w["on"] and w["early"] <= (key[0] + v.resolution_us, 2**62) and w["late"] > (key[0] - v.resolution_us, key[1])
               for w in waits)


def _by(waits: list[dict], *fields: str) -> dict:
    """The waits by those fields' values (by the one value, for one field)."""
    out: dict = {}
    by = itemgetter(*fields)
    for w in waits:
        out.setdefault(by(w), []).append(w)
    return out


def _waits(v: TraceView, ix: SemiSyncIndex) -> list[dict]:
    res = v.resolution_us
    out = []
    if not ix.ever_enabled:  # no SQL thread's commit waits then
        return out
    for b in _applied(v):
        node, gtid, bkey = b["node"], b["gtid"], line_key(b)
        if node not in ix.vars or not ix.var(node, "rpl_semi_sync_master_enabled", bkey):
            continue
        pos = ix.place(node, b["file"], b["end"], bkey)
        on = ix.on(node, bkey) or ix.unsettled(node, bkey, res)
        if not on:  # OFF: the commit returns at once, counted in no_tx
            out.append({"node": node, "gtid": gtid, "on": False, "early": bkey, "late": bkey, "yes": False, "no": True})
            continue
        acks = ix.acked_by(node, pos, END)
        n = ix.n(node, bkey)
        acked = (acks[n - 1]["t"], 2**62) if len(acks) >= n else END
        timeout = ix.timeout_us(node, bkey)
        released = _released_otherwise(v, node, bkey)
        ended = min(acked, released)
        # acknowledged in time: yes; an ack after the timeout's switch, or none: no; near it, either
        # (binlogged while the status may have been OFF: maybe no_tx at once)
        yes = acked != END and acked[0] <= b["t"] + timeout + res
        # (an ack passed on as its replica stopped may not have counted)
        no = (acked == END or len(ix.acked_by(node, pos, END, surely=True)) < n
              or acked[0] >= b["t"] + timeout - res or not ix.on(node, bkey)
              or released <= (acked[0] + res, 2**62))
        out.append({"node": node, "gtid": gtid, "on": True, "early": bkey, "late": ended, "yes": yes, "no": no})
    return out


def _applied(v: TraceView) -> list[dict]:
    """The ends of the groups an SQL thread binlogged: every group end but a client commit's own
    (its first binlogging there; a rejoined primary's group truncated by its recovery comes back
    from the new primary and is binlogged again by its SQL thread)."""
    clients = {(c["node"], c["gtid"], c.get("trx")) for c in v.kind("commit") if c.get("gtid")}
    seen: set[tuple] = set()
    out = []
    for b in v.kind("binlog"):
        if b.get("last") and b.get("gtid"):
            group = (b["node"], b["gtid"], b.get("trx"))
            if group in clients and group not in seen:
                seen.add(group)
                continue
            out.append(b)
    return out


def _released_otherwise(v: TraceView, node: str, since: tuple[int, int]) -> tuple[int, int]:
    """The first moment after `since` by which every wait on node surely ended without an ack: a
    switch OFF (a timeout, the DBA, the last semi-sync replica gone), the DBA disabling semi-sync, a
    STOP SLAVE of the SQL thread, the server down. (Not a sample naming the group in gtid_slave_pos:
    a model may record it with the group, before the wait.)"""
    ends = v.memo(("semisync.applier_ends", node), lambda: _ends(v, node))
    # an end before the group in the Trace's order does not end its wait (a failover's STOP SLAVE
    # and the START SLAVE that binlogs the group at the same instant); one after it ends the wait
    # by the end of its instant (a sample of that instant may come before the waiter counts)
    i = bisect_right(ends, since)
    return (ends[i][0], 2**62) if i < len(ends) else END


def _ends(v: TraceView, node: str) -> list[tuple[int, int]]:
    ends = [line_key(o) for o in v.of_node(node, "log") if o["message"].startswith("Semi-sync replication switched OFF")]
    ends += [line_key(o) for o in v.of_node(node, "stmt") if o.get("errno") is None and (
        (o.get("op") == "stop_slave" and o.get("thread") in STOPS_SQL)
        or (o.get("op") == "set_global" and o.get("variable") == "rpl_semi_sync_master_enabled" and not o.get("value")))]
    ends += [line_key(o) for o in v.of_node(node, "crash", "shutdown")]
    return sorted(ends)


def counted_by(waits: list[dict], node: str, since: tuple[int, int], sure: tuple[int, int], soon: tuple[int, int]
               ) -> tuple[tuple[int, int], tuple[int, int]]:
    """(lo, hi) of the (yes_tx, no_tx) the node's replicated groups add to a sample: counted for
    sure once their wait surely ended before `sure`, maybe once it may have ended before `soon`."""
    lo, hi = [0, 0], [0, 0]
    for w in waits:
        if w["node"] != node or w["early"] <= since:
            continue
        if w["early"] < soon:
            hi[0] += w["yes"]
            hi[1] += w["no"]
        if w["late"] < sure:
            lo[0] += w["yes"] and not w["no"]
            lo[1] += w["no"] and not w["yes"]
    return (lo[0], lo[1]), (hi[0], hi[1])


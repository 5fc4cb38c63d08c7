"""Replicated groups a replica binlogs (log_slave_updates) while its own semi-sync master is enabled:
its SQL thread's commit waits for an ack as a client's does (MariaDB: report_binlog_update and
ha_commit_trans's wait_after_commit, sql/semisync_master.cc and sql/handler.cc, look at no THD's
kind; MySQL's observer alike). The Trace has no commit row for it: when its wait ended is told by
what the node shows after it (gtid_slave_pos naming it), an ack covering it, a switch OFF (a timeout
releases every waiter), or a STOP SLAVE (the kill ends the wait)."""
from __future__ import annotations

from bisect import bisect_right

from replcheck.spec import formats as F

from .core import TraceView
from .semisync_timeline import END, SemiSyncIndex, index, line_key

STOPS_SQL = (None, "sql")


def applier_waits(v: TraceView) -> list[dict]:
    """Each replicated group binlogged on a node whose semi-sync master was enabled, with its place
    in that binlog, whether its counter may be yes_tx or no_tx, and `early`/`late`: the keys between
    which its wait ended (late END: the Trace never shows it ended)."""
    return v.memo("semisync.applier_waits", lambda: _waits(v, index(v)))


def may_still_wait(v: TraceView, node: str, gtid: str, key: tuple[int, int]) -> bool:
    """The group's commit on node may still have been waiting for an ack at key."""
    by_group = v.memo("semisync.applier_waits_by_group", lambda: _by_group(applier_waits(v)))
    return any(w["on"] and w["early"] <= (key[0] + v.resolution_us, 2**62) and w["late"] > (key[0] - v.resolution_us, key[1])
               for w in by_group.get((node, gtid), ()))


def _by_group(waits: list[dict]) -> dict[tuple[str, str], list[dict]]:
    out: dict[tuple[str, str], list[dict]] = {}
    for w in waits:
        out.setdefault((w["node"], w["gtid"]), []).append(w)
    return out


def _waits(v: TraceView, ix: SemiSyncIndex) -> list[dict]:
    res = v.resolution_us
    out = []
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
        timeout = int(ix.var(node, "rpl_semi_sync_master_timeout", bkey) or 0) * 1000
        ended = min(acked, _released_otherwise(v, node, gtid, bkey))
        # acknowledged in time: yes; an ack after the timeout's switch, or none: no; near it, either
        # (binlogged while the status may have been OFF: maybe no_tx at once)
        yes = acked != END and acked[0] <= b["t"] + timeout + res
        no = (acked == END or acked[0] >= b["t"] + timeout - res or not ix.on(node, bkey)
              or _released_otherwise(v, node, None, bkey) <= (acked[0] + res, 2**62))
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


def _released_otherwise(v: TraceView, node: str, gtid: str | None, since: tuple[int, int]) -> tuple[int, int]:
    """The first moment after `since` by which the wait surely ended without an ack: a switch OFF
    (another waiter's timeout, the DBA), a STOP SLAVE of the SQL thread, the server down, or a
    sample whose gtid_slave_pos names the group (a gtid)."""
    ends, keys, shown = v.memo(("semisync.applier_ends", node), lambda: _ends(v, node))
    i = bisect_right(ends, since)
    found = ends[i] if i < len(ends) else END
    if gtid:
        # the group itself, or a group the node binlogged after it (its SQL thread commits in order);
        # not a higher sequence number of another server (a position the DBA set, a rejoined primary's)
        domain = F.parse_gtid(gtid)[0]
        ended = v.memo(("semisync.group_ends", node), lambda: _group_ends(v, node))
        for j in range(bisect_right(keys, since), len(keys)):
            if keys[j] >= found:
                break
            if any(k >= since for k in ended.get(shown[j].get(domain), ())):
                return keys[j]
    return found


def _group_ends(v: TraceView, node: str) -> dict[str, list]:
    """Per GTID, the keys of its groups' ends in node's binlog."""
    out: dict[str, list] = {}
    for b in v.of_node(node, "binlog"):
        if b.get("last") and b.get("gtid"):
            out.setdefault(b["gtid"], []).append(line_key(b))
    return out


def _ends(v: TraceView, node: str) -> tuple[list, list, list]:
    """The node's moments that end every wait (sorted), and its samples' keys and gtid_slave_pos per domain."""
    ends = [(o["t"], 2**62) for o in v.of_node(node, "log") if o["message"].startswith("Semi-sync replication switched OFF")]
    ends += [(o["t"], 2**62) for o in v.of_node(node, "stmt") if o.get("op") == "stop_slave" and o.get("thread") in STOPS_SQL
             and o.get("errno") is None]
    ends += [(o["t"], 2**62) for o in v.of_node(node, "crash", "shutdown")]
    samples = [o for o in v.of_node(node, "server_status") if o.get("variables", {}).get("gtid_slave_pos")]
    return sorted(ends), [line_key(o) for o in samples], [F.parse_pos(o["variables"]["gtid_slave_pos"]) for o in samples]


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


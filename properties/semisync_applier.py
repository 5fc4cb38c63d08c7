"""Replicated groups a replica binlogs (log_slave_updates) while its own semi-sync master is enabled:
its SQL thread's commit waits for an ack as a client's does (MariaDB: report_binlog_update and
ha_commit_trans's wait_after_commit, sql/semisync_master.cc and sql/handler.cc, look at no THD's
kind; MySQL's observer alike). The Trace has no commit row for it: when its wait ended is told by
what the node shows after it (gtid_slave_pos naming it), an ack covering it, a switch OFF (a timeout
releases every waiter), or a STOP SLAVE (the kill ends the wait)."""
from __future__ import annotations

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
    return any(w["node"] == node and w["gtid"] == gtid and w["on"] and w["early"] <= (key[0] + v.resolution_us, 2**62)
               and w["late"] > (key[0] - v.resolution_us, key[1]) for w in applier_waits(v))


def _waits(v: TraceView, ix: SemiSyncIndex) -> list[dict]:
    local = {(c["node"], c.get("gtid")) for c in v.kind("commit") if c.get("gtid")}
    res = v.resolution_us
    out = []
    for (node, gtid, _), b in ix.ends.items():
        bkey = line_key(b)
        if (node, gtid) in local or node not in ix.vars or not ix.var(node, "rpl_semi_sync_master_enabled", bkey):
            continue
        if F.parse_gtid(gtid)[1] == ix.server_ids.get(node):
            continue  # its own group (a client's whose commit the Trace lacks): not an applier's
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


def _released_otherwise(v: TraceView, node: str, gtid: str | None, since: tuple[int, int]) -> tuple[int, int]:
    """The first moment after `since` by which the wait surely ended without an ack: a switch OFF
    (another waiter's timeout, the DBA), a STOP SLAVE of the SQL thread, the server down, or a
    sample whose gtid_slave_pos names the group (a gtid)."""
    keys = [(o["t"], 2**62) for o in v.of_node(node, "log") if o["message"].startswith("Semi-sync replication switched OFF")]
    keys += [(o["t"], 2**62) for o in v.of_node(node, "stmt") if o.get("op") == "stop_slave" and o.get("thread") in STOPS_SQL
             and o.get("errno") is None]
    keys += [(o["t"], 2**62) for o in v.of_node(node, "crash", "shutdown")]
    domain, _, seq = F.parse_gtid(gtid) if gtid else (None, 0, 0)
    for o in v.of_node(node, "server_status") if gtid else ():
        shown = F.parse_pos(o.get("variables", {}).get("gtid_slave_pos") or "")
        if shown and (g := shown.get(domain)) and F.parse_gtid(g)[2] >= seq and line_key(o) > since:
            keys.append(line_key(o))
            break
    return min((k for k in keys if k > since), default=END)


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


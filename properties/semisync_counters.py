"""The status counters (yes/no transactions, clients), waiters released, no rollback on the master,
and waiting with no slave."""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict

from .core import Check, TraceView, checks, seconds
from .semisync_timeline import DUMP_LOG, END, SemiSyncIndex, Timeline, had_to_wait, index, keys_before, line_key, line_no, may_have_timed_out
from .semisync_ack import hosts_asked
from .semisync_applier import counted_by, waits_by_node
from .groupid_shared import starts_new_binlog


@checks("WL1720.COUNT.TX", needs=("ack",), kinds=("server_status",))
def yes_and_no_counted_exactly(v: TraceView, check: Check) -> None:
    """yes_tx and no_tx count binlogged transactions acknowledged in time, and the others: a
    replicated group binlogged on a semi-sync master too, once its SQL thread's wait ends."""
    ix = index(v)
    # the counters start again from 0 at a restart (a server rebuilt from a backup, `restore`, is one
    # too), at FLUSH STATUS and at RESET MASTER (MariaDB semisync_master.cc after_reset_master)
    resets: dict[str, list] = {}
    for o in v.kind("restart") + v.kind("restore") + [s for s in v.kind("stmt") if (s.get("op") == "flush_status" and s.get("errno") is None)
                                  or starts_new_binlog(s)]:
        resets.setdefault(o["node"], []).append(line_key(o))
    for keys in resets.values():
        keys.sort()
    # per node, the commits a counter counts, by return, and how many of them were acked (yes) or
    # not (no) up to each: a sample's counts are two binary searches
    # A commit binlogged while the status switched between two samples may have waited or not:
    # it counts as either (lo counts it as neither, hi as both).
    # A commit sent to no replica that may have waited, or a failed statement's group whose wait the
    # Trace does not show (ix.maybe_no, ix.maybe_yes), is no counter's, or the counter's its wait may
    # have ended in.
    counted: dict[str, tuple[list, list, list]] = {}
    maybe_no, maybe_yes = {id(c) for c in ix.maybe_no}, {id(c) for c in ix.maybe_yes}
    unsure = {id(c): c for c in ix.maybe_no + ix.maybe_yes}
    for c in sorted(ix.commits + list(unsure.values()), key=lambda c: c["rkey"]):
        if c["ok"] and c["enabled"]:
            acks = len(ix.acked_by(c["node"], c["pos"], c["rkey"])) >= ix.n(c["node"], c["rkey"])
            # an ack passed on as its replica stopped may not have counted: the commit then timed out
            sure = len(ix.acked_by(c["node"], c["pos"], c["rkey"], surely=True)) >= ix.n(c["node"], c["rkey"])
            either = acks and (not sure or ix.unsettled(c["node"], c["bkey"], v.resolution_us))
            acked = had_to_wait(c) and acks
            keys, lows, highs = counted.setdefault(c["node"], ([], [(0, 0)], [(0, 0)]))
            keys.append(c["rkey"])
            if id(c) in unsure:
                lows.append(lows[-1])
                highs.append((highs[-1][0] + (id(c) in maybe_yes), highs[-1][1] + (id(c) in maybe_no)))
                continue
            lows.append((lows[-1][0] + (acked and not either), lows[-1][1] + (not acked and not either)))
            highs.append((highs[-1][0] + (acked or either), highs[-1][1] + (not acked or either)))
    applied_of = waits_by_node(v)  # the replicated groups of each node, for counted_by (most nodes have none)
    empty = ([], [(0, 0)], [(0, 0)])
    for o in v.kind("server_status"):
        counters = o["variables"]
        if "Rpl_semi_sync_master_yes_tx" not in counters:
            continue
        node, key = o["node"], (o["t"], o["_line"])
        lo_yes = lo_no = hi_yes = hi_no = 0  # a node nothing is counted on (most): both counters stay 0
        if node in counted or node in applied_of:
            node_resets = resets.get(node, ())
            n_resets = keys_before(node_resets, key)
            since = node_resets[n_resets - 1] if n_resets else (-1, -1)
            # A sampled trace: the server counts a commit when it releases it, a little before the
            # client sees it return, so commits returned within the resolution after may be counted;
            # and the sample is stamped after the counters were read, so those returned within the
            # resolution before may not be yet.
            soon = (key[0] + v.resolution_us, 2**62) if v.resolution_us else key
            sure = (key[0] - v.resolution_us, -1) if v.resolution_us else key
            keys, lows, highs = counted.get(node, empty)
            first = bisect_right(keys, since)
            (lo_yes, lo_no), (hi_yes, hi_no) = lows[max(bisect_left(keys, sure), first)], highs[max(bisect_left(keys, soon), first)]
            lo_yes, lo_no, hi_yes, hi_no = lo_yes - lows[first][0], lo_no - lows[first][1], hi_yes - highs[first][0], hi_no - highs[first][1]
            if node in applied_of:
                (more_lo_yes, more_lo_no), (more_hi_yes, more_hi_no) = counted_by(applied_of[node], node, since, sure, soon)
                lo_yes, lo_no, hi_yes, hi_no = lo_yes + more_lo_yes, lo_no + more_lo_no, hi_yes + more_hi_yes, hi_no + more_hi_no
        yes, no = counters["Rpl_semi_sync_master_yes_tx"], counters["Rpl_semi_sync_master_no_tx"]
        ok = lo_yes <= yes <= hi_yes and lo_no <= no <= hi_no
        check.judge(ok, "" if ok else _count_message(o, (yes, no), (lo_yes, lo_no), (hi_yes, hi_no)), o)


def _count_message(o: dict, got: tuple[int, int], lo: tuple[int, int], hi: tuple[int, int]) -> str:
    shows = lo if lo == hi else f"{lo} to {hi}"
    return f"{o['node']} at {seconds(o['t'])}: yes_tx, no_tx = {got}, the trace shows {shows}"


@checks("WL1720.CLIENTS", kinds=("server_status",))
def clients_counted(v: TraceView, check: Check) -> None:
    """Rpl_semi_sync_master_clients counts the connected replicas that asked for semi-sync."""
    for o in v.kind("server_status"):
        hosts = o.get("slave_hosts")
        if hosts is None or "Rpl_semi_sync_master_clients" not in o["variables"]:
            continue
        asked = hosts_asked(v, o) if hosts else []
        if None not in asked:
            ok = o["variables"]["Rpl_semi_sync_master_clients"] == sum(asked)
            check.judge(ok, "" if ok else f"{o['node']}: clients {o['variables']['Rpl_semi_sync_master_clients']}, "
                        f"semi-sync replicas connected {sum(asked)}", o)


@checks("WL1720.LIVE.RELEASE")
def waiters_released(v: TraceView, check: Check) -> None:
    """Every waiting session is released; once its transaction is held by N connected semi-sync
    replicas (also after a reconnect), by acknowledgement rather than by the timeout."""
    ix = index(v)
    returned = {(c["node"], c.get("gtid"), c.get("trx")) for c in v.kind("commit")}
    # A GTID's origin is the server its server_id names: a polled trace reads the binlogs at the end,
    # where a truncated transaction its new primary sent back appears first on the new primary.
    by_id = ix.by_server_id
    origin: dict[str, str] = {}
    for x in v.kind("binlog"):
        if x.get("gtid") and x["gtid"] not in origin:  # the first binlog of it names it
            sid = x["gtid"].split("-")
            origin[x["gtid"]] = by_id.get(int(sid[1]) if len(sid) == 3 and sid[1].isdigit() else None, x["node"])
    for (node, gtid, trx), b in ix.ends.items():
        if origin.get(gtid) == node:  # a client's transaction, not one relayed through this node
            check.judge((node, gtid, trx) in returned, f"the commit of {trx} on {node} never returned", b)
    for c in ix.commits:
        if not (had_to_wait(c) and c["ok"]):
            continue
        node = c["node"]
        chances: dict[str, int] = {}
        for a in ix.acked_by(node, c["pos"], END, surely=True):
            chances[a["replica"]] = a["t"]
        for replica, reach in ix.relayed.get(node, {}).items():
            # The first reconnect after the binlog write once the replica held the commit: it acks
            # at the reconnect (holding only grows, and later reconnects come no sooner).
            held = reach.first(c["pos"], END)
            keys = ix.dump_keys_by_sid.get((node, ix.server_ids.get(replica)), [])
            i = bisect_right(keys, max(c["bkey"], line_key(held))) if held is not None else len(keys)
            while i < len(keys) and ix.dump_cut(replica, keys[i]):
                i += 1
            # a relay log thrown away since (CHANGE MASTER with both threads stopped, RESET SLAVE)
            # holds the commit no more: that reconnect has nothing of it to acknowledge
            if i < len(keys) and held is not None and any(
                    line_key(held) < line_key(d) < keys[i] for d in v.of_node(replica, "relay_log_recovery")):
                continue
            if i < len(keys):
                check.reached("a reconnect of a replica holding a waiting commit")
                # the note comes from the dump thread as it starts, where dump_start takes the
                # replica's place for its reply (sql/semisync_master.cc): a latency's slack
                chances[replica] = min(chances.get(replica, 2**62), keys[i][0] + ix.latency(replica))
        ready = ix.release_key(node, c["bkey"], [((t, 0), r) for r, t in chances.items()])
        if ready is None:
            continue
        deadline = max(ready[0], c["binlog"]["t"])
        still_on = all(ix.on(node, (t, 2**62)) for t in (c["binlog"]["t"], deadline))
        if still_on:
            check.judge(c["obs"]["t"] <= deadline + v.resolution_us,
                        f"commit of {c['trx']} on {node} could be released at {seconds(deadline)} but returned at {seconds(c['obs']['t'])}", c["obs"])


@checks("WL1720.NO_ROLLBACK")
def no_rollback_on_master(v: TraceView, check: Check) -> None:
    """A transaction that was never acknowledged still stays committed on the master."""
    ix = index(v)
    waited = [c for c in ix.commits if had_to_wait(c) and (c["ok"] or c["obs"].get("semisync") == "shutdown")]
    if not waited:
        return
    visible = {(o["node"], o["gtid"]) for o in v.kind("visible")}
    # each node's last crash, shutdown or restart says whether it is down at the end
    down_at_end = {o["node"]: o["kind"] != "restart" for o in sorted(v.kind("crash") + v.kind("shutdown") + v.kind("restart"), key=line_no)}
    for c in waited:
        if not down_at_end.get(c["node"]):
            check.judge((c["node"], c["gtid"]) in visible, f"{c['trx']} was rolled back on {c['node']}", c["obs"])


@checks("WL1720.WAIT_NO_SLAVE")
def wait_with_no_slave(v: TraceView, check: Check) -> None:
    """With no semi-sync replica: wait out the timeout if wait_no_slave is ON, go async at once if OFF."""
    ix = index(v)
    tol = v.resolution_us
    for c in ix.commits:
        node = c["node"]
        if not (c["ok"] and c["enabled"] and c["on_binlog"]):
            continue
        if _clients(v, node).at(c["bkey"]) or ix.acked_by(node, c["pos"], c["rkey"]):
            continue
        timeout = ix.timeout_us(node, c["bkey"])
        waited = c["obs"]["t"] - c["binlog"]["t"]
        if ix.var(node, "rpl_semi_sync_master_wait_no_slave", c["bkey"]) is False:
            check.judge(waited <= tol and not ix.on_settled(node, c["rkey"], tol), f"{c['trx']} waited {seconds(waited)} with no semi-sync replica "
                        "and wait_no_slave OFF", c["obs"])
        elif not ix.holders(node, c["pos"], c["rkey"]) and not _wait_cut_short(ix, c, tol):
            check.judge(waited >= timeout - tol, f"{c['trx']} returned after {seconds(waited)} with no semi-sync replica, "
                        f"timeout {seconds(timeout)}", c["obs"])


def _wait_cut_short(ix: SemiSyncIndex, c: dict, tol: int) -> bool:
    """c's wait ended before its own timeout for a reason of the master's: the DBA disabled
    semi-sync, or another waiter timed out at that instant (a later one too, under a shorter timeout a
    SET GLOBAL gave it). The switch to async ends every wait (WL#1720: no waits while OFF; MariaDB's
    switch_off() signals all waiting sessions)."""
    if not ix.var(c["node"], "rpl_semi_sync_master_enabled", c["rkey"]):
        return True
    # the node's timed-out commits by return time: only those returned within tol of c's can count.
    # A failed statement whose change was binlogged counts when it waited out the timeout: MySQL's
    # rollback of it waits for the ack as a commit does (plugin/semisync/semisync_master_plugin.cc,
    # repl_semi_report_rollback); MariaDB's answers at once and waits at the session's end
    timed_out = ix.v.memo("semisync.timed_out", lambda: _by_return(
        c for c in ix.commits + ix.detached if may_have_timed_out(ix, c, tol)))
    times, commits = timed_out.get(c["node"], ([], []))
    lo, hi = bisect_left(times, c["obs"]["t"] - tol), bisect_right(times, c["obs"]["t"] + tol)
    return any(o["bkey"] != c["bkey"] for o in commits[lo:hi]) or _applier_timed_out(ix, c, tol)


def _applier_timed_out(ix: SemiSyncIndex, c: dict, tol: int) -> bool:
    """An SQL thread's replicated group on c's node, not acknowledged in time and still waiting
    then, whose own timeout fell as c returned: its switch OFF released c too."""
    node, back = c["node"], c["obs"]["t"]
    for w in waits_by_node(ix.v).get(node, ()):
        if w["on"] and w["no"] and w["early"] < c["rkey"]:
            deadline = w["early"][0] + ix.timeout_us(node, w["early"])
            if abs(deadline - back) <= tol and w["late"][0] >= deadline - tol:
                return True
    return False


def _by_return(commits) -> dict[str, tuple[list, list]]:
    """Per node, the commits sorted by the time they returned, and those times."""
    out: dict[str, tuple[list, list]] = {}
    for c in sorted(commits, key=lambda c: c["obs"]["t"]):
        times, same = out.setdefault(c["node"], ([], []))
        times.append(c["obs"]["t"])
        same.append(c)
    return out


def _clients(v: TraceView, node: str) -> Timeline:
    """The semi-sync replicas connected to node over the trace (a frozenset at each change): each
    dump it logged, until that replica's IO thread stops or either server goes down."""
    return v.memo("semisync.clients", lambda: _all_clients(v))[node]


def _all_clients(v: TraceView) -> dict[str, Timeline]:
    """_clients of every node, in one pass over what changes them (a node none changes has none)."""
    lines: dict[str, Timeline] = defaultdict(lambda: Timeline(frozenset()))
    connected: dict[str, set[str]] = defaultdict(set)

    def change(n: str, o: dict, new: set[str]) -> None:
        if new != connected[n]:
            connected[n] = new
            lines[n].set(line_key(o), frozenset(new))

    stops = [o for o in v.kind("stmt") if o["op"] == "stop_slave" and o.get("thread") in (None, "io")]
    for o in sorted(v.kind("log") + v.kind("crash") + v.kind("shutdown") + v.kind("restart") + stops, key=line_no):
        node = o["node"]
        if o["kind"] == "log" and DUMP_LOG.search(o["message"]):
            change(node, o, connected[node] | {o.get("replica")})
        elif o["kind"] in ("crash", "shutdown", "restart"):
            change(node, o, set())
        if o["kind"] in ("crash", "shutdown", "stmt"):
            for n, now in list(connected.items()):
                if node in now:
                    change(n, o, now - {node})
    return lines

"""AFTER_SYNC's invisibility until acknowledged, failover without loss, a shutdown that is no ack,
and a semi-sync primary recovered as a replica."""
from __future__ import annotations

from bisect import bisect_right

from .core import Check, TraceView, checks, seconds
from .recovery import copies, promised, sources_at_end
from .semisync_timeline import had_to_wait, index, keys_before, line_key, may_have_timed_out


@checks("WL6355.AFTER_SYNC.INVISIBLE", needs=("relay",))
def invisible_until_acknowledged(v: TraceView, check: Check) -> None:
    """While ON, no session sees a transaction before N replicas hold it. Not one binlogged after a SET
    GLOBAL rpl_semi_sync_master_wait_point = AFTER_COMMIT changed the server's own wait point: the DBA
    chose the engine commit before the ack for it (the wait point is read at each commit: MySQL
    semisync_source.cc, commitTrx / the after-sync hook)."""
    ix = index(v)
    candidates = [c for c in ix.commits if had_to_wait(c)]
    if not candidates:
        return
    ddl = _ddl_groups(v)
    # by transaction too: after a RESET MASTER a GTID names another group (0-1-1 again)
    waited = {(c["node"], c["gtid"], c["trx"]): c for c in candidates
              if not _set_after_commit(ix, c) and (c["node"], c["gtid"], c["trx"]) not in ddl}
    for o in v.kind("visible"):
        c = waited.get((o["node"], o.get("gtid"), o.get("trx")))
        # What binlog crash recovery commits at a restart is the recovery feature's to judge.
        downs = ix.downs.get(o["node"], [])
        recovered = c is not None and keys_before(downs, line_key(o)) > bisect_right(downs, c["bkey"])
        # Seen at its own commit's return, the row was made visible by the wait's end. Unless that
        # was an ack ("yes"), it was the status gone OFF (a timeout releases every waiter), which a
        # later sample may show; on a polled trace "at" is within the resolution (a poll reads its
        # clock before its rows: a commit of 0.2 ms, after the switch, was seen 0.1 ms before it began).
        # Whether the return was right is WL1720.ACK.WAIT's and TIMEOUT's to judge, as for a read below.
        returned = (c is not None and o["t"] >= c["obs"]["t"] - v.resolution_us
                    and c["obs"].get("semisync") != "yes")
        if c is not None and not recovered and not returned and ix.on(o["node"], line_key(o)):
            held = ix.holders(o["node"], c["pos"], line_key(o))
            check.judge(len(held) >= ix.n(o["node"], line_key(o)),
                        f"{c['trx']} became visible on {o['node']} at {seconds(o['t'])} while ON, held by {sorted(held)}", o)
    by_trx = {(c["node"], c["trx"]): c for c in waited.values()}
    for r in v.kind("read"):
        if not ix.on(r["node"], line_key(r)):
            continue
        for trx in r["seen"]:
            c = by_trx.get((r["node"], trx))
            # Only a read during the wait is this rule's: once the commit returned (acked under the
            # N then in force, or timed out to async) it stays visible whatever N or the status
            # become later; whether it returned rightly is WL1720.ACK.WAIT's and TIMEOUT's to judge.
            if c is not None and line_key(r) < c["rkey"]:
                held = ix.holders(r["node"], c["pos"], line_key(r))
                check.judge(len(held) >= ix.n(r["node"], line_key(r)),
                            f"a session on {r['node']} read {trx} at {seconds(r['t'])} while ON; held by {sorted(held)}", r)


def _ddl_groups(v: TraceView) -> set[tuple[str, str, str | None]]:
    """(node, gtid, trx) of the groups a DDL wrote: a GTID event and one Query event, with no XID or
    COMMIT. A DDL makes its change before its binlog write, so no wait point can hide it: MariaDB's
    mysql_create_table (sql/sql_table.cc) creates the table (mysql_create_table_no_lock, InnoDB
    committing its dictionary change itself) and only then calls write_bin_log, while AFTER_SYNC
    waits inside the binlog group commit, before the engines' commit_ordered
    (MYSQL_BIN_LOG::trx_group_commit_leader, sql/log.cc; Repl_semi_sync_master::wait_after_sync,
    sql/semisync_master.cc). WL#6355 holds back an engine commit, which a DDL has no longer."""
    groups: dict[tuple, list[str]] = {}
    for b in v.kind("binlog"):
        if b.get("gtid"):
            groups.setdefault((b["node"], b["gtid"], b.get("trx")), []).append(b.get("type", ""))
    return {key for key, types in groups.items() if len(types) == 2 and types[1] == "QUERY_EVENT"}


def _set_after_commit(ix, c: dict) -> bool:
    point = ix.vars[c["node"]]["rpl_semi_sync_master_wait_point"]
    now = point.at(c["bkey"])
    return str(now).upper() == "AFTER_COMMIT" and now != point.values[0]


@checks("WL6355.FAILOVER.NO_LOSS")
def failover_loses_nothing(v: TraceView, check: Check) -> None:
    """After failover to the most advanced replica, nothing returned while ON, or read during its wait
    while ON, is lost."""
    ix = index(v)
    visible = {(o["node"], o.get("gtid")) for o in v.kind("visible")}
    for p in v.kind("promoted"):
        old, new = p["old"], p["node"]
        crash = max((line_key(o) for o in v.obs if o["kind"] in ("crash", "shutdown") and o["node"] == old and line_key(o) < line_key(p)),
                    default=None)
        if crash is None:
            continue
        must: dict[str, tuple[str, dict]] = {}
        doubtful: dict[str, dict] = {}
        for c in ix.commits:
            # A wait the timeout may have ended returned as the status switched OFF (commit_trx
            # switches it off, then returns: sql/semisync_master.cc), whatever the last sample showed.
            if c["node"] == old and c["ok"] and c["on_return"] and c["rkey"] < crash \
                    and not may_have_timed_out(ix, c, v.resolution_us):
                # Unacknowledged, with the status switched OFF between the samples around its return:
                # another session's timeout releases every waiting commit (switch_off wakes them all).
                if len(ix.acked_by(old, c["pos"], c["rkey"], surely=True)) < ix.n(old, c["rkey"]) \
                        and ix.unsettled(old, c["rkey"], v.resolution_us):
                    doubtful[c["gtid"]] = c["obs"]
                else:
                    must[c["gtid"]] = ("returned", c["obs"])
        by_trx = {c["trx"]: c for c in ix.commits if c["node"] == old}
        for r in v.kind("read"):
            if r["node"] == old and line_key(r) < crash and ix.on(old, line_key(r)):
                for trx in r["seen"]:
                    # A read during the wait; a commit that returned while OFF (timeout, DBA) was
                    # async, and reading it once the status is ON again gives it no guarantee.
                    if trx in by_trx and line_key(r) < by_trx[trx]["rkey"]:
                        must.setdefault(by_trx[trx]["gtid"], ("read", r))
        for gtid, (how, o) in must.items():
            if _thrown_away(v, new, gtid, p):
                continue
            check.judge((new, gtid) in visible, f"{gtid} ({how} on {old} while ON) is missing on the new primary {new}", o, p)
        for gtid, o in doubtful.items():
            if gtid not in must and (new, gtid) not in visible and not _thrown_away(v, new, gtid, p):
                check.undecidable(f"{gtid} returned on {old} as its status switched OFF within the resolution "
                                  f"({seconds(v.resolution_us)}) and is missing on the new primary {new}: the trace "
                                  f"cannot tell whether it returned while ON", o, p)


def _thrown_away(v: TraceView, node: str, gtid: str, before: dict) -> bool:
    """The node held the group in its relay log, and a DBA's statement threw that log away before the
    line (a CHANGE MASTER with both threads stopped that purges it, RESET SLAVE), or made its SQL
    thread pass the group over (SQL_SLAVE_SKIP_COUNTER): the acknowledged copy semi-sync promised is
    gone by the DBA's act, not lost by the failover (WL#6355 promises the copy the ack was for).
    Relayed again since, the group is owed as before."""
    discards = [o for o in v.of_node(node, "relay_log_recovery", "stmt", "skip") if o["_line"] < before["_line"] and (
        (o["kind"] == "relay_log_recovery" and o.get("reason") == "change_master")
        or (o["kind"] == "stmt" and o["op"] == "reset_slave" and o.get("errno") is None)
        or (o["kind"] == "skip" and o.get("gtid") == gtid and o.get("reason") == "sql_slave_skip_counter"))]
    if not discards:
        return False
    relayed = [r["_line"] for r in v.of_node(node, "relay") if r.get("gtid") == gtid and r["_line"] < before["_line"]]
    return bool(relayed) and max(relayed) < discards[-1]["_line"]


@checks("MARIADB.SEMISYNC.SHUTDOWN", needs=("ack",), kinds=("shutdown",))
def shutdown_is_not_an_ack(v: TraceView, check: Check) -> None:
    """A shutdown gives waiting sessions an error, never a successful commit without the acks."""
    ix = index(v)
    returned_at: dict[tuple[str, int], list[dict]] = {}
    for c in ix.commits:
        returned_at.setdefault((c["node"], c["obs"]["t"]), []).append(c)
    for s in v.kind("shutdown"):
        for c in returned_at.get((s["node"], s["t"]), []):
            # Still waiting at the shutdown: not released as async just before it (DBA, timeout).
            if had_to_wait(c) and c["on_return"] and c["rkey"] < line_key(s):
                # The N in force at the release: lowering wait_for_slave_count releases waiters (WL#7169).
                acked = len(ix.acked_by(c["node"], c["pos"], c["rkey"])) >= ix.n(c["node"], c["rkey"])
                check.judge(acked or not c["ok"], f"shutdown of {s['node']} returned {c['trx']} as committed without acks", c["obs"], s)


# -- recovery of a semi-sync primary restarted as a replica -------------
def _replica_restarts(v: TraceView) -> list[tuple[dict, dict, str]]:
    """(crash, restart, the source it replicates from at the end) for each crash of a node followed
    by its restart with --init-rpl-role=SLAVE, when it replicates again at the end."""
    as_replica = [r for r in v.kind("restart") if r.get("init_rpl_role") == "SLAVE"]
    sources = sources_at_end(v) if as_replica else {}
    out = []
    for r in as_replica:
        if r["node"] not in sources:
            continue
        down = v.of_node(r["node"], "crash", "shutdown").last_before(r["_line"])
        if down is not None and down["kind"] == "crash":
            out.append((down, r, sources[r["node"]]))
    return out


def _visible_before(v: TraceView, node: str, line: int) -> set[str]:
    return {o["trx"] for o in v.of_node(node, "visible").before(line)}


@checks("MARIADB.SEMISYNC.RECOVERY.NO_ERRANT")
def no_errant_after_replica_recovery(v: TraceView, check: Check) -> None:
    """A transaction whose commit the crash cut off, not committed in the engine before it (in
    doubt), is held by the restarted replica at the end only if its new primary holds it too."""
    restarts = _replica_restarts(v)
    counts, witnesses = copies(v) if restarts else ({}, {})  # counted only where a check reads them
    for crash, r, source in restarts:
        node = r["node"]
        engine = _visible_before(v, node, crash["_line"])
        cut_off = [c for c in v.of_node(node, "commit") if c.get("errno") is not None
                   and c.get("start", c["t"]) <= crash["t"] and c["_line"] < r["_line"] and c["trx"] not in engine]
        for c in cut_off:
            w = [o for o in (witnesses.get(node), witnesses.get(source)) if o]
            check.judge(counts.get(node, {}).get(c["trx"], 0) == 0 or counts.get(source, {}).get(c["trx"], 0) >= 1,
                        f"{node} holds {c['trx']}, left in doubt by its crash, which its new primary {source} never had",
                        c, r, *w)


@checks("MARIADB.SEMISYNC.RECOVERY.KEEPS_COMMITTED")
def replica_recovery_keeps_committed(v: TraceView, check: Check) -> None:
    """What the engine committed before the crash survives a recovery as a replica, when the crash
    is one its settings promise to survive."""
    restarts = _replica_restarts(v)
    counts, witnesses = copies(v) if restarts else ({}, {})
    for crash, r, _ in restarts:
        node = r["node"]
        if not promised(v, crash):
            continue
        for trx in sorted(_visible_before(v, node, crash["_line"])):
            check.judge(counts.get(node, {}).get(trx, 0) >= 1,
                        f"{node} lost {trx}, committed in its engine before its crash, when it recovered as a replica",
                        crash, r, *[o for o in (witnesses.get(node),) if o])

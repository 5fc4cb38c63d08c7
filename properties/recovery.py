"""Trace properties of crash recovery with global group IDs: every committed group applied exactly
once on every slave (or the slave stops with the documented error), the halt-on-lower-ID rule,
and the last issued group ID found again at start.

Exactly-once reads the `data` observations (how many copies of each client transaction a server
holds once replication is quiet) when the trace has them, as a real server's trace does, and
otherwise counts the groups the SQL thread committed from `apply`/`rollback` observations.
"""
from __future__ import annotations

from collections import Counter

from replcheck.spec import formats as F

from .core import Check, TraceView, checks
from .groupid import current_id, hierarchical, of_node


def sources_at_end(v: TraceView) -> dict[str, str]:
    """Each slave's master once the history is over: the topology, then promotions, restores and
    CHANGE MASTER TO MASTER_HOST."""
    src = {r: c["source"] for r, c in v.channels.items()}
    for o in v.obs:
        if o["kind"] == "promoted":
            src.pop(o["node"], None)
            for r, s in list(src.items()):
                if s == o["old"]:
                    src[r] = o["node"]
        elif o["kind"] == "restore":
            src[o["node"]] = o["source"]
        elif o["kind"] == "stmt" and o.get("op") == "change_master" and o.get("master_host") and o.get("errno") is None:
            src[o["node"]] = o["master_host"]
    return src


def _applied_counts(v: TraceView, node: str) -> Counter:
    """Copies the node committed in its engine (`visible`): local commits, groups its SQL thread
    committed, and those crash recovery committed."""
    counts: Counter = Counter()
    for o in v.kind("visible"):
        if o["node"] == node:
            counts[o["trx"]] += 1
    return counts


def copies(v: TraceView) -> tuple[dict[str, Counter], dict[str, dict]]:
    """Per node, the copies of each client transaction it holds once replication is quiet, and the
    `data` observation that says so (none when counted from `visible`)."""
    data = {o["node"]: (Counter(o["counts"]), o) for o in v.kind("data")}
    if data:
        return {n: c for n, (c, _) in data.items()}, {n: o for n, (_, o) in data.items()}
    nodes = {o["node"] for o in v.kind("visible")} | {o["node"] for o in v.kind("apply")}
    return {n: _applied_counts(v, n) for n in nodes}, {}


def stopped_at_end(v: TraceView, node: str) -> bool:
    """The replica is not replicating at the end: down, a thread stopped, or stopped with an error."""
    last = [o for o in v.of_node(node) if o["kind"] in ("status", "crash", "restart", "restore", "shutdown", "data")]
    status = [o for o in last if o["kind"] == "status"]
    if not status or last[-1]["kind"] in ("crash", "shutdown"):
        return True
    s = status[-1]
    return s.get("Slave_SQL_Running") != "Yes" or s.get("Slave_IO_Running") != "Yes"


def _binlogged_since_restore(v: TraceView, node: str) -> set[str]:
    """Transactions in the node's binlog (a restore replaces the binlog with a fresh one)."""
    out: set[str] = set()
    for o in of_node(v, node):
        if o["kind"] == "restore":
            out = set()
        elif o["kind"] == "binlog" and o.get("trx") is not None and o.get("last"):
            out.add(o["trx"])
    return out


@checks("GGID.RECOVERY.EXACTLY_ONCE")
def exactly_once(v: TraceView, check: Check) -> None:
    """Across crashes, restarts, failovers and restores, every group a slave's master binlogged is
    applied on the slave exactly once: never twice; and none missing while the slave replicates
    (a slave stopped, e.g. with error 1643, may lag, never diverge)."""
    counts, witnesses = copies(v)
    sources = sources_at_end(v)
    binlogged = {n: _binlogged_since_restore(v, n) for n in set(sources.values())}
    for node, have in counts.items():
        w = witnesses.get(node, {})
        for trx, n in sorted(have.items()):
            if n != 1 or trx in binlogged.get(sources.get(node), ()):
                check.judge(n <= 1, f"{node} holds {trx} {n} times", *(w and [w]))
        source = sources.get(node)
        if source is None or stopped_at_end(v, node):
            continue
        skipped = {o.get("trx") for o in v.kind("skip") if o["node"] == node}
        for trx in sorted(binlogged.get(source, ()) - skipped):
            if have.get(trx, 0) == 0:
                check.judge(False, f"{node} replicates from {source} but lacks {trx}", *(w and [w]))


@checks("GGID.RECOVERY.HALT")
def halt_on_lower_id(v: TraceView, check: Check) -> None:
    """The SQL thread never plays a group whose ID is not above the last in the slave's binlog: it
    stops with error 1643 and says which IDs (a group replayed after a crash carries the same ID)."""
    hier = hierarchical(v)
    for o in v.kind("apply"):
        if o["node"] in hier and o.get("idx", 0) == 0 and o.get("group_id"):
            last = current_id(v, o["node"], o["_line"])
            check.judge(o["group_id"] > last, f"{o['node']} played group {o['group_id']} ({o.get('trx')}) after {last} was in its binlog", o)
    for o in v.kind("sql_stop"):
        if o.get("errno") == F.ER_SLAVE_GROUP_ID_LOWER:
            last = current_id(v, o["node"], o["_line"])
            said = F.parse_halt_message(o.get("message", ""))
            ok = said is not None and said[1] == last and said[0] <= last
            check.judge(ok, f"{o['node']} stopped with 1643 ({o.get('message')!r}) but its last group ID is {last}", o)


@checks("GGID.RECOVERY.LAST_ID")
def last_id_recovered(v: TraceView, check: Check) -> None:
    """After a restart (clean or after a crash, even one with only an FDE in the last binlog or a
    crash during recovery) the server's group ID is the last one it issued or played."""
    for r in v.kind("restart"):
        after = [o for o in of_node(v, r["node"]) if o["_line"] > r["_line"]]
        status = next((o for o in after if o["kind"] == "master_status"), None)
        if status is None or "Group_ID" not in status or any(
                o["_line"] < status["_line"] and (o.get("group_id") or o["kind"] in ("crash", "shutdown", "restore")) for o in after):
            continue  # only a sample taken before the server wrote or lost anything shows what recovery found
        want = current_id(v, r["node"], r["_line"])
        check.judge(status["Group_ID"] == want, f"{r['node']} restarted with group ID {status['Group_ID']}, its binlog ends at {want}", r, status)

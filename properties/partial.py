"""Trace properties of partial groups in the relay log: a group cut in
transfer is applied as one whole copy or not at all, and what the replica records as received by
GTID names only groups whose every event it holds.

They read what the SQL thread applied (`apply`, with the event's index in its group), what it threw
away (`rollback`, `sql_stop`, a crash), and what the IO thread queued (`relay`): a real server's
trace read from its relay log has the same observations.
"""
from __future__ import annotations

from operator import itemgetter

from .core import Check, TraceView, checks
from .groupid import positions

# What ends the copy the SQL thread had open: it is thrown away, the next copy starts afresh.
_DISCARDS = ("rollback", "sql_stop", "crash", "shutdown", "restart", "promoted")


@checks("PARTIAL.GROUP.WHOLE", needs=("apply",))
def group_applied_whole(v: TraceView, check: Check) -> None:
    """Each node's SQL thread applies a group's events as one copy, first to last, each once: an
    event of a group follows the one before it in the same copy, a group starts only when no
    copy is open, and nothing in no group ends a copy. A rollback, a stop or a crash throws the open
    copy away; a skip (a group already executed, the skip counter) leaves none open."""
    open_: dict[str, tuple[str, int]] = {}  # node -> (trx, index of the next event) of the open copy
    # only those kinds matter: their lists merged in trace order, not a pass over every observation
    for o in sorted([o for kind in (*_DISCARDS, "skip", "apply") for o in v.kind(kind)], key=itemgetter("_line")):
        node, kind = o["node"], o["kind"]
        if kind != "apply":  # a discard, or a skip: it passes what it skips, no copy is open after it
            open_.pop(node, None)
            continue
        if o.get("trx") is None or o.get("idx") is None:
            continue
        trx, idx, have = o["trx"], o["idx"], open_.get(node)
        ok = have is None if idx == 0 else have == (trx, idx)
        if ok:
            check.judge(True, "", o)
        elif idx == 0:
            check.judge(False, f"{node} started {trx} while its copy of {have and have[0]} was open at event {have and have[1]}", o)
        else:
            check.judge(False, f"{node} applied event {idx} of {trx} without events 0..{idx - 1} of the same copy before it", o)
        if o.get("last"):
            open_.pop(node, None)
        else:
            open_[node] = (trx, idx + 1)


@checks("PARTIAL.IO_POS.WHOLE", needs=("relay",))
def io_pos_whole_groups(v: TraceView, check: Check) -> None:
    """Gtid_IO_Pos names a group only once the node's relay log holds its last event: a GTID the
    node has relayed only the start of is not received yet (Bug #69943). A GTID the trace shows no
    relayed event of (a position loaded at start) is not judged here (MARIADB.GTID.IO_POS is).

    A polled server's relay observation is stamped when the read that found it ended, and says
    since when it was written (`since`: the read before began, and it was not whole then). So a
    sample that names a group whose last event a later read found is a violation only if that
    event was written after the sample (since at or after it); written around it (between the
    read before the sample and the sample's SHOW SLAVE STATUS, a few ms) the sample says nothing
    either way and is passed over, as if not taken. A model's relay observation is exact (since
    is its stamp)."""
    ends: dict[tuple[str, str], list[dict]] = {}  # (node, gtid) -> relay observations of its last event
    first: dict[tuple[str, str], int] = {}  # (node, gtid) -> the earliest its first relayed event may have been written
    started: dict[tuple[str, str], int] = {}  # (node, gtid) -> the line of its first relayed event the trace shows
    for o in v.kind("relay"):
        if o.get("gtid"):
            key = (o["node"], o["gtid"])
            first[key] = min(first.get(key, o["t"]), o.get("since", o["t"]))
            started.setdefault(key, o["_line"])
            if o.get("last"):
                ends.setdefault(key, []).append(o)
    whole = {key: min(e["t"] for e in last) for key, last in ends.items()}  # (node, gtid) -> its last event's first stamp
    named: dict[str, tuple[str, ...]] = {}  # a Gtid_IO_Pos -> its GTIDs: samples repeat one, parsed once
    held = 0  # the instances that held, counted at once
    for o in v.kind("status"):
        text = o.get("Gtid_IO_Pos")
        if not text:
            continue
        gtids = named.get(text)
        if gtids is None:
            gtids = named[text] = tuple((positions(text) or {}).values())
        node, t, line = o["node"], o["t"], o["_line"]
        for g in gtids:
            key = (node, g)
            if started.get(key, line) >= line and first.get(key, t) >= t:
                continue
            if whole.get(key, t + 1) <= t:
                held += 1
                continue
            later = next((e for e in ends.get(key, ()) if e["t"] > t), None)
            if later is None or later.get("since", later["t"]) >= t:
                check.judge(False, f"{node}: Gtid_IO_Pos names {g}, of which its relay log holds only the start", o)
    check.passed(held)

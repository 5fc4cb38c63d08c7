"""A full disk under the binlog is not a gap (WL#3464's incidents are for changes the binlog lost):
the servers' binlog write waits for space (MY_WAIT_IF_FULL, model/sim/diskfull.py) and then
writes the group. Judged from the node's `disk_full` and `disk_freed` observations, its commits'
answers and its binlog, as a real server's trace has them.
"""
from __future__ import annotations

from replcheck.spec import formats as F

from .core import Check, TraceView, checks, seconds


def windows(v: TraceView) -> list[tuple[str, int, int | None]]:
    """(node, full since, freed at or None) of each disk_full in the trace."""
    out = []
    for full in v.kind("disk_full"):
        freed = next((o["t"] for o in v.kind("disk_freed") if o["node"] == full["node"] and o["t"] >= full["t"]), None)
        out.append((full["node"], full["t"], freed))
    return out


@checks("WL3464.DISK_FULL", needs=("binlog",), kinds=("disk_full",))
def full_disk_waits(v: TraceView, check: Check) -> None:
    """A commit that began while its server's binlog disk was full returns without a write error, with
    its group in the binlog when it returns OK; no incident is written for it (none asked for, no change lost meanwhile)."""
    for node, since, freed in windows(v):
        end = freed if freed is not None else float("inf")
        binlog = [o for o in v.kind("binlog") if o["node"] == node]
        logged = {o.get("trx") for o in binlog if o.get("last")}
        commits = [c for c in v.kind("commit") if c["node"] == node and since <= c.get("start", c["t"]) < end]
        for c in commits:
            if c.get("errno") in F.SERVER_GONE:
                continue  # the server went away under it: crash recovery decides (DURABLE.*)
            if c.get("errno") in (F.ER_ERROR_ON_WRITE, F.ER_DISK_FULL, F.EE_WRITE):  # the disk's, not a statement's
                check.judge(False, f"{c['trx']} began at {seconds(c['start'])} on {node}, whose binlog disk was full, and "
                                   f"failed with {c['errno']} ({c.get('message', '')}) instead of waiting for space", c)
            elif c.get("errno") is None and c.get("gtid"):  # binlogged: a GTID names its group
                check.judge(c["trx"] in logged, f"{c['trx']} returned OK at {seconds(c['t'])} on {node} (its binlog disk "
                                                f"full from {seconds(since)}) but its group is not in the binlog", c)
        if not commits:
            continue
        until = max(max(c["t"] for c in commits), freed or 0)
        # an incident asked for, or marking a change the binlog lost (a cluster's gap), is another's
        asked = [o for o in v.of_node(node, "stmt", "visible") if since <= o["t"] <= until
                 and (o.get("op") == "record_incident" if o["kind"] == "stmt" else o.get("gtid") is None)]
        marks = [b for b in binlog if b["type"] == "INCIDENT_EVENT" and since <= b["t"] <= until]
        check.judge(bool(asked) or not marks, lambda: f"{node} wrote an incident at {seconds(marks[0]['t'])} while its binlog "
                    f"disk was full (from {seconds(since)}): a commit that waits for space loses nothing", *marks[:1])

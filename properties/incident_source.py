"""Incident checks on the source's side (WL#3464): a requested incident is in the binlog, the
binlog rotates after it, every change the binlog lost is marked, and nothing else is."""
from __future__ import annotations

import bisect

from .core import Check, Seq, TraceView, checks, seconds
from .incident_index import index, key, requested_at, timed


@checks("WL3464.R1", kinds=("stmt:record_incident",))
def incident_recorded_in_binlog(v: TraceView, check: Check) -> None:
    """A requested incident is in the binlog, with its code and message."""
    _judge_record(v, check, "binlog")


@checks("WL3464.R2", kinds=("stmt:record_incident",))
def incident_recorded_through_injector(v: TraceView, check: Check) -> None:
    """An incident recorded through the injector interface lands in the binlog the same way."""
    _judge_record(v, check, "injector")


def _judge_record(v: TraceView, check: Check, via: str) -> None:
    ix = index(v)
    for s in v.kind("stmt"):
        if s["op"] == "record_incident" and s.get("via", "binlog") == via:
            found = [b for b in ix.incident_at.get((s["node"], s["t"]), ()) if key(b) > key(s)
                     and b.get("incident") == s["code"] and b.get("message", "") == s.get("message", "")]
            check.judge(bool(found), f"{s['node']} was asked for incident {s['code']} ({s.get('message')!r}) via {via}; "
                        "its binlog has none", s)


@checks("WL3464.ROTATE")
def rotation_after_incident(v: TraceView, check: Check) -> None:
    """After an incident the binlog rotates: a ROTATE_EVENT, then a fresh file starting with its FDE."""
    ix = index(v)
    for b in ix.incidents:
        log = ix.binlog[b["node"]]
        i = bisect.bisect_left(log.keys, b["_line"])
        nxt = log[i + 1:i + 3]
        ok = (len(nxt) == 2 and nxt[0]["type"] == "ROTATE_EVENT" and nxt[0]["file"] == b["file"]
              and nxt[1]["type"] == "FORMAT_DESCRIPTION_EVENT" and nxt[1]["file"] != b["file"])
        check.judge(ok, f"{b['node']}: the incident at {b['file']}:{b['pos']} is followed by "
                    f"{[(x['type'], x['file']) for x in nxt]}, not a rotation to a fresh binlog", b, *nxt)


@checks("WL3464.GAP")
def every_gap_is_marked(v: TraceView, check: Check) -> None:
    """A change the master made but did not binlog is marked by an incident before anything later is binlogged."""
    ix = index(v)
    for lost in ix.lost:
        if (own := ix.own_incident.get(id(lost))) is not None:
            check.judge(True, "", lost, own)
            continue
        marks = v.memo(("incident.marks", lost["node"]), lambda: timed(
            b for b in ix.binlog.get(lost["node"], ()) if b["type"] == "INCIDENT_EVENT" or b.get("gtid")))
        later = [b for b in [next(marks.after(key(lost)), None)] if b is not None]
        ok = bool(later) and later[0]["type"] == "INCIDENT_EVENT"
        check.judge(ok, f"{lost['trx']} changed {lost['node']} but never reached its binlog, and "
                    f"{'nothing' if not later else later[0]['type'] + ' of ' + str(later[0].get('trx'))} follows, no incident",
                    lost, *later[:1])


@checks("WL3464.NO_FALSE")
def no_incident_without_loss(v: TraceView, check: Check) -> None:
    """An incident that no one asked for follows a change the binlog lost."""
    ix = index(v)
    requested = {(s["node"], s["t"]) for s in v.kind("stmt") if s["op"] == "record_incident"}
    owned = {id(b) for b in ix.own_incident.values()}
    for b in ix.incidents:
        if (b["node"], requested_at(b)) in requested:
            continue
        if id(b) in owned:  # its failing statement's lost change, placed after it by the polls
            check.judge(True, "", b)
            continue
        earlier = ix.incidents_of[b["node"]].last_before(key(b))
        since = key(earlier) if earlier else (-1, -1)
        lost = ix.lost_of.get(b["node"], Seq((), key)).between(since, key(b))
        check.judge(bool(lost), f"{b['node']} wrote an incident at {seconds(b['t'])} ({b.get('message')!r}) with no lost change before it", b)

"""WL#7318: the delay counted from the immediate master's commit timestamp."""
from __future__ import annotations

from replcheck.spec.formats import US

from .core import Check, TraceView, checks, seconds
from .delay_timing import TRX_START, begin_of, gtid_applies, index, judge_due
from .delay_waiting import left_text, seconds_left, waiting_for


# -- WL#7318 ----------------------------------------------------------------------------------
def _commit_ts_applies(v: TraceView) -> list[dict]:
    """The applies WL#7318's rule governs, found once for its four checks."""
    ix = index(v)
    return v.memo("delay.commit_ts_applies", lambda: [a for a in gtid_applies(v) if ix.rule(a) == "wl7318"])


@checks("WL7318.F1")
def immediate_master_reference(v: TraceView, check: Check) -> None:
    """In a chain, the delay is measured from the immediate master's commit."""
    ix = index(v)
    for a in _commit_ts_applies(v):
        if a["type"] in TRX_START and a["source"] in v.channels and (due := ix.due(a)) is not None:
            judge_due(v, check, a, due, tight=True, what=f"{a['source']}'s commit")


@checks("WL7318.F2")
def commit_time_reference(v: TraceView, check: Check) -> None:
    """The delay begins at the commit on the master, not at the transaction's start."""
    ix = index(v)
    for a in _commit_ts_applies(v):
        if a["type"] in TRX_START and (due := ix.due(a)) is not None:
            judge_due(v, check, a, due, tight=True, what="immediate_commit_timestamp + delay")


def _per_trx(v: TraceView, types: frozenset[str], check: Check) -> None:
    """Only the transaction's first event may wait; every other one starts as soon as it is read."""
    first_type: dict[tuple, str] = {}
    for a in _commit_ts_applies(v):
        if a["idx"] == 0:
            first_type[(a["node"], a["gtid"])] = a["type"]
        elif first_type.get((a["node"], a["gtid"])) in types and a.get("read") is not None:
            check.judge(begin_of(a) <= a["read"] + v.resolution_us,
                        lambda: f"{a['node']} paused {seconds(begin_of(a) - a['read'])} inside {a['trx']} before {a['type']}", a)


@checks("WL7318.F3")
def per_transaction_wait(v: TraceView, check: Check) -> None:
    """The wait happens at the GTID event; the transaction's other events follow without waiting."""
    _per_trx(v, frozenset({"GTID_LOG_EVENT"}), check)


@checks("WL7318.ANON")
def anonymous_gtid_wait(v: TraceView, check: Check) -> None:
    """Without GTIDs the wait happens at the ANONYMOUS_GTID_LOG_EVENT, once per transaction."""
    _per_trx(v, frozenset({"ANONYMOUS_GTID_LOG_EVENT"}), check)


@checks("WL7318.F4")
def performance_schema_agrees(v: TraceView, check: Check) -> None:
    """DESIRED_DELAY and REMAINING_DELAY agree with SQL_Delay and SQL_Remaining_Delay."""
    for s in v.kind("status"):
        if "DESIRED_DELAY" in s:
            check.judge(s["DESIRED_DELAY"] == s["SQL_Delay"] and s["REMAINING_DELAY"] == s["SQL_Remaining_Delay"],
                        lambda: f"{s['node']}: P_S ({s['DESIRED_DELAY']}, {s['REMAINING_DELAY']}) vs "
                        f"SHOW SLAVE STATUS ({s['SQL_Delay']}, {s['SQL_Remaining_Delay']})", s)


@checks("WL7318.F5", needs=("relay",))
def delay_in_seconds(v: TraceView, check: Check) -> None:
    """The delay is in seconds everywhere: what CHANGE MASTER set, what the monitoring shows, what is waited."""
    ix = index(v)
    for s in v.kind("status"):
        if "DESIRED_DELAY" not in s or s["Slave_SQL_Running"] != "Yes":
            continue
        w = waiting_for(v, s)
        if w and w[0] == "yes" and s["REMAINING_DELAY"] is not None:
            left = seconds_left(w, s["t"])
            slack = 1 + v.resolution_us / US
            check.judge(left[0] - slack < s["REMAINING_DELAY"] < left[1] + slack,
                        lambda: f"{s['node']}: REMAINING_DELAY {s['REMAINING_DELAY']} but {left_text(left)} s are left", s)
        want = ix.delay_at(s["node"], s["t"], s["_line"])
        if want is not None:
            check.judge(s["DESIRED_DELAY"] == want, lambda: f"{s['node']}: DESIRED_DELAY {s['DESIRED_DELAY']}, configured {want} s", s)


@checks("WL7318.F6")
def fallback_without_commit_timestamps(v: TraceView, check: Check) -> None:
    """From an immediate master that sends no commit timestamps, a WL#7318 replica keeps the WL#344 rule."""
    ix = index(v)
    for a in gtid_applies(v):
        if v.nodes.get(a["node"], {}).get("delay_rule") == "wl7318" and a.get("ict") is None and (due := ix.due(a)) is not None:
            judge_due(v, check, a, due, tight=True, what="WL#344 fallback")


@checks("WL7318.ICT")
def immediate_commit_timestamp(v: TraceView, check: Check) -> None:
    """The GTID event carries the microseconds since the epoch at which the server binlogged the transaction."""
    epoch = v.header.get("epoch_us", 0)
    for b in v.kind("binlog"):
        if b["type"] in TRX_START and v.nodes.get(b["node"], {}).get("commit_timestamps"):
            local = epoch + b["t"] + v.offset_at(b["node"], b["t"], b["_line"])
            check.judge(b.get("ict") is not None and abs(b["ict"] - local) <= v.resolution_us,
                        lambda: f"{b['node']} binlogged {b['trx']} at local {local} µs with immediate_commit_timestamp {b.get('ict')}", b)


@checks("WL7318.NF1")
def delay_on_every_slave(v: TraceView, check: Check) -> None:
    """A delay is honoured on every replica of any topology: chains, fan-outs, replicas that are sources."""
    ix = index(v)
    fan = {}
    for c in v.channels.values():
        fan[c["source"]] = fan.get(c["source"], 0) + 1
    sources = {c["source"] for c in v.channels.values()}
    for a in gtid_applies(v):
        c = v.channels.get(a["node"])
        if c is None or not (c["source"] in v.channels or a["node"] in sources or fan[c["source"]] > 1):
            continue
        due = ix.due_range(a)
        if due is not None and ix.delay_at(a["node"], begin_of(a)):
            judge_due(v, check, a, due[0], tight=False, what="delay on a replica inside a larger topology")

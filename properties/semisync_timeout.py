"""The timeout, switching semi-sync off and back on, N acks (WL#7169), the DBA's switches and the
slave-hosts mode."""
from __future__ import annotations

from bisect import bisect_right

from .core import Check, TraceView, checks, seconds
from .semisync_timeline import END, STATUS, TIMEOUT_LOG, SemiSyncIndex, had_to_wait, index, keys_before, line_key, may_have_timed_out
from .semisync_ack import hosts_asked


@checks("WL1720.TIMEOUT.ASYNC")
def timeout_bounds_the_wait(v: TraceView, check: Check) -> None:
    """No commit waits longer than the timeout; one that waited it out finds the master switched OFF."""
    ix = index(v)
    tol = v.resolution_us
    for c in ix.commits:
        if not had_to_wait(c) or not c["ok"]:
            continue
        timeout = ix.timeout_us(c["node"], c["bkey"])
        waited = c["obs"]["t"] - c["binlog"]["t"]
        check.judge(waited <= timeout + tol, f"commit of {c['trx']} waited {seconds(waited)}, timeout {seconds(timeout)}", c["obs"])
        if 2 * tol > timeout and len(ix.holders(c["node"], c["pos"], c["rkey"])) < ix.n(c["node"], c["rkey"]):
            # The sampling resolution is past half the timeout: a prompt return and a timed-out one look alike.
            check.undecidable(f"commit of {c['trx']} waited {seconds(waited)}: with a resolution of {seconds(tol)} and a timeout of "
                              f"{seconds(timeout)} the trace cannot tell whether it timed out", c["obs"])
        elif waited >= timeout - tol and len(ix.holders(c["node"], c["pos"], c["rkey"])) < ix.n(c["node"], c["rkey"]):
            check.judge(not ix.on_settled(c["node"], c["rkey"], tol), f"commit of {c['trx']} timed out but the status is still ON",
                        c["obs"])


@checks("WL1720.TIMEOUT.LOG")
def timeout_is_logged(v: TraceView, check: Check) -> None:
    """A switch to async on timeout logs the binlog file and position that went unacknowledged."""
    ix = index(v)
    # Any transaction's end: a replica's SQL thread waits for the ack of what it applies and binlogs
    # too (wait_after_commit has no slave-thread exception, sql/semisync_master.cc), so the session that
    # times out first and logs may be that thread, naming its own position (seed 500017's History 39).
    ends = {(b["node"], ix.place(b["node"], b["file"], b["end"], line_key(b))) for b in ix.ends.values()}
    logged: dict[str, list] = {}  # per node, keys of its timeout lines that name a transaction's binlog position
    for o in v.kind("log"):
        if (m := TIMEOUT_LOG.search(o["message"])) and (o["node"], ix.place(o["node"], m.group(1), int(m.group(2)), line_key(o))) in ends:
            logged.setdefault(o["node"], []).append(line_key(o))
    for c in ix.commits:
        if not may_have_timed_out(ix, c, v.resolution_us):
            continue
        # A real server's log line is seen at the next poll: up to the resolution after the return.
        until = max(c["rkey"], (c["obs"]["t"] + v.resolution_us, END[0])) if v.resolution_us else c["rkey"]
        keys = logged.get(c["node"], [])
        found = bisect_right(keys, until) > bisect_right(keys, c["bkey"])
        message = f"commit of {c['trx']} on {c['node']} timed out with no log naming a binlog position"
        if not found and not may_have_timed_out(ix, c, v.resolution_us, surely=True):
            check.undecidable(message.replace("timed out", "may have timed out (the resolution cannot tell)"), c["obs"])
            continue
        check.judge(found, message, c["obs"])


@checks("WL1720.OFF.NO_WAIT")
def no_wait_while_off(v: TraceView, check: Check) -> None:
    """While semi-sync is OFF or disabled, a commit returns as soon as it is binlogged."""
    ix = index(v)
    for c in ix.commits:
        if c["ok"] and not had_to_wait(c):
            # A polled trace dates binlog events by their whole-second timestamps: the write came
            # no earlier than the statement began.
            waited = c["obs"]["t"] - max(c["binlog"]["t"], c["obs"].get("start", c["binlog"]["t"]))
            check.judge(waited <= v.resolution_us, f"commit of {c['trx']} on {c['node']} waited {seconds(waited)} while OFF", c["obs"])


def _switches(ix: SemiSyncIndex, node: str):
    """(key, status, the sample that shows it) where the sampled status changes."""
    line = ix.status[node]
    for i in range(1, len(line.keys)):
        if line.values[i] != line.values[i - 1]:
            yield line.keys[i], line.values[i], ix.shown[node][i - 1]


def _dba_or_restart(v: TraceView, node: str, key) -> bool:
    """A switch the DBA (SET GLOBAL, RESET MASTER) or a restart caused: at that very instant, or for a sampled
    trace within its resolution before the sample that shows it."""
    keys = index(v).dba.get(node, [])
    return keys_before(keys, key) > keys_before(keys, (key[0] - v.resolution_us, -1))


@checks("WL1720.SWITCH_BACK", needs=("ack",), kinds=("ack",))
def switches_back_on_catch_up(v: TraceView, check: Check) -> None:
    """Once the required replicas have caught up with the binlog, the status is ON again by itself."""
    ix = index(v)
    # Per master, each replica's furthest ack since the master last went down: a restarted master
    # starts its ack state afresh, so an ack from before its crash or shutdown catches nothing up.
    reached: dict[str, dict[str, tuple[str, int]]] = {}
    since: dict[str, int] = {}
    for a in v.kind("ack"):
        node, key = a["node"], line_key(a)
        downs = ix.downs.get(node, [])
        down = bisect_right(downs, key)
        if since.get(node) != down:
            since[node], reached[node] = down, {}
        pos = ix.place(node, a["file"], a["pos"], key)
        reached[node][a["replica"]] = max(pos, reached[node].get(a["replica"], pos))
        if ix.on(node, key) or not ix.var(node, "rpl_semi_sync_master_enabled", key):
            continue
        end = ix.binlog_end(node, key)
        if sum(p >= end for p in reached[node].values()) >= ix.n(node, key) and end > ("", 0):
            # Any sample within the resolution: a polled server's relay sees the ack before the server
            # has taken it (its ack receiver thread), and a sample read meanwhile still shows OFF
            # (measured on 10.11 at load 20: flt-semisync-unsent, ON 7 ms after the ack, one sample later).
            after = ix.samples_within(node, key, a["t"] + v.resolution_us)
            check.judge(any(s["variables"][STATUS] == "ON" for s in after),
                        f"{node}: replicas caught up with {end} at {seconds(a['t'])} but the status stayed OFF", a)


@checks("WL7169.N_DISTINCT", needs=("ack",))
def released_at_n_distinct_acks(v: TraceView, check: Check) -> None:
    """Released exactly when N distinct replicas acknowledged at or past the commit: not before, not after."""
    ix = index(v)
    for c in ix.commits:
        if not (had_to_wait(c) and c["ok"]):
            continue
        node = c["node"]
        acks = ix.acked_by(node, c["pos"], END)
        before = [a for a in acks if line_key(a) < c["rkey"]]
        n = ix.n(node, c["rkey"])
        # A timeout's switch to OFF shows only at the next sample of a sampled trace (tol 0 for a model).
        if ix.on_settled(node, c["rkey"], v.resolution_us):
            check.judge(len(before) >= n, f"commit of {c['trx']} on {node} released while ON with acks from "
                        f"{sorted(a['replica'] for a in before)} (need {n} distinct)", c["obs"], *before)
        # an ack passed on as its replica stopped releases nothing the master did not read
        surely = ix.acked_by(node, c["pos"], END, surely=True)
        ready = ix.release_key(node, c["bkey"], [(line_key(a), a["replica"]) for a in surely])
        if ready is not None and ix.on(node, ready):
            check.judge(c["obs"]["t"] <= ready[0] + v.resolution_us,
                        f"commit of {c['trx']} on {node} had its distinct acks at {seconds(ready[0])} but returned at {seconds(c['obs']['t'])}",
                        c["obs"])


@checks("WL7169.SWITCH_BACK_N", needs=("ack",), kinds=("server_status",))
def switch_back_needs_n(v: TraceView, check: Check) -> None:
    """Back to ON only when N distinct replicas acknowledged the current binlog position."""
    ix = index(v)
    for node in v.nodes:
        for key, value, sample in _switches(ix, node):
            if value != "ON" or _dba_or_restart(v, node, key):
                continue
            # A polled server's sample shows the switch up to the resolution after it was made
            # (report_reply_binlog calls try_switch_on at the ack, sql/semisync_master.cc): a commit binlogged meanwhile
            # is no part of what the ack had to reach.
            end = ix.binlog_end(node, (key[0] - v.resolution_us, -1) if v.resolution_us else key)
            acked = ix.acked_by(node, end, key)
            n = ix.n(node, key)
            check.judge(len(acked) >= n, f"{node} switched ON at {seconds(key[0])} with acks of {end} from "
                        f"{sorted(a['replica'] for a in acked)} (need {n})", sample, *acked)


@checks("WL1720.ONOFF.DBA", kinds=("stmt:set_global",))
def dba_switches_on_the_fly(v: TraceView, check: Check) -> None:
    """SET GLOBAL rpl_semi_sync_master_enabled turns the status ON or OFF at once."""
    ix = index(v)
    for s in v.kind("stmt"):
        if s["op"] == "set_global" and s.get("variable") == "rpl_semi_sync_master_enabled" and s.get("errno") is None:
            if bool(ix.var(s["node"], "rpl_semi_sync_master_enabled", line_key(s))) == bool(s["value"]):
                continue  # setting the value it has changes nothing
            after = ix.next_sample(s["node"], line_key(s))
            if after is not None and after["t"] <= s["t"] + v.resolution_us:
                want = "ON" if s["value"] else "OFF"
                check.judge(after["variables"][STATUS] == want,
                            f"{s['node']}: enabled := {s['value']} but the status is {after['variables'][STATUS]}", s, after)


@checks("WL1720.HOSTS", kinds=("server_status",))
def slave_hosts_mode(v: TraceView, check: Check) -> None:
    """SHOW SLAVE HOSTS says which replicas are semi-sync, and why the others are not."""
    for o in v.kind("server_status"):
        if not o.get("slave_hosts"):
            continue
        on = o["variables"].get(STATUS) == "ON"
        for h, requested in zip(o["slave_hosts"], hosts_asked(v, o)):
            if requested is None:
                continue  # no sample of the replica taken together with this one says
            # the witness's message is made only for a failure (most instances pass)
            if h["mode"] == "semi-sync":
                ok = on and requested
                check.judge(ok, "" if ok else f"{o['node']} lists {h['replica']} as semi-sync (status {'ON' if on else 'OFF'}, "
                            f"requested {requested})", o)
            else:
                ok = bool(h.get("reason")) and not (on and requested)
                check.judge(ok, "" if ok else f"{o['node']} lists {h['replica']} as async with reason {h.get('reason')!r}", o)

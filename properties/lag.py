"""Replication lag as monitoring reads it: Seconds_Behind_Master (SBM.*), on every status sample of
any trace, a model's or a real server's.

What a sample alone decides (NULL or not, 0 at the end of the relay log, its sum with
SQL_Remaining_Delay during a delay) is judged on every trace. What needs the event the SQL thread
has in hand (its value, 0 while behind) needs the relay log's writes, which a polled server's
trace does not observe: there those are not exercised. A polled sample's instant is uncertain by
the trace's resolution; the value itself is the server's own arithmetic on its own clock, so the
sample-only checks need no tolerance beyond the 1 s of two whole-second clock reads.
"""
from __future__ import annotations

from bisect import bisect_left
from itertools import takewhile
from operator import itemgetter

from replcheck.spec.formats import US

from .core import Check, Seq, TraceView, checks, seconds
from .configuration import with_workers
from .delay_timing import CAUGHT_UP, STATE_WAITING, UNASKED, count_moved, index, measured_difference, repositions
from .filter import kept_out
from .semisync_applier import ACK_WAIT

SBM = "Seconds_Behind_Master"
GRANULARITY_US = 2 * US  # the timestamp and the replica's clock are read in whole seconds


# A sample judged here shows all of these (a real server's always does; a hand-made one may not).
FIELDS = (SBM, "Slave_SQL_Running", "Slave_IO_Running", "Slave_SQL_Running_State", "Master_Log_File",
          "Read_Master_Log_Pos", "Relay_Master_Log_File", "Exec_Master_Log_Pos")
_FIELDS = frozenset(FIELDS)


def samples(v: TraceView) -> list[dict]:
    return v.memo("lag.samples", lambda: [s for s in v.kind("status") if s.keys() >= _FIELDS])


def sample_ids(v: TraceView) -> set[int]:
    """The judged samples by identity: the lag properties that sweep a node's statuses test each against it."""
    return v.memo("lag.sample_ids", lambda: {id(s) for s in samples(v)})


def connected(s: dict) -> bool:
    return s["Slave_SQL_Running"] == "Yes" and s["Slave_IO_Running"] == "Yes"


def connected_samples(v: TraceView) -> list[dict]:
    """The judged samples with both threads running and connected: three checks judge only these."""
    return v.memo("lag.connected_samples", lambda: [s for s in samples(v) if connected(s)])


def _read_all(s: dict) -> bool:
    """The SQL thread executed everything the IO thread read (MySQL's test for caught up)."""
    return s["Read_Master_Log_Pos"] == s["Exec_Master_Log_Pos"] and s["Master_Log_File"] == s["Relay_Master_Log_File"]


def written_us(v: TraceView, r: dict) -> int | None:
    """True time at which the relayed event's timestamp was written, from its origin's binlog and clock."""
    o = index(v).origin_of(r)
    if o is None or r.get("when") is None:
        return None
    return r["when"] * US - v.offset_at(o["node"], o["t"], o["_line"]) - v.header.get("epoch_us", 0)


def _age_us(v: TraceView, s: dict, r: dict) -> tuple[int, str] | None:
    """How long ago the event in hand was written as the replica reckons it at the sample, and how:
    by the clock difference its IO thread measured where the trace shows it (the server's arithmetic:
    its clock now, less the timestamp, less that difference; the difference's own error is
    WL344.CLOCK.COMPENSATE's), else by the true time of the write."""
    diff = measured_difference(v, s["node"], r.get("source"), s["_line"])
    written = written_us(v, r)
    # the lag counts from ev->when + exec_time (exec_relay_log_event, MariaDB sql/slave.cc): a Query
    # event's exec_time, which a SET TIMESTAMP on the source sets far off (relaylog.Event.exec_time)
    exec_us = r.get("exec_time", 0) * US
    exact = None if written is None else s["t"] - written - exec_us
    if diff is None:
        return None if exact is None else (exact, "")
    now = s["t"] + v.header.get("epoch_us", 0) + v.offset_at(s["node"], s["t"], s["_line"])
    counted = now - (r["when"] + diff) * US - exec_us
    return counted, "" if counted == exact else f" by the clock difference its IO thread measured ({diff} s)"


def in_hand(v: TraceView, s: dict, waiting: bool = False) -> dict | None:
    """The relayed event the SQL thread executes or waits for at the sample, when the trace decides it:
    the first one relayed and not applied, not just arrived nor (unless `waiting`, the event a sample
    waiting for MASTER_DELAY waits for) passed within the sample's resolution after it."""
    known = v.memo("lag.in_hand", dict)  # several checks ask it of one sample
    key = s["_line"], waiting
    found = known.get(key, UNASKED)  # most are asked first here: no KeyError raised for each
    if found is UNASKED:
        found = known[key] = _in_hand(v, s, waiting)
    return found


def _in_hand(v: TraceView, s: dict, waiting: bool) -> dict | None:
    ix = index(v)
    t, tol = s["t"], v.resolution_us
    if s.get("Slave_SQL_Running_State") == ACK_WAIT:
        return None  # in the commit of the group it applied last, counting from that group's timestamp, not at the next one
    r, applied = index(v).pending_at(s)
    if r is None or r["t"] >= t - tol or (not waiting and applied is not None and applied <= t + tol):
        return None
    if "filtered" in v.unobserved and r.get("trx") in kept_out(v, s["node"]):
        # A group the replica's filters keep from its engine: the SQL thread passes it without a
        # row, which a polled trace cannot show; it is not waiting there (flt-replicate-rules at
        # load 25: t2, ignored, counted as unapplied 3.5 s later, whenever a slip kept sampling that long).
        return None
    moves = v.memo(("lag.repositions", s["node"]), lambda: Seq((x for x in v.of_node(s["node"], "stmt") if repositions(x)), lambda x: x["_line"]))
    if moves.between(r["_line"], s["_line"]):
        return None  # thrown away with the relay log, never to be applied from there
    a = next((x for x in ix.applies_of(s["node"], r["file"], r["pos"]) if x["t"] > t), None)
    if a is not None and a.get("read") is not None and a["read"] > t - tol and not (waiting and _stopped_between(v, s, a)):
        # not read yet: the thread is still busy before it. Unless a stop cut the wait short: the
        # apply's read is then the one after the restart, and a waiting thread read it before
        return None
    return r


def _stopped_between(v: TraceView, s: dict, a: dict) -> bool:
    return bool(v.of_node(s["node"], "sql_stop").between(s["_line"], a["_line"]))


@checks("SBM.NULL")
def null_when_a_thread_is_down(v: TraceView, check: Check) -> None:
    """NULL with the SQL thread stopped, or with the IO thread not connected once all it read is
    executed; a nonnegative integer with both threads running and connected."""
    for s in samples(v):
        # a message is made only for a witness: most samples hold
        sbm = s[SBM]
        if s["Slave_SQL_Running"] != "Yes":
            ok = sbm is None
            check.judge(ok, "" if ok else f"{s['node']} at {seconds(s['t'])}: SQL thread not running but {SBM} {sbm!r}", s)
        elif s["Slave_IO_Running"] == "Yes":
            ok = isinstance(sbm, int) and sbm >= 0
            check.judge(ok, "" if ok else f"{s['node']} at {seconds(s['t'])}: both threads running but {SBM} {sbm!r}", s)
        elif _read_all(s):
            ok = sbm is None
            check.judge(ok, "" if ok else f"{s['node']} at {seconds(s['t'])}: IO thread {s['Slave_IO_Running']!r}, all it "
                                          f"read executed, but {SBM} {sbm!r}", s)


@checks("SBM.CAUGHT_UP")
def zero_when_caught_up(v: TraceView, check: Check) -> None:
    """0 while the SQL thread waits at the end of the relay log, all the IO thread read executed."""
    for s in connected_samples(v):
        if _read_all(s) and s["Slave_SQL_Running_State"].startswith(CAUGHT_UP) and not _worker_busy(v, s):
            check.judge(s[SBM] == 0, lambda: f"{s['node']} at {seconds(s['t'])}: caught up ({s['Slave_SQL_Running_State']!r}) but {SBM} {s[SBM]!r}", s)


def _worker_busy(v: TraceView, s: dict) -> bool:
    """A replica with workers whose relayed group is uncommitted at the sample: its coordinator may
    wait at the relay log's end while a worker applies the group, and MariaDB then counts the lag
    (send_show_master_info_data, sql/slave.cc: idle only if rli.parallel.workers_idle()). With
    several domains Exec_Master_Log_Pos may already be past it (seed 8, History 169)."""
    if not with_workers(v, s):
        return False
    r, _ = index(v).pending_at(s)
    return r is not None and r.get("trx") is not None


@checks("SBM.PENDING", needs=("relay",))
def zero_only_when_nothing_old_is_pending(v: TraceView, check: Check) -> None:
    """SBM == 0 implies no unapplied relayed transaction written 2 s or more ago. A replica with
    workers is PARALLEL.SBM.PENDING's: its checkpoint may take a timestamp ahead (SET TIMESTAMP) from
    a group committed before an older one, and show 0 while that one waits."""
    for s in connected_samples(v):
        if s[SBM] != 0 or with_workers(v, s):
            continue
        r = in_hand(v, s)
        if r is None or r.get("gtid") is None or _abandoned(v, s, r) or _read_all_in_two_binlogs(v, s, r) or \
                (aged := _age_us(v, s, r)) is None:
            continue
        age, by = aged
        # on a polled trace the SQL thread may be on a later event of the group, counted from its own
        # timestamp and exec_time (a statement under SET TIMESTAMP: 'User sleep' at 0 s in
        # sbm-from-a-statement-s-exec-time, its GTID event 10001 s old)
        later = [a[0] for x in _rest_of_group(v, s, r) if (a := _age_us(v, s, x)) is not None]
        check.judge(min([age, *later]) < GRANULARITY_US + v.resolution_us,
                    f"{s['node']} at {seconds(s['t'])} shows {SBM} 0 but {r['type']} of {r['trx']}, written {age / US:.3f} s ago{by}, "
                    f"is unapplied", s, r)


def _read_all_in_two_binlogs(v: TraceView, s: dict, r: dict) -> bool:
    """Whether the sample's Read == Exec position compares places in two servers' binlogs: its IO
    thread connected to another source since r, the event in hand, was relayed. MySQL's test for
    caught up compares the two places by binlog name and offset alone (rpl_replica.cc,
    show_slave_status_send_data: "compare the log positions and ... the file names"), so where the
    new source's place coincides with the old one's (both at bin.000002:124 after a FLUSH LOGS) it
    shows 0 while the old source's groups wait: its arithmetic, whatever it is behind."""
    return _read_all(s) and any(c.get("source") not in (None, r.get("source"))
                                for c in v.of_node(s["node"], "connect").between(r["_line"], s["_line"]))


def _abandoned(v: TraceView, s: dict, r: dict) -> bool:
    """A partial group the node's relay log holds from a source it has since left (a failover
    repointed it) and whose end never came: no source sends the rest, the new source's format
    description rolls the copy back each time the SQL thread reaches it, and the replica is behind
    nothing it can fetch."""
    node, trx = s["node"], r.get("trx")
    copies = [x for x in v.of_node(node, "relay").between(r["_line"], s["_line"]) if x.get("trx") == trx]
    if r.get("last") or any(x.get("last") for x in copies):
        return False
    return any(c.get("source") not in (None, r.get("source")) for c in v.of_node(node, "connect").between(r["_line"], s["_line"]))


@checks("SBM.VALUE", needs=("relay",))
def seconds_since_the_event_in_hand(v: TraceView, check: Check) -> None:
    """Behind: now minus the timestamp of the event in hand (clocks compensated), whole seconds, >= 0;
    never counted from an event with timestamp 0."""
    epoch = v.header.get("epoch_us", 0)
    for s in connected_samples(v):
        if _read_all(s) or s["Slave_SQL_Running_State"].startswith(CAUGHT_UP) or with_workers(v, s):
            continue
        r = in_hand(v, s)
        if r is None or not isinstance(s[SBM], int):  # a NULL with both threads running is SBM.NULL's to judge
            continue
        sbm, t = s[SBM], s["t"]
        if r.get("when") == 0:  # a fake event: counting from it would show the replica's age since 1970
            since_epoch = (t + epoch + v.offset_at(s["node"], t, s["_line"])) // US
            check.judge(sbm < since_epoch - GRANULARITY_US // US,
                        f"{s['node']} at {seconds(t)}: {SBM} {sbm} counts from the timestamp 0 of {r['type']}", s, r)
            continue
        if r.get("gtid") is None or (aged := _age_us(v, s, r)) is None:
            continue  # an FDE: MariaDB counts its timestamp, MySQL does not
        exact, by = max(0, aged[0]) / US, aged[1]
        slack = 1 + v.whole_second_slack_us(s) / US  # as WL344.SSS.REMAINING
        others = [max(0, a[0]) / US for x in _rest_of_group(v, s, r) if (a := _age_us(v, s, x)) is not None]
        check.judge(any(abs(sbm - age) < slack for age in [exact, *others]),
                    f"{s['node']} at {seconds(t)}: {SBM} {sbm} but {r['type']} of {r['trx']} in hand was written {exact:.3f} s ago{by}",
                    s, r)


def _rest_of_group(v: TraceView, s: dict, r: dict) -> list[dict]:
    """On a polled trace, the group's later events relayed by the sample: a server's applies are seen
    at the group's commit, so the SQL thread may be past r inside its group, and the lag counts from
    the last event it read (exec_relay_log_event, MariaDB sql/slave.cc: last_master_timestamp =
    ev->when + exec_time for every event). Their timestamps differ: MariaDB's GTID and XID events carry
    the COMMIT's second, the row events their statement's (seed 2's History 75: B showed 15 s, from
    t6's rows, 4 s older than its GTID event). The rest may be in a later relay log, written after an
    IO thread's reconnect inside the group (seed 10's History 84); a copy of the group relayed again
    begins at a first event again. A model's Trace shows each event applied: none."""
    if not v.resolution_us:
        return []
    by_group = v.memo(("lag.relay_by_group", s["node"]), lambda: _by_group(v.of_node(s["node"], "relay")))
    rest = takewhile(lambda x: x["idx"] > r["idx"], (x for x in by_group.get(r["gtid"], ()) if x["_line"] > r["_line"]))
    return [x for x in rest if x["t"] <= s["t"]]


def _older_in_group(v: TraceView, s: dict) -> int:
    """How many seconds older than the event in hand a later event of its group relayed by the sample
    is: on a polled trace the SQL thread may have read on into the group, setting the lag back to a
    statement's second (the GTID event carries the COMMIT's: seed 2's History 75, B from 9 to 14
    as the delay ended and it read t6's first statement, 4 s older)."""
    r = in_hand(v, s)
    if r is None or r.get("gtid") is None:
        return 0
    return max([0] + [r["when"] - x["when"] for x in _rest_of_group(v, s, r) if x.get("when")])


def _by_group(relays) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for x in relays:
        if x.get("gtid"):
            out.setdefault(x["gtid"], []).append(x)
    return out


def _delay_shortfall(v: TraceView, s: dict) -> str | None:
    """Why a sample waiting for MASTER_DELAY breaks its relation to SQL_Remaining_Delay, or None. Only
    under WL#344's per-event rule do the wait and the lag count from the same timestamp: WL#7318 waits
    from the commit timestamp, which SET TIMESTAMP can set apart from the event's."""
    sbm, rem, delay = s[SBM], s["SQL_Remaining_Delay"], s["SQL_Delay"]
    if v.nodes.get(s["node"], {}).get("delay_rule", "wl344") != "wl344" or not all(
            isinstance(x, int) for x in (sbm, rem, delay)):
        return None
    if sbm + rem < delay - 1:
        return f"{s['node']} at {seconds(s['t'])} waits for MASTER_DELAY {delay} with {rem} s left but shows {SBM} {sbm}"
    if sbm > 0 and sbm + rem > delay + 1:  # 0: an event stamped in the future, SBM clamped
        return f"{s['node']} at {seconds(s['t'])}: {SBM} {sbm} and {rem} s left exceed MASTER_DELAY {delay}"
    return None


def _waiting(v: TraceView):
    return (s for s in samples(v) if s["Slave_SQL_Running"] == "Yes" and s["Slave_SQL_Running_State"] == STATE_WAITING)


def _lag_counts_from_wait(v: TraceView, s: dict) -> bool:
    """Whether a waiting sample's lag may be held to its remaining delay: a number, one SQL thread,
    and not a fake event stamped 0 in hand, which waits out the delay but sets no lag
    (exec_relay_log_event updates last_master_timestamp only for an event with a timestamp: MySQL
    sql/rpl_slave.cc, MariaDB sql/slave.cc, "ev->when is set to 0 ... we don't update the
    last_master_timestamp")."""
    if not isinstance(s[SBM], int) or with_workers(v, s):
        return False
    held = in_hand(v, s)
    if held is None and not v.resolution_us:
        # a model's Trace: what the SQL thread passed in the sample's own µs was logged before it, so
        # the event it waits for is the next one (a START SLAVE that applies a fake Rotate and the FDE
        # at once, then waits for the fake Gtid_list)
        held, _ = index(v).pending(s["node"], s["t"] + 1, s["_line"])
    return held is None or held.get("when") != 0


@checks("SBM.DELAY")
def delay_counts_in_lag(v: TraceView, check: Check) -> None:
    """Waiting under WL#344's rule: SBM + SQL_Remaining_Delay = SQL_Delay (+-1); SBM 0 only with more left."""
    for s in _waiting(v):
        if _wait_and_lag_agree(v, s):
            why = _delay_shortfall(v, s)
            check.judge(why is None, why or "", s)


def _wait_and_lag_agree(v: TraceView, s: dict) -> bool:
    """Whether a waiting sample's lag and remaining delay count on the same terms: its lag counts from
    the wait, and the replica's clock or its measured difference with the master did not move since
    it read the event it waits for (a new connect measures the difference again, and the lag counts
    with it at once while the wait keeps its deadline: clock_diff_with_master, sql/slave.cc)."""
    # before the lag's own look-ahead: the index answers queries in trace order. An event the thread
    # passes just after the sample was waited for all the same: a step since its read counts too
    # (seed 10's History 163: a step 0.4 s before a sample, 0.27 s before the wait ended).
    held = in_hand(v, s, waiting=True)
    if not _lag_counts_from_wait(v, s) or (held is not None and _read_all_in_two_binlogs(v, s, held)):
        return False
    return held is None or not count_moved(v, s["node"], held["_line"], s["_line"])


def _restarted_waits(v: TraceView) -> list[tuple[dict, dict]]:
    """(START SLAVE, sample) for each waiting sample after a START SLAVE that followed a STOP SLAVE
    issued while the last sample showed the SQL thread waiting, up to the next STOP SLAVE. (Not up
    to the first caught-up sample: MariaDB's GTID START SLAVE empties the relay log, so the thread
    is caught up until the transaction arrives again, and then waits for it once more.)"""
    statements = v.kind("stmt")
    if not any(o["op"] == "stop_slave" for o in statements):
        return []
    out, waiting, stopped, start = [], {}, set(), {}
    # only statuses and statements move it: their two lists merged in trace order, not every observation
    for o in sorted([*v.kind("status"), *statements], key=itemgetter("_line")):
        node, kind = o["node"], o["kind"]
        if kind == "status" and SBM in o:
            waiting[node] = o["Slave_SQL_Running"] == "Yes" and o["Slave_SQL_Running_State"] == STATE_WAITING
            if node in start and waiting[node]:
                out.append((start[node], o))
        elif kind == "stmt" and o.get("errno") is None and o.get("thread") in (None, "sql"):
            if o["op"] == "stop_slave":
                start.pop(node, None)
                if waiting.get(node):
                    stopped.add(node)
            elif o["op"] == "start_slave" and node in stopped:
                stopped.discard(node)
                start[node] = o
    return out


@checks("SBM.RESTART")
def restart_keeps_lag(v: TraceView, check: Check) -> None:
    """After STOP/START during a delay, waiting again: SBM still counts from the waited event."""
    for start, s in _restarted_waits(v):
        if _wait_and_lag_agree(v, s):
            why = _delay_shortfall(v, s)
            check.judge(why is None, f"after START SLAVE at {seconds(start['t'])}: {why}", start, s)


# What moves last_master_timestamp legitimately, or restarts what the lag counts from: a group's
# first event read (serial) or a commit (parallel), a skip or filter, a statement, a stop, a start.
_FEEDS = frozenset({"visible", "skip", "filtered", "stmt", "restart", "crash", "sql_stop", "restore", "relay_log_recovery",
                    "parallel", "rollback"})


def _feed_lines(v: TraceView, node: str) -> list[int]:
    """The lines of the node's observations that move the lag legitimately (_FEEDS, a group's first
    event applied), in order: from the lists of those kinds, not a pass over all it logged."""
    lines = [o["_line"] for kind in _FEEDS for o in v.of_node(node, kind)]
    lines += [o["_line"] for o in v.of_node(node, "apply") if o.get("idx") == 0]
    lines.sort()
    return lines


def _difference_changed(v: TraceView, node: str, since_line: int, until_line: int) -> bool:
    """Whether the IO thread measured a new clock difference with its master between the two lines (at
    a connect: get_master_version_and_clock, sql/slave.cc); the lag counts with it at once."""
    queries = v.of_node(node, "clock_query")
    before = queries.last_before(since_line)
    known = before["clock_diff_with_master"] if before else None
    for q in queries.between(since_line, until_line):
        if q["clock_diff_with_master"] != known:
            return True
    return False


@checks("SBM.NO_JUMP")
def no_jump_without_a_new_transaction(v: TraceView, check: Check) -> None:
    """Between two samples with nothing new read or committed, lag grows at most as the clock does:
    an event that is no transaction (a format description, a rotation's) never sets it back."""
    steps = v.memo("lag.clock_steps", lambda: Seq(v.kind("clock_step"), lambda o: o["_line"]))
    by_node: dict[str, list[dict]] = {}
    for s in samples(v):
        by_node.setdefault(s["node"], []).append(s)
    for node in sorted(by_node):
        # two samples compare where as many feeds came before each: none between them
        feeds, prev, fed_before = _feed_lines(v, node), None, 0
        for o in by_node[node]:
            if not (connected(o) and isinstance(o[SBM], int)):
                prev = None
                continue
            fed = bisect_left(feeds, o["_line"])
            if prev is not None and fed == fed_before and prev[SBM] > 0 and not steps.between(prev["_line"], o["_line"]) \
                    and not _difference_changed(v, node, prev["_line"], o["_line"]):
                grown = -(-(o["t"] - prev["t"]) // US)  # whole seconds, rounded up
                ok = o[SBM] <= prev[SBM] + grown + 1 + _older_in_group(v, o)
                check.judge(ok, "" if ok else f"{node}: {SBM} {prev[SBM]} at {seconds(prev['t'])}, {o[SBM]} at {seconds(o['t'])}, "
                                              f"with no transaction read or committed between", prev, o)
            prev, fed_before = o, fed

"""The wait rule of WL#344: events run no earlier than due and no later than needed; a stop
interrupts the wait and executes nothing; a delay change loses nothing; chains count from the
immediate master; clocks are compensated."""
from __future__ import annotations

from itertools import takewhile
from operator import itemgetter

from replcheck.spec.formats import US

from .configuration import with_workers
from .core import Check, Seq, TraceView, checks, seconds
from .filter import kept_out, on_master_at
from .recovery import behind_at_end, binlogged_since_restore, copies, source_at, sources_at_end
from .semisync_applier import ACK_WAIT, any_may_wait, may_still_wait
from .delay_timing import CAUGHT_UP, EXEMPT, STATE_WAITING, begin_of, gtid_applies, index, judge_due, repositions, running_samples, status_samples, stmts
from .delay_waiting import waiting_for


# -- the wait rule ----------------------------------------------------------------------------
@checks("WL344.WAIT.RULE")
def wait_not_before_due(v: TraceView, check: Check) -> None:
    """An event is executed no earlier than its timestamp (compensated) plus the delay."""
    ix = index(v)
    for a in gtid_applies(v):
        if ix.rule(a) == "wl344" and (due := ix.due_range(a)) is not None:
            judge_due(v, check, a, due[0], tight=False, what="WL#344 rule")


@checks("WL344.WAIT.NO_EXTRA")
def wait_no_longer_than_needed(v: TraceView, check: Check) -> None:
    """An event already due when read runs at once; a waiting thread wakes when the delay is reached."""
    ix = index(v)
    for a in gtid_applies(v):
        if ix.rule(a) == "wl344" and a.get("read") is not None and (dues := ix.due_range(a)) is not None:
            due = dues[1]
            check.judge(begin_of(a) <= max(a["read"], due) + v.resolution_us,
                        lambda: f"{a['node']} read {a['type']} of {a['trx']} at {seconds(a['read'])}, due {seconds(due)}, began {seconds(begin_of(a))}", a)


@checks("WL344.WAIT.EXEMPT")
def exempt_events_never_wait(v: TraceView, check: Check) -> None:
    """START_EVENT_V3, ROTATE_EVENT and FORMAT_DESCRIPTION_EVENT are executed without waiting."""
    for a in v.kind("apply"):
        if a["type"] in EXEMPT and a.get("read") is not None:
            check.judge(begin_of(a) <= a["read"] + v.resolution_us,
                        lambda: f"{a['node']} waited {seconds(begin_of(a) - a['read'])} before {a['type']} (when={a['when']})", a)


# -- STOP SLAVE and kill ----------------------------------------------------------------------
def _sql_stops(v: TraceView):
    """(node, time, obs) of every stop of an SQL thread by statement or crash."""
    for o in v.kind("sql_stop"):
        if o.get("reason") in ("stop", "crash"):
            yield o["node"], o["t"], o
    # A crash of a replica whose SQL thread was not running stops nothing; sql_stop covers the rest.


def _next_start(v: TraceView, stop: dict) -> dict | None:
    """The START SLAVE, restart or restore (a server rebuilt from a backup starts as a slave) that
    ends a stop of the SQL thread, in trace order."""
    node, line = stop["node"], stop["_line"]
    # the first of each kind after the stop, from the node's lists of one kind (no merged list built)
    firsts = [next(v.of_node(node, "restart").after(line), None), next(v.of_node(node, "restore").after(line), None),
              next((o for o in v.of_node(node, "stmt").after(line) if o["op"] == "start_slave" and o.get("errno") is None), None)]
    return min((o for o in firsts if o is not None), key=_line_of, default=None)


_line_of = itemgetter("_line")

# What a server logs when a stop finds its SQL thread inside a group that changed a non-transactional
# table: the thread sleeps no delay, it finishes the group, waiting up to 60 s for its events
# (sql_slave_killed, sql/slave.cc, SLAVE_WAIT_GROUP_DONE; seed 8's History 95: 62 s, a relay cut mid-group).
GROUP_DONE_LOG = "Request to stop slave SQL Thread received while applying a group that has non-transactional changes"


def _waited_for_group_end(v: TraceView, stmt: dict) -> bool:
    """The node logged, while the STOP SLAVE ran (a polled server's line shows up to the resolution
    after), that its SQL thread finishes a non-transactional group first."""
    began = stmt["t"] - stmt["duration_us"]
    return any(GROUP_DONE_LOG in o["message"] and began <= o["t"] <= stmt["t"] + v.resolution_us
               for o in v.of_node(stmt["node"], "log"))


def _waited_for_an_ack(v: TraceView, stmt: dict) -> bool:
    """The stop of an SQL thread with workers began while a worker's commit may have waited for a
    semi-sync ack (an intermediate semi-sync master): the stop kills no worker, it waits for each
    (rpl_parallel::wait_for_done, sql/rpl_parallel.cc), and the worker's wait ends only at the ack or
    the timeout (Repl_semi_sync_master::commit_trx, sql/semisync_master.cc; 10.11.19: 0.51 s, until
    the timeout switched semi-sync OFF)."""
    return with_workers(v, stmt) and any_may_wait(v, stmt["node"], (stmt["t"] - stmt["duration_us"], stmt["_line"]))


def _waited_for_a_worker(v: TraceView, stmt: dict) -> bool:
    """The stop of an SQL thread with workers returned as a worker committed a group: the coordinator's
    stop waits for the groups a worker has begun (rpl_parallel::wait_for_done, sql/rpl_parallel.cc:
    stop_count = count_committing_event_groups, then each worker's COND_rpl_thread_stop), however
    long they run (a campaign's B: 2.6 s, until t1's worker committed)."""
    if not with_workers(v, stmt):
        return False
    tol = v.resolution_us
    near = takewhile(lambda a: a["t"] <= stmt["t"] + tol, index(v).applies_from(stmt["node"], stmt["t"] - tol))
    return any(a.get("last") and a.get("trx") is not None for a in near)


# The serial SQL thread's own states between events (handle_slave_sql, exec_relay_log_event and
# next_event, sql/slave.cc): in any of them, and in the caught-up state, the next event's delay may yet begin.
BETWEEN_EVENTS = frozenset({"", STATE_WAITING, "Reading event from the relay log", "After apply log event",
                            "Waiting for slave mutex on exit", "Making temp file"})


def _executing_at_the_stop(v: TraceView, stmt: dict) -> bool:
    """A serial SQL thread was inside a group's event when the stop began, and still in it while the
    stop ran: the last sample before the stop and each one taken during it (one at least) show it
    running a statement (not a state of its own between events) at the same relay-log place. The
    delay's sleep comes before an event (sql_delay_event, sql/slave.cc: when + clock_diff_with_master
    + MASTER_DELAY), and a group's first event is stamped no earlier than its later ones (its commit):
    no sleep is due inside a group. The stop waits for the event to end (the thread sees it only
    between events: sql_slave_killed), however long it runs (a campaign's B: 1.67 s, in a statement
    costing it 2 s, with MASTER_DELAY 1)."""
    if with_workers(v, stmt):
        return False
    began, samples = stmt["t"] - stmt["duration_us"], status_samples(v, stmt["node"])
    before = next((s for s in reversed(samples.before(stmt["_line"])) if s["t"] < began), None)

    def executing(s: dict) -> bool:
        return (s["Slave_SQL_Running"] == "Yes" and s["Slave_SQL_Running_State"] not in BETWEEN_EVENTS
                and not s["Slave_SQL_Running_State"].startswith(CAUGHT_UP)
                and (s["Relay_Log_File"], s["Relay_Log_Pos"]) == (before["Relay_Log_File"], before["Relay_Log_Pos"]))
    during = samples.between(before["_line"], stmt["_line"]) if before is not None else []
    return bool(during) and executing(before) and all(map(executing, during))


def _may_have_slept(v: TraceView, stmt: dict) -> bool:
    """The stop may have found the SQL thread in a delay's sleep: MASTER_DELAY was above 0 as the
    statement began. Without a delay there is no sleep to interrupt, and a serial SQL thread sees a
    stop only between events (exec_relay_log_event's sql_slave_killed, sql/slave.cc): a statement
    running then ends first (a campaign's B: 2.0 s, a statement costing 2 s, then rolled back)."""
    return index(v).delay_at(stmt["node"], stmt["t"] - stmt["duration_us"]) != 0


@checks("WL344.STOP.IMMEDIATE")
def stop_interrupts_at_once(v: TraceView, check: Check) -> None:
    """STOP SLAVE (or kill) returns at once and leaves the SQL thread stopped, state '', no remaining delay."""
    tol = v.resolution_us
    for node, t, o in _sql_stops(v):
        start = _next_start(v, o)
        after = next(status_samples(v, node).after(o["_line"]), None)
        if after is None or after["t"] > t + tol or (start is not None and after["_line"] > start["_line"]):
            continue
        if o.get("reason") == "stop":
            stops = v.memo(("delay.stop_slaves", node), lambda: Seq(
                (s for s in v.of_node(node, "stmt") if s["op"] == "stop_slave"), lambda s: (s["t"], s["_line"])))
            stmt = next(stops.after((t, -1)), None)
            if stmt is not None and stmt.get("duration_us") is not None and _may_have_slept(v, stmt) \
                    and not _waited_for_group_end(v, stmt) and not _waited_for_a_worker(v, stmt) \
                    and not _executing_at_the_stop(v, stmt) and not _waited_for_an_ack(v, stmt):
                check.judge(stmt["duration_us"] <= tol, f"STOP SLAVE on {node} took {seconds(stmt['duration_us'])}", stmt)
        check.judge(after["Slave_SQL_Running"] == "No" and after["Slave_SQL_Running_State"] == ""
                    and after["SQL_Remaining_Delay"] is None,
                    lambda: f"after the stop at {seconds(t)} {node} shows SQL thread {after['Slave_SQL_Running']!r}, "
                    f"state {after['Slave_SQL_Running_State']!r}, remaining {after['SQL_Remaining_Delay']!r}", o, after)


@checks("WL344.STOP.NO_EXEC")
def stop_executes_nothing(v: TraceView, check: Check) -> None:
    """A stopped SQL thread executes neither the event it was delaying nor any other, and keeps its position."""
    ix = index(v)
    tol = v.resolution_us
    for node, t, o in _sql_stops(v):
        start = _next_start(v, o)
        restart = start["t"] if start is not None else None
        for a in ix.applies_from(node, t - tol):
            if restart is not None and a["t"] >= restart:
                break
            due = ix.earliest_due(a)  # what the replica may have counted as due: it did not wait
            if a["t"] > t + tol:
                check.judge(False, f"{node} executed {a['type']} of {a['trx']} at {seconds(a['t'])} while stopped since {seconds(t)}", o, a)
            elif due is not None and due > begin_of(a) + tol and a["t"] >= t:
                check.judge(False, f"{node} executed the delayed {a['type']} of {a['trx']} (due {seconds(due)}) at the stop {seconds(t)}", o, a)
        before = [s for s in [status_samples(v, node).last_before(o["_line"])] if s is not None and s["Slave_SQL_Running"] == "Yes"]
        if before and before[-1]["SQL_Remaining_Delay"] is not None and before[-1]["t"] + before[-1]["SQL_Remaining_Delay"] * US > t:
            check.reached(f"{o['reason']} during a delay wait")  # the last sample's wait was still running at the stop
        stopped = v.memo(("delay.stopped_samples", node), lambda: Seq(
            (s for s in status_samples(v, node) if s["Slave_SQL_Running"] == "No"), lambda s: s["_line"]))
        after = next(stopped.after(o["_line"]), None)
        if before and after is not None and (start is None or after["_line"] < start["_line"]):
            b = before[-1]
            lo, hi = b["_line"], after["_line"]
            if any(v.of_node(node, kind).between(lo, hi) for kind in ("restart", "restore", "relay_log_recovery")) \
                    or any(repositions(x) or x["op"] == "reset_slave" for x in v.of_node(node, "stmt").between(lo, hi)):
                continue  # a restart, restore, RESET SLAVE or CHANGE MASTER to a new place moves the position legitimately
            check.judge((b["Relay_Log_Pos"], b["Exec_Master_Log_Pos"]) == (after["Relay_Log_Pos"], after["Exec_Master_Log_Pos"])
                        or _moved_between(v, node, lo, o["_line"]) or _in_hand_at_sample(ix, node, b, o)
                        or _passed_unseen(v, node, b["t"], t) or _ack_wait_ended(v, ix, node, b, after, o),
                        lambda: f"the stop at {seconds(t)} moved {node} from Relay_Log_Pos {b['Relay_Log_Pos']} to {after['Relay_Log_Pos']}",
                        b, after)


def _moved_between(v: TraceView, node: str, lo: int, hi: int) -> bool:
    """Events applied or skipped (the skip counter) between two lines moved the node's position, as
    did a parallel replica's workers committing the groups queued to them (their position is the oldest)."""
    return bool(v.of_node(node, "apply").between(lo, hi) or v.of_node(node, "skip").between(lo, hi)) \
        or any("worker" in x for x in v.of_node(node, "visible").between(lo, hi))


def _in_hand_at_sample(ix, node: str, b: dict, o: dict) -> bool:
    """The sample's place may be the start of a group whose change its own poll already saw: the SQL
    thread makes an event's change (a DDL, a MyISAM row: visible at once) and only then moves
    Relay_Log_Pos (exec_relay_log_event -> apply_event_and_update_pos: ev->apply_event, then
    ev->update_pos; sql/slave.cc). Its apply is stamped with that poll, and its end moves the position
    before the stop (a suite run of rpl_gtid_crash_myisam: the CREATE TABLE seen at the sample that
    still read its Gtid event's place)."""
    return any(a["_line"] < o["_line"] and a.get("relay_file") == b["Relay_Log_File"]
               and (a.get("relay_pos") or 0) >= b["Relay_Log_Pos"] for a in ix.applies_from(node, b["t"]))


def _ack_wait_ended(v: TraceView, ix, node: str, b: dict, after: dict, o: dict) -> bool:
    """The sample's place is still the start of a group committed before it whose commit waits for
    a semi-sync ack (an intermediate semi-sync master): the SQL thread shows the wait, or a worker's
    group binlogged there may still wait at the stop. The stop kills the SQL thread's wait:
    Repl_semi_sync_master::commit_trx leaves its loop on thd_killed and the commit returns (MariaDB
    sql/semisync_master.cc), so the thread moves the group's position before it sees the kill
    (apply_event_and_update_pos, then sql_slave_killed in exec_relay_log_event, sql/slave.cc); a
    worker's wait the stop awaits (rpl_parallel::wait_for_done, sql/rpl_parallel.cc). The stop may
    move the place to that group's end, and no further."""
    first = next((a for a in reversed(ix.applied_at.get((node, b["Relay_Log_File"], b["Relay_Log_Pos"]), ()))
                  if a["_line"] < b["_line"] and a.get("trx") is not None), None)
    if first is None or not (b["Slave_SQL_Running_State"] == ACK_WAIT or (
            with_workers(v, b) and may_still_wait(v, node, first.get("gtid"), (o["t"], o["_line"])))):
        return False
    last = next((a for a in v.of_node(node, "apply").between(first["_line"] - 1, o["_line"])
                 if a.get("trx") == first["trx"] and a.get("last")), None)
    r = ix.relay.get((node, last["relay_file"], last["relay_pos"])) if last is not None else None
    return r is not None and (r["master_file"], r["master_end"]) == (after["Relay_Master_Log_File"], after["Exec_Master_Log_Pos"])


def _passed_unseen(v: TraceView, node: str, since: int, until: int) -> bool:
    """A group the node's filters keep out may have arrived between two instants, on a trace that
    cannot show the SQL thread passing it ("filtered" unobserved): passing it moves the position
    (a campaign's server: a marked group ignored between the last sample and STOP SLAVE)."""
    if "filtered" not in v.unobserved:
        return False
    out = kept_out(v, node)
    return any(r.get("last") and r.get("trx") in out and r.get("since", r["t"]) <= until and r["t"] >= since
               for r in v.of_node(node, "relay"))


# -- a delay change with unapplied events -----------------------------------------------------
def _held_at(v: TraceView, s: dict) -> dict[str, dict]:
    """The transactions the replica had received whole and not applied, skipped or thrown away when
    statement s ran: each with the relay observation of its last event."""
    def build() -> dict[int, dict[str, dict]]:
        """One sweep of the node: what it held at each of its CHANGE MASTERs."""
        held: dict[str, dict] = {}
        at: dict[int, dict[str, dict]] = {}
        # Relay-log places the SQL thread already passed: a polled Trace may show a copy relayed after
        # its skip (a campaign's B skipped t1 at 0.95 s, and the poll that read its relay log came at 1.13 s).
        passed: set[tuple] = set()
        for o in v.of_node(s["node"], "relay", "apply", "skip", "relay_log_recovery", "restore", "stmt"):
            if o["kind"] == "stmt" and o["op"] == "change_master":
                at[o["_line"]] = dict(held)
            if o["kind"] == "relay" and o.get("last") and o.get("trx") is not None:
                if (o["trx"], o.get("file"), o.get("pos")) not in passed:
                    held[o["trx"]] = o
            elif o["kind"] in ("apply", "skip") and o.get("trx") is not None and (o.get("last") or o["kind"] == "skip"):
                held.pop(o["trx"], None)
                passed.add((o["trx"], o.get("relay_file"), o.get("relay_pos")))
            elif o["kind"] in ("relay_log_recovery", "restore") or repositions(o) or (
                    o["kind"] == "stmt" and o["op"] == "reset_slave" and o.get("errno") is None):
                held.clear()
                passed.clear()
        return at
    return v.memo(("delay.held_at", s["node"]), build)[s["_line"]]


def _replaced_after(v: TraceView, s: dict) -> bool:
    """Whether the replica's place was changed by other means after s: RESET SLAVE, a CHANGE MASTER to a
    new source or place, a restore, or a failover that moved it (their own requirements judge them)."""
    def last_move(node: str) -> int:
        return max((o["_line"] for o in v.of_node(node, "restore", "stmt") if repositions(o) or o["kind"] == "restore" or (
            o["op"] in ("reset_slave", "change_master") and o.get("errno") is None and o.get("master_host") is not None)), default=-1)
    moved = v.memo(("delay.last_move", s["node"]), lambda: last_move(s["node"]))
    failed_over = v.memo("delay.last_failover", lambda: max((o["_line"] for o in v.kind("failover") + v.kind("promoted")), default=-1))
    return max(moved, failed_over) > s["_line"]


@checks("WL344.CM.NO_LOSS", kinds=("stmt:change_master",))
def delay_change_loses_nothing(v: TraceView, check: Check) -> None:
    """A CHANGE MASTER that changes only the delay neither loses nor repeats a transaction the
    replica held unapplied: whether the relay log was kept or purged and fetched again, the replica
    holds each exactly once when replication is quiet (one stopped, down or repointed at the end is
    not judged for what it lacks, nor for what a failover took from it)."""
    changes = [s for s in stmts(v, "change_master") if s.get("errno") is None and not repositions(s) and s.get("master_host") is None]
    if not changes:
        return
    counts, witnesses = copies(v)
    sources = sources_at_end(v)
    for s in changes:
        node = s["node"]
        if node not in counts or _replaced_after(v, s):
            continue
        have, w = counts[node], witnesses.get(node)
        judged_lack = sources.get(node) is not None and not behind_at_end(v, node)
        # a group the SQL thread passed after the change (a filter kept it out, the skip counter
        # skipped it) was not lost: the replica holds no copy of it by design
        passed = {o.get("trx") for o in v.of_node(node, "filtered", "skip") if o["_line"] > s["_line"]}
        if "filtered" in v.unobserved:  # a server's Trace cannot show the pass: its filters' settings say
            passed |= kept_out(v, node)
        # a marked group fetched again through a connect that asked the master to filter marked events
        # (FILTER_ON_MASTER: MariaDB sql_repl.cc send_event_to_slave drops it) is never sent: no observation shows it
        withheld = any(on_master_at(v, node, c["_line"]) for c in v.of_node(node, "connect") if c["_line"] > s["_line"])
        # What the replica relayed from a master a failover has since taken it from, and its new
        # master's binlog lacks, no fetch from the SQL thread's place can bring again: the failover
        # lost it, not the delay change (WL#344's premise is the same master; GGID.RECOVERY.EXACTLY_ONCE judges
        # what the replica ends with).
        source = source_at(v, node, s["_line"])
        for trx, r in sorted(_held_at(v, s).items()):
            if r.get("source") not in (None, source) and trx not in _binlogged(v, source):
                continue
            n = have.get(trx, 0) or int(trx in passed or (withheld and bool(r.get("skip_replication"))))
            if n == 0 and not judged_lack:
                continue
            check.judge(n == 1, lambda: f"{node} held {trx} unapplied (relayed at {seconds(r['t'])}) at the CHANGE MASTER TO MASTER_DELAY = "
                                f"{s.get('delay')} at {seconds(s['t'])}, and holds it {n} times once replication is quiet",
                        s, r, *([w] if w else []))


def _binlogged(v: TraceView, source: str | None) -> set[str]:
    """binlogged_since_restore of a replica's source, once per source (several CHANGE MASTERs ask)."""
    if source is None:
        return set()
    return v.memo(("delay.binlogged_since_restore", source), lambda: binlogged_since_restore(v, source))


# -- chains and clocks ------------------------------------------------------------------------
def _source_exec(v: TraceView, a: dict) -> dict | None:
    """The immediate master's own execution of the same event, when the master is itself a replica:
    the last one before `a` (a master rebuilt from a backup later may execute it again)."""
    ix = index(v)
    # A real server's applies are stamped when a poll sees them: the source's may come up to the
    # resolution after the replica's in the trace.
    return next((x for x in reversed(ix.applies.get(a["source"], []))
                 if (x["_line"] < a["_line"] or (v.resolution_us and x["t"] <= a["t"] + v.resolution_us))
                 and x["gtid"] == a["gtid"] and x["idx"] == a["idx"]), None)


@checks("WL344.CHAIN.IMMEDIATE")
def chain_measured_from_immediate_master(v: TraceView, check: Check) -> None:
    """In A -> B -> C, C executes an event no earlier than the delay after B executed it."""
    ix = index(v)
    epoch = v.header.get("epoch_us", 0)
    for a in gtid_applies(v):
        if a["type"] in EXEMPT or a["source"] not in v.channels:
            continue
        x = _source_exec(v, a)
        # the delay in force as it began: a CHANGE MASTER logged after it in the same µs came later
        delay = ix.delay_at(a["node"], begin_of(a), a["_line"])
        if x is None or delay is None:
            continue
        b = ix.binlog.get((a["source"], a["gtid"], a["idx"])) if ix.rule(a) == "wl7318" and a.get("ict") else None
        if b is not None:
            # WL#7318: B's timestamp is its commit's (immediate_commit_timestamp), on B's clock as it
            # wrote the event: a clock step while B executed it moves the second it counts from
            whole = a["ict"] // US * US - epoch - v.offset_at(a["source"], b["t"], b["_line"])
        else:
            # B's clock before the trace's next line: a step logged after its execution in the same µs came later
            off = v.offset_at(a["source"], begin_of(x), x["_line"])
            whole = (begin_of(x) + epoch + off) // US * US - epoch - off  # B's timestamp, whole seconds
        due = whole + delay * US
        ok = begin_of(a) + v.resolution_us >= due
        # What the requirement tells apart: counting from B's execution, or from the original
        # master's timestamp the event carries (BUG#52308), which C can follow no earlier than B
        # executed it. On a polled trace both executions are stamped up to the resolution late: a
        # distance between the two of at most twice the resolution cannot show which (chain-per-hop
        # at load 19: C 1.1 s before its due time, within a 1.4 s resolution, looked on time).
        alt = max(a["when"] * US - epoch + delay * US, begin_of(x)) if a.get("when") else due
        if ok and v.resolution_us and due - alt <= 2 * v.resolution_us:
            check.undecidable(f"{a['node']} began {a['type']} of {a['trx']} at {seconds(begin_of(a))}, due {seconds(due)} counted from "
                              f"{a['source']}'s execution at {seconds(begin_of(x))}: a resolution of {seconds(v.resolution_us)} cannot "
                              f"tell it from counting from the original timestamp", x, a)
            continue
        check.judge(ok, lambda: f"{a['node']} began {a['type']} of {a['trx']} at {seconds(begin_of(a))}, {a['source']} executed it at "
                        f"{seconds(begin_of(x))}: due {seconds(due)} with delay {delay}", x, a)


@checks("WL344.CLOCK.COMPENSATE")
def clocks_compensated(v: TraceView, check: Check) -> None:
    """With unsynchronised clocks, events still run exactly when due in absolute time; and while
    the replica waits, the deadline it counts to (SQL_Remaining_Delay from its clock's second)
    is the due time, within the whole second it counts in, whether the clocks differ or not."""
    ix = index(v)
    # where every clock reads true time throughout (no offset, no step), no two differ: no event to judge
    for a in gtid_applies(v) if v.kind("clock_step") or any(n.get("clock_offset_us") for n in v.nodes.values()) else ():
        due = ix.due(a, exact=True)
        if due is None:
            continue
        writer = a["source"] if ix.rule(a) == "wl7318" else ix.origin_of(a)["node"]  # due is known: so is the origin
        if v.offset_at(writer, a["t"]) != v.offset_at(a["node"], a["t"]):
            judge_due(v, check, a, due, tight=True, what=f"clocks of {writer} and {a['node']} differ")
    if "relay" not in v.unobserved:
        _judge_deadlines(v, check)


def _judge_deadlines(v: TraceView, check: Check) -> None:
    """A server counts to when + clock difference + MASTER_DELAY in whole seconds (sql_delay_event),
    with the difference it measured in whole seconds when its IO thread connected
    (get_master_version_and_clock, sql/slave.cc: its time() minus the master's UNIX_TIMESTAMP()).
    SQL_Remaining_Delay is that deadline minus its clock's current second: shown, it tells the
    deadline, hence the estimate. On one machine the clocks are the same and the estimate must be
    0; a coarse time() a few ms behind the master's clock at a second's turn makes it -1, which
    cancels a second of every delay until the IO thread reconnects."""
    epoch = v.header.get("epoch_us", 0)
    for s in running_samples(v):
        rem = s["SQL_Remaining_Delay"]
        if s["Slave_SQL_Running_State"] != STATE_WAITING or not isinstance(rem, int):
            continue
        w = waiting_for(v, s, exact=True)
        if w is None or w[0] != "yes":
            continue
        if v.resolution_us and "sampled_until" not in s:
            continue  # a polled sample that does not say how long it took: its second is not known
        off = v.offset_at(s["node"], s["t"], s["_line"])
        first, last = epoch + off + s["t"] - v.clock_read_lag_us, epoch + off + s.get("sampled_until", s["t"])
        if first // US != last // US:
            continue  # sampled across a second's turn: which second the server counted from is unknown
        deadline = (first // US + rem) * US - epoch - off
        error = deadline - w[1]
        # The connect's clock query, where the trace shows it (the MariaDB harness's channel relay).
        q = v.of_node(s["node"], "clock_query").last_before(s["_line"])
        check.judge(abs(error) < US, lambda: f"{s['node']} at {seconds(s['t'])} counts to {seconds(deadline)} (SQL_Remaining_Delay {rem}) but the "
                    f"event is due at {seconds(w[1])}: {error / US:+.0f} s, the error of the clock difference it measured in whole "
                    f"seconds at its IO thread's connect (clock_diff_with_master)" + ("" if q is None else (
                        f"; its IO thread's clock query got the answer {q['master_unix_timestamp']} at "
                        f"{seconds(q['t'])}: clock_diff_with_master {q['clock_diff_with_master']}")), s, *([q] if q else []))

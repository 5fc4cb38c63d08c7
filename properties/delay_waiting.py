"""What the SQL thread was doing at a status sample, where the Trace decides it: delaying for the
event in hand (and until when) or not (waiting_for), as the delay's status properties judge it."""
from __future__ import annotations

from bisect import bisect_left

from replcheck.spec.formats import US

from .configuration import with_workers
from .core import TraceView
from .delay_timing import TRX_START, UNASKED, DelayIndex, count_moved, index
from .filter import ignores_marked_at, kept_out
from .semisync_applier import any_may_wait


# _in_hand's answer where the trace does not decide whether the thread was delaying
UNDECIDED = None, None


def _coordinator_ahead(v: TraceView, ix: DelayIndex, s: dict, r: dict) -> bool:
    """A polled replica with workers holding a later group than r unapplied: MariaDB's coordinator
    delays each event before handing its group over (rpl_parallel::do_event: sql_delay_event), so it
    may wait for that one while a worker has r, and a poll shows neither (seed 8, History 169)."""
    return bool(v.resolution_us) and with_workers(v, s) and any(
        x.get("trx") not in (None, r.get("trx")) and not any(a["_line"] < s["_line"] for a in ix.applies_of(s["node"], x["file"], x["pos"]))
        for x in v.of_node(s["node"], "relay").between(r["_line"], s["_line"]))


def waiting_for(v: TraceView, s: dict, exact: bool = False) -> tuple[str, int | None, int | None] | None:
    """('yes'|'no', due, latest due) if the trace decides whether the SQL thread was delaying at the
    sample; None at a boundary. The due time as the replica counts it, or `exact` (DelayIndex.due);
    on a polled trace the latest is later where the thread may have read the event before its IO
    thread measured the clock difference again."""
    ix = index(v)
    key = s["_line"], exact
    answer = ix.waiting.get(key, UNASKED)  # most are asked once: no KeyError raised for each
    if answer is UNASKED:
        answer = ix.waiting[key] = _decide_waiting(v, ix, s, exact)
    return answer


def seconds_left(w: tuple[str, int | None, int | None], t: int) -> tuple[float, float]:
    """The seconds left at t to a waiting_for answer's earliest and latest due."""
    return (w[1] - t) / US, (w[2] - t) / US


def left_text(left: tuple[float, float]) -> str:
    return f"{left[0]:.3f}" if left[0] == left[1] else f"{left[0]:.3f} to {left[1]:.3f}"


def _reading_again(v: TraceView, ix: DelayIndex, s: dict) -> bool:
    """After a rewinding stop (a parallel MariaDB replica with several domains: handle_slave_sql's exit
    puts its place at the relay log's start, shown as Relay_Log_Pos 4) the SQL thread reads again
    what it executed and passes it over by GTID, and rpl_parallel::do_event runs sql_delay_event on
    each event before process_gtid_for_restart_pos: with nothing new to execute, a wait may be for a
    group read again. As for a group fetched again, not judged (WL#344 predates GTIDs)."""
    node = s["node"]
    stops, shown = ix.rewinds.get(node) or ix.rewinds.setdefault(node, _rewinds(v, node))
    i = bisect_left(stops, s["_line"])  # after the last stop before the sample
    return bool(i) and shown[i - 1] is not None and shown[i - 1] <= s["_line"] \
        and not v.of_node(node, "visible").between(stops[i - 1], s["_line"])


def _rewinds(v: TraceView, node: str) -> tuple[list[int], list[int | None]]:
    """The lines of the node's SQL thread stops, and of the first sample after each where it shows
    the relay log's start (Relay_Log_Pos 4), else None: asked of every sample, found once per stop."""
    samples, stops = v.of_node(node, "status"), v.of_node(node, "sql_stop").keys
    shown = []
    for line in stops:
        s = next(samples.after(line), None)
        shown.append(s["_line"] if s is not None and s["Relay_Log_Pos"] == 4 else None)
    return stops, shown


def _read_again_not_due(v: TraceView, ix: DelayIndex, s: dict, r: dict) -> bool:
    """A group relayed before r, which the thread passes again after a rewinding stop, is not yet due at
    the sample: sql_delay_event runs before process_gtid_for_restart_pos (rpl_parallel::do_event), so
    the thread may wait for it before it reaches r (a group written with a timestamp ahead)."""
    probe = {"begin": s["t"], "t": s["t"], "_line": s["_line"]}
    return any(x["type"] in TRX_START and (due := ix.due({**x, **probe})) is not None and due > s["t"] - v.resolution_us
               for x in v.of_node(s["node"], "relay").before(r["_line"]))


def _decide_waiting(v: TraceView, ix: DelayIndex, s: dict, exact: bool) -> tuple[str, int | None, int | None] | None:
    # what the thread has in hand is decided once per sample, for both ways of counting
    r, applied = ix.pending_at(s)
    held = ix.in_hand.get(s["_line"])
    if held is None:
        held = ix.in_hand[s["_line"]] = _in_hand(v, ix, s, r, applied)
    answer, probe = held
    if probe is None:
        return answer
    t, tol = s["t"], v.resolution_us
    if not exact and count_moved(v, s["node"], r["_line"], s["_line"]):
        return None
    due = ix.due(probe, exact)
    if due is None:
        return "no", None, None
    # A read before a reconnect counts by the difference measured before it (seed 10's History 84:
    # B read t7's GTID event before its IO thread, cut after it, measured -3603 s instead of -3602).
    late = due if exact else ix.due(probe, latest=True)
    if due - tol <= t <= late + tol:
        return None
    if tol and late < t < late + US:
        # A server counts the delay in whole seconds and sleeps the whole seconds left from when it
        # looked (sql_delay_event: nap_time = sql_delay_end - now, then slave_sleep): it may wait
        # up to a second past the due time. Whether it waits longer is WL344.WAIT.NO_EXTRA's.
        return None
    return ("yes" if due > t else "no"), due, late


def _in_hand(v: TraceView, ix: DelayIndex, s: dict, r: dict | None, applied: int | None) -> tuple[tuple[str, None, None] | None, dict | None]:
    """(answer, None) where waiting_for decides at the sample alike whether it counts as the replica
    does or exactly, given pending's event r; else (None, the probe: r, or its apply, as if begun at
    the sample)."""
    t, tol = s["t"], v.resolution_us
    if tol and ix.relayed_within(s["node"], t, t + tol):
        return UNDECIDED  # a relay log read after the sample may hold what the SQL thread had at it
    if r is None:  # nothing left to execute, unless it reads again what it executed
        return UNDECIDED if _reading_again(v, ix, s) else (("no", None, None), None)
    if _reading_again(v, ix, s) and _read_again_not_due(v, ix, s, r):
        return UNDECIDED  # it may wait for a group before r it reads again, not yet due (a future timestamp)
    if r.get("trx") is not None and ix.executed_before(s["node"], r["trx"], s["_line"]):
        # A group the node had executed, fetched again (after RESET SLAVE, say): a model skips it at
        # its GTID event without a wait, and shows the skip once the group is whole (a cut IO thread
        # may leave only its start). Whether a server delays it first (MySQL's sql_delay_event runs
        # before Gtid_log_event's skip) is not WL#344's, which predates GTIDs: not judged.
        return UNDECIDED
    if r["t"] >= t - tol or (applied is not None and applied <= t + tol):
        return UNDECIDED  # it just arrived, or is being applied at this very instant
    if _coordinator_ahead(v, ix, s, r):
        return UNDECIDED
    if not with_workers(v, s) and any_may_wait(v, s["node"], (t, s["_line"])):
        # An intermediate semi-sync master's SQL thread may still be in the commit of the group
        # before r, waiting for an ack (Repl_semi_sync_master::commit_trx, sql/semisync_master.cc,
        # from ha_commit_trans): it reads r, and delays for it (sql_delay_event, called by
        # exec_relay_log_event, sql/slave.cc), only once that commit returns.
        return UNDECIDED
    if r.get("skip_replication") and ignores_marked_at(v, s["node"], s["_line"]):
        # a marked group the node filters is ignored at its events without a wait (EVENT_SKIP_IGNORE;
        # sql_delay_event runs only for EVENT_SKIP_NOT, as model/filter.py cites): the thread waits
        # for a later event, if any
        return UNDECIDED
    if "filtered" in v.unobserved and r.get("trx") in kept_out(v, s["node"]):
        # a group the replica's filters keep out, on a trace that cannot show where the SQL thread
        # passed it: the event it waits for may be a later one (campaign finding, a real server
        # waiting for t3 while t1, filtered, was the first unapplied), as SBM's in_hand has it
        return UNDECIDED
    before = [x for x in ix.applies_of(s["node"], r["file"], r["pos"]) if x["_line"] < s["_line"]]
    if before and not any(b["trx"] == r["trx"] for b in v.of_node(s["node"], "rollback").between(before[-1]["_line"], s["_line"])):
        return UNDECIDED  # applied before the sample and redone only after a later rollback: the thread was past it
    skipped = [x for x in ix.skipped_at.get((s["node"], r["file"], r["pos"]), []) if x["_line"] < s["_line"]]
    if skipped and not v.of_node(s["node"], "sql_stop").between(skipped[-1]["_line"], s["_line"]):
        # skipped (sql_slave_skip_counter) before the sample, skipped again only after a stop put the
        # thread back at its group's start: at the sample the thread was past it, waiting for the rest
        # of the group (a cut IO thread may leave only its start in the relay log)
        return UNDECIDED
    a = next((x for x in ix.applies_of(s["node"], r["file"], r["pos"]) if x["t"] > t), None)
    if a is not None and a.get("read") is not None and a["read"] >= t - tol:
        # still busy with the previous event, or done with it in the sample's own instant, which may
        # come first (a wait for a group read again ends as the sample is taken, then the next read)
        return UNDECIDED
    # due under the delay in force at the sample: a CHANGE MASTER before the apply may change it
    return None, {**(a or r), "begin": t, "t": t, "_line": s["_line"]}

"""Incident events (WL#3464): one check per requirement, judging a Trace alone.

A "lost change" is one the master made visible but never binlogged (a `visible` observation on
the master with no GTID); an incident is an INCIDENT_EVENT in a binlog. On a replica the checks
follow each relayed incident: the stop it causes, what is applied or skipped after it, and
what SHOW SLAVE STATUS says meanwhile.
"""
from __future__ import annotations

import bisect
import re
from itertools import takewhile
from typing import NamedTuple

from replcheck.spec.formats import US

from . import delay as delay_properties
from .delay_timing import read_triggers
from . import incident_diskfull, incident_source  # noqa: F401  (its parts: the source's side, a full disk)
from .core import Check, Seq, TraceView, checks, seconds
from .incident_index import ends_io, index, index_by, key, resumes, timed

KNOWN = {0: "NONE", 1: "LOST_EVENTS"}
# What the skip counter neither counts nor skips (a dump's Gtid_list too: Gtid_list_log_event::do_shall_skip)
# Besides the seed's exempt events: MariaDB's Binlog_checkpoint, which does nothing on a replica
# (log_event_server.cc) and which the models do not write.
EXEMPT = frozenset({"START_EVENT_V3", "ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT", "BINLOG_CHECKPOINT_EVENT"})
MESSAGE = re.compile(r"^The incident (\S+) (?:occured|occurred) on the (?:master|source)\. Message: (.*)$", re.S)


def _executed(v: TraceView, node: str, r: dict) -> list[dict]:
    """apply and skip observations of relayed event r: at its place, while its relay log lasted
    (relay_log_recovery numbers the relay logs again: what runs at that place before or after is
    another event: an earlier relay.000003's Rotate is not a later copy's incident applied)."""
    ix = index(v)
    start, end = ix.relay_log_start(r), ix.relay_log_end(r)
    return [x for x in ix.executed_at.get((node, r["file"], r["pos"]), []) if start < key(x) < end]


def _relayed_incidents(v: TraceView):
    ix = index(v)
    return [(r, ix) for r in ix.relayed_incidents]


def _stopped_at(v: TraceView):
    """(relayed incident, the stop it caused) for every incident a replica stopped at."""
    ix = index(v)
    for r, _ in _relayed_incidents(v):
        stop = ix.stop_after(r)
        if stop is not None:
            yield r, stop


def _skipped_before(v: TraceView, r: dict, stop: dict) -> bool:
    """Whether the replica had skipped this incident (the same place in its master's binlog) before
    it stopped at this copy of it: a GTID reconnect may have relayed the copy before the DBA's skip
    (inside the group it cut, when the cut fell inside one)."""
    ix = index(v)
    first = v.memo("incident.first_skip_of_origin", lambda: _first_skip_of_origin(v))
    skipped = first.get((r["node"], ix.origin(r["node"], r["file"], r["pos"])))
    return skipped is not None and skipped < key(stop)


def _first_skip_of_origin(v: TraceView) -> dict[tuple, tuple[int, int]]:
    """(replica, place in its master's binlog) -> when it first skipped an incident from there."""
    ix, out = index(v), {}
    for s in v.kind("skip"):
        if s.get("type") == "INCIDENT_EVENT":
            k = (s["node"], ix.origin(s["node"], s["relay_file"], s["relay_pos"]))
            out[k] = min(out.get(k, key(s)), key(s))
    return out


def _reached(v: TraceView, r: dict) -> bool:
    """The SQL thread got to the incident: something about it or after it happened on the replica."""
    ix = index(v)
    if ix.stop_after(r) is not None:
        return True
    # a relayed event from r on whose place the SQL thread executed (applied or skipped) before the
    # relay log was thrown away: a place of the same name and offset in the relay log fetched again
    # after a purge (a GTID start's) holds another event
    done = v.memo(("incident.executed_relays", r["node"]), lambda: timed(
        x for x in ix.relays.get(r["node"], ()) if (x["node"], x["file"], x["pos"]) in ix.executed_at))
    start, end = ix.relay_log_start(r), ix.relay_log_end(r)
    return any(any(start < key(e) < end for e in ix.executed_at[(x["node"], x["file"], x["pos"])])
               for x in takewhile(lambda x: key(x) < end, done.after((r["t"], r["_line"] - 1))))


def _judge_stop(v: TraceView, check: Check, known: bool) -> None:
    for r, ix in _relayed_incidents(v):
        if (r.get("incident") in KNOWN) != known or not _reached(v, r):
            continue
        stop = ix.stop_after(r)
        done = _executed(v, r["node"], r)
        first = min(done, key=key, default=None)
        # A skip counter the DBA set beforehand consumes the incident: that is the DBA acting.
        dba_skip = first is not None and first["kind"] == "skip" and first.get("reason") == "sql_slave_skip_counter"
        stopped = stop is not None and (first is None or key(stop) < key(first))
        ok = (stopped or dba_skip) and not any(o["kind"] == "apply" for o in done)
        check.judge(ok, f"{r['node']} did not stop at incident {r.get('incident')} ({r.get('message')!r}) relayed at {seconds(r['t'])}",
                    r, *done[:1])


@checks("WL3464.R3.1", needs=("relay",))
def stop_on_known_incident(v: TraceView, check: Check) -> None:
    """The replica's SQL thread stops at a known incident (NONE, LOST_EVENTS)."""
    _judge_stop(v, check, known=True)


@checks("WL3464.R3.2", needs=("relay",))
def stop_on_unknown_incident(v: TraceView, check: Check) -> None:
    """The replica's SQL thread always stops at an incident code it does not know."""
    _judge_stop(v, check, known=False)


@checks("WL3464.MSG", needs=("relay",))
def stop_message(v: TraceView, check: Check) -> None:
    """Error 1590 with 'The incident <symbol> occured on the master. Message: <message>', also in SHOW SLAVE STATUS."""
    for r, stop in _stopped_at(v):
        m = MESSAGE.match(stop.get("message", ""))
        symbol = KNOWN.get(r.get("incident"))
        want_msg = r.get("message") or "<none>"
        ok = m is not None and m.group(2) == want_msg and (symbol is None or m.group(1) == symbol)
        # the first sample while this stop lasts: after a restart or START SLAVE it shows another error, or none
        end = _stopped_interval(v, stop)[1]
        sample = next(v.timed(r["node"], "status").after(key(stop)), None)
        sample = sample if sample is not None and key(sample) < end else None
        if sample is not None and sample["Slave_SQL_Running"] == "No" and "Last_SQL_Errno" in sample:
            ok = ok and sample["Last_SQL_Errno"] == stop["errno"] and sample["Last_SQL_Error"] == stop["message"]
        check.judge(ok, f"{r['node']} stopped with {stop.get('message')!r} for incident {r.get('incident')} ({want_msg!r})",
                    stop, *([sample] if sample else []))


def _stopped_interval(v: TraceView, stop: dict) -> tuple[int, int]:
    """From an incident stop to the next START SLAVE, restart or restore, or the DBA's move of the
    replica elsewhere (RESET SLAVE, a CHANGE MASTER to a new place: its relay log and position go)
    (or the end), in trace order."""
    ends = v.memo(("incident.resumes", stop["node"]), lambda: timed(
        o for o in v.of_node(stop["node"], "restart", "restore", "stmt") if resumes(o)))
    start = next(ends.after(key(stop)), None)
    return key(stop), (key(start) if start else (2**62, 0))


def _io_running_before(v: TraceView, stop: dict) -> bool:
    """Whether the replica's IO thread ran when its SQL thread stopped: the last sample, STOP or
    START SLAVE [IO_THREAD], crash, restart or restore (both start both threads) before the stop says."""
    def step(running: bool, o: dict) -> bool:
        if o["kind"] == "status":
            return o["Slave_IO_Running"] == "Yes"
        if o["kind"] in ("crash", "restart", "restore"):
            return o["kind"] != "crash"
        if o["kind"] == "stmt" and o["op"] in ("stop_slave", "start_slave") and o.get("errno") is None \
                and o.get("thread") in (None, "io"):
            return o["op"] == "start_slave"
        if o["kind"] == "io_cut" and o.get("then") == "stop":  # a cut that stopped the IO thread
            return False
        return running
    kinds = ("status", "crash", "restart", "restore", "stmt", "io_cut")
    return v.fold("incident.io_running", stop["node"], kinds, step, True).before(stop["_line"])


@checks("WL3464.IO_RUNS")
def io_thread_goes_on(v: TraceView, check: Check) -> None:
    """At an incident only the SQL thread stops: the IO thread keeps running."""
    ix = index(v)
    for stop in ix.stops:
        if not _io_running_before(v, stop):
            continue  # the DBA (or a crash) had stopped it already: the incident did not
        lo, hi = _stopped_interval(v, stop)
        # Until the DBA stops the slave, it crashes, or a cut stops its IO thread: after that the IO
        # thread is theirs to stop.
        io_ends = v.memo(("incident.io_ends", stop["node"]), lambda: timed(
            o for o in v.of_node(stop["node"], "crash", "stmt", "io_cut", "error") if ends_io(o)))
        hi = min(hi, next((key(o) for o in io_ends.after(lo)), hi))
        s = next(v.timed(stop["node"], "status").after(lo), None)
        if s is not None and key(s) < hi:
            # a running IO thread shows Yes, or Connecting / Preparing while it (re)connects and
            # registers (MariaDB sql/slave.cc, slave_running_state: {"No", "Connecting", "Preparing", "Yes"})
            check.judge(s["Slave_IO_Running"] != "No", f"{s['node']} at {seconds(s['t'])}: IO thread {s['Slave_IO_Running']!r} "
                        "while stopped at an incident", stop, s)


@checks("WL3464.HOLD", needs=("relay",))
def nothing_after_the_incident(v: TraceView, check: Check) -> None:
    """Stopped at an incident, the replica applies nothing and keeps its position just before it."""
    ix = index(v)
    for r, stop in _stopped_at(v):
        lo, hi = _stopped_interval(v, stop)
        applied = v.timed(r["node"], "apply").between(lo, hi)
        check.judge(not applied, f"{r['node']} applied {applied[0]['type'] if applied else ''} of "
                    f"{applied[0]['trx'] if applied else ''} while stopped at an incident", stop, *applied[:1])
        b = ix.source_binlog(r)
        if _skipped_before(v, r, stop):
            continue  # sent again after the DBA skipped it: WL3464.R4.ONCE's violation, at the place the dump put it
        # A GTID connect that skipped another domain's groups leaves a hole before the incident in the
        # relay log: the position executed is then the end of the event relayed just before it.
        placed = v.memo(("incident.placed_relays", r["node"]), lambda: timed(x for x in ix.relays.get(r["node"], ()) if x["master_end"]))
        last = placed.last_before(key(r))
        hole = last["master_end"] if b is not None and last and last["master_file"] == b["file"] \
            and last["master_end"] < b["pos"] else None
        # A CHANGE MASTER TO MASTER_DELAY while stopped throws the relay log away (a new one starts at
        # 4, the incident is fetched again); the position executed stays.
        # Any CHANGE MASTER TO that names no relay-log place does so at once (change_master,
        # sql/sql_repl.cc: need_relay_log_purge), though a real server's Trace shows a purge only at
        # the next START SLAVE (seed 11's History 6: a sample between the two showed relay.000001:4).
        drops = [*v.timed(r["node"], "relay_log_recovery").between(lo, hi), *(
            o for o in v.timed(r["node"], "stmt").between(lo, hi)
            if o["op"] == "change_master" and o.get("errno") is None and "relay_log_file" not in o)]
        opened = _open_group_start(v, stop)
        for s in v.timed(r["node"], "status").between(lo, hi):
            if b is not None:
                relay_kept = not any(key(d) < key(s) for d in drops)
                ok = (s["Relay_Log_Pos"] in (r["pos"], opened) or not relay_kept) and s["Exec_Master_Log_Pos"] in (b["pos"], hole)
                check.judge(ok, "" if ok else f"{s['node']} stopped at an incident shows Relay_Log_Pos {s['Relay_Log_Pos']}, "
                            f"Exec_Master_Log_Pos {s['Exec_Master_Log_Pos']}; the incident is at {r['pos']}, master {b['pos']}", s)


def _open_group_start(v: TraceView, stop: dict) -> int | None:
    """The relay-log place of the group the SQL thread had open when it stopped at the incident (a
    partial copy a reconnect by position left, whose artificial format description rolls nothing
    back): the stop rolls it back, and the group position stays at its start (MariaDB rpl_rli.cc,
    inc_group_relay_log_pos moves only at a group's end)."""
    back = v.of_node(stop["node"], "rollback").last_before(stop["_line"])
    if back is None or back["t"] != stop["t"] or back.get("reason") != "error":
        return None
    first = [a for a in v.of_node(stop["node"], "apply").before(back["_line"]) if a.get("trx") == back["trx"] and a.get("idx") == 0]
    return first[-1]["relay_pos"] if first else None


def _skips_after_start(v: TraceView, start: dict) -> tuple[list[dict], dict | None]:
    """The skip observations right after a START SLAVE, and the first event applied after them.
    A real server's skips are stamped when its note is read and its applies when a poll finds the
    row: a skip up to the resolution after that apply came before it."""
    skips, first_apply = [], None
    for o in v.timed(start["node"], "skip", "apply", "sql_stop").after(key(start)):
        if o["kind"] == "skip" and o.get("reason") == "sql_slave_skip_counter":
            if first_apply is not None and o["t"] > first_apply["t"] + v.resolution_us:
                break
            skips.append(o)
        elif o["kind"] == "apply" and o["type"] not in EXEMPT and first_apply is None:
            first_apply = o
            if not v.resolution_us:
                break
        elif o["kind"] == "sql_stop":
            break
    return skips, first_apply


@checks("WL3464.R4", needs=("relay",), kinds=("stmt:set_global",))
def skip_resumes_after_incident(v: TraceView, check: Check) -> None:
    """SKIP_COUNTER = 1 and START SLAVE skip exactly the incident; the next event applied is the one after it."""
    ix = index(v)
    for r, stop in _stopped_at(v):
        _, hi = _stopped_interval(v, stop)
        stmts = v.timed(r["node"], "stmt")
        setting = [o for o in stmts.between(key(stop), hi) if o["op"] == "set_global" and o.get("variable") == "sql_slave_skip_counter"]
        if not setting or setting[-1]["value"] != 1 or hi[0] >= 2**62:
            continue
        start = next((o for o in stmts.between((hi[0], hi[1] - 1), (hi[0], hi[1] + 1)) if o["op"] == "start_slave"), None)
        if start is None:
            continue  # a restart, or the replica moved elsewhere: not the DBA's START SLAVE at the incident
        if _thrown_away(v, r, stop, start):
            continue
        skips, first_apply = _skips_after_start(v, start)
        # a group a filter keeps out (FILTER_ON_SLAVE's marked ones, replicate-*) is passed, not applied
        passed = {o["trx"] for o in v.of_node(r["node"], "filtered") if o.get("trx") is not None}
        following = next((x for x in ix.after(r) if x["type"] not in EXEMPT and x.get("trx") not in passed), None)
        if first_apply is not None and first_apply.get("trx") in passed:
            # past the passed groups, what the SQL thread reached next: an event it applied, or the
            # place it stopped at (the next incident, whose stop's relay place is the incident's own)
            first_apply = next((o for o in v.timed(r["node"], "apply", "sql_stop").after(key(first_apply))
                                if o["kind"] == "sql_stop" or (o["type"] not in EXEMPT and o.get("trx") not in passed)), None)
            if first_apply is not None and first_apply["kind"] == "sql_stop" and first_apply.get("relay_pos") is None:
                first_apply = None  # STOP SLAVE or a crash: nothing reached to judge
        # The same incident, in this relay log or relayed again into a new one (MariaDB purges the
        # relay logs when START SLAVE starts both threads with GTID): the place in the master's binlog.
        ok = [ix.origin(s["node"], s["relay_file"], s["relay_pos"]) for s in skips] == [ix.origin(r["node"], r["file"], r["pos"])]
        if following is not None and first_apply is not None:
            ok = ok and ix.origin(first_apply["node"], first_apply["relay_file"], first_apply["relay_pos"]) == \
                ix.origin(following["node"], following["file"], following["pos"])
        check.judge(ok, f"{r['node']}: skip 1 after the incident skipped {[(s['type'], s.get('trx')) for s in skips]}, "
                    f"then {_next_reached(first_apply)}", start, *skips[:2])


def _thrown_away(v: TraceView, r: dict, stop: dict, start: dict) -> bool:
    """Whether a CHANGE MASTER while stopped threw away the relay log holding the incident and no
    dump sent it again (a connect by GTID starts at the first group the replica lacks, past it): the
    counter then skips whatever group comes first (Log_event::do_shall_skip counts the next events
    read, sql/log_event.cc), not the incident, which is beyond this procedure."""
    dropped = next(iter(v.timed(r["node"], "relay_log_recovery").between(key(stop), key(start))), None)
    if dropped is None:
        return False
    place = index(v).origin(r["node"], r["file"], r["pos"])
    return not any((x["source"], x["master_file"], x["master_end"]) == place for x in v.timed(r["node"], "relay").after(key(dropped)))


def _next_reached(o: dict | None) -> str:
    """What the SQL thread reached after the skip, as the witness names it."""
    if o is not None and o["kind"] == "sql_stop":
        return f"stopped at {o['relay_file']}:{o['relay_pos']}"
    return f"applied {o and (o['type'], o['trx'])}"


@checks("WL3464.R4.ONCE")
def skipped_incident_stays_skipped(v: TraceView, check: Check) -> None:
    """Once a replica has skipped as many incident stops as its masters wrote incidents, another
    incident stop is at one it already passed (a reconnect sent it again)."""
    ix = index(v)
    for node, stops in sorted(index_by(ix.stops, lambda s: s["node"]).items()):
        starts = sorted(v.skip_starts(node))
        skipped = 0
        for i, stop in enumerate(stops):
            # written by the others before the stop: those that may have been written before it (a real
            # server's incident lies in an interval: its stop may be seen before the interval ends; a polled
            # stop came no later than the poll that saw it ended)
            latest = (stop["seen_until"], 2**62) if "seen_until" in stop else key(stop)
            written = sum(bisect.bisect_left(lows, latest) for n, lows in ix.earliest_of.items() if n != node)
            check.judge(skipped < written, f"{node} stopped at an incident at {seconds(stop['t'])} after skipping {skipped}; "
                        f"its masters wrote {written}: one it had skipped came back", stop)
            # the DBA skipped past it (SQL_SLAVE_SKIP_COUNTER, then START SLAVE) before the next stop
            until = key(stops[i + 1]) if i + 1 < len(stops) else (2**62, 0)
            k = bisect.bisect_right(starts, key(stop))
            if k < len(starts) and starts[k] < until:
                skipped += 1


@checks("WL3464.REACH")
def every_incident_reaches_its_replicas(v: TraceView, check: Check) -> None:
    """A replica of the incident's server that applies a group binlogged before it and then one
    binlogged after it stops at an incident in between."""
    ix = index(v)
    for b in ix.incidents:
        log = ix.binlog[b["node"]]
        i = bisect.bisect_left(log.keys, b["_line"])
        for node in _appliers(v):
            if v.channels.get(node, {}).get("source") != b["node"]:
                continue
            seen = _applied_from(v, node, b["node"])
            # the first group it applied that was binlogged after the incident, the last before that binlogged before it
            j = bisect.bisect_right(seen.latest_so_far, i)
            if j == len(seen.visible):
                continue
            first_after = seen.visible[j]
            k = next((k for k in range(j - 1, -1, -1) if seen.first_at[k] < i), None)
            if k is None:
                continue
            last_before = seen.visible[k]
            if _moved(v, node, key(last_before), key(first_after)):
                continue
            stopped = ix.stops_of.get(node, Seq((), key)).between(key(last_before), key(first_after))
            check.judge(bool(stopped), f"{node} applied {last_before['trx']} and then {first_after['trx']}, binlogged on "
                        f"either side of the incident at {b['file']}:{b['pos']} on {b['node']}, without stopping at it",
                        b, last_before, first_after)


def _appliers(v: TraceView) -> list[str]:
    """The nodes with visible groups, in the order of their first."""
    return v.memo("incident.appliers", lambda: list(dict.fromkeys(o["node"] for o in v.kind("visible") if o.get("trx"))))


class _Applied(NamedTuple):
    visible: list[dict]  # the replica's visible groups that its source binlogged whole, in trace order
    first_at: list[int]  # where each group's first whole copy stands in the source's binlog
    latest_so_far: list[int]  # the latest place in the source's binlog of any of them up to each


def _applied_from(v: TraceView, node: str, source: str) -> _Applied:
    """The replica's groups, placed in its source's binlog: an incident at place i lies between
    the groups applied before the first with a copy after i and those with a copy before i."""
    def build() -> _Applied:
        first: dict[str, int] = {}
        latest: dict[str, int] = {}
        for i, o in enumerate(v.of_node(source, "binlog")):
            if o.get("trx") and o["last"]:
                first.setdefault(o["trx"], i)
                latest[o["trx"]] = i
        seen = [o for o in v.of_node(node, "visible") if o.get("trx") in first]
        so_far, top = [], -1
        for o in seen:
            top = max(top, latest[o["trx"]])
            so_far.append(top)
        return _Applied(seen, [first[o["trx"]] for o in seen], so_far)
    return v.memo(("incident.applied_from", node, source), build)


def _moved(v: TraceView, node: str, lo: tuple[int, int], hi: tuple[int, int]) -> bool:
    """Whether the replica changed master in (lo, hi): a CHANGE MASTER TO another host, a restore, a promotion."""
    moves = v.memo(("incident.moves", node), lambda: timed(o for o in v.of_node(node, "restore", "promoted", "stmt") if o["kind"] != "stmt" or (
        o["op"] == "change_master" and o.get("master_host") and o.get("errno") is None)))
    return bool(moves.between(lo, hi))


# What throws away the SQL thread's place inside a group: it starts again at the group's first event.
_DISCARDS = ("crash", "shutdown", "restart", "sql_stop", "relay_log_recovery")


def _skip_abandoned(v: TraceView, s: dict) -> tuple[int, int] | None:
    """When the skip of s's group was thrown away before it reached the group's last event (a cut
    IO thread may leave only the group's start to skip; then a crash, a stop, or the partial copy
    rolled back): the next copy of
    the group is another one, which nothing skipped. None if it reached the end, or if the trace
    does not say which event ends the group (no relay observation)."""
    by_place = v.memo("incident.relay_by_place", lambda: {(r["node"], r["file"], r["pos"]): r for r in v.kind("relay")})
    for o in v.timed(s["node"], "skip", "rollback", *_DISCARDS).after((s["t"], s["_line"] - 1)):
        if o["kind"] in _DISCARDS:
            return key(o)
        if o["kind"] == "rollback" and o.get("reason") == "partial_group" and o.get("gtid") == s["gtid"]:
            # The copy was rolled back as partial, and the skip with it: a source's FDE or the next
            # group's start inside it (Format_description_log_event::do_apply_event, and MySQL's
            # Gtid_log_event::do_apply_event) ends the group being skipped; its next copy is another.
            return key(o)
        if o["kind"] == "skip" and o.get("gtid") == s["gtid"]:
            r = by_place.get((o["node"], o.get("relay_file"), o.get("relay_pos")))
            if r is None or r.get("last"):
                return None
    return None


@checks("WL3464.SKIP_GROUP", kinds=("skip",))
def skip_never_stops_inside_a_group(v: TraceView, check: Check) -> None:
    """Once the skip counter enters a group, the whole group is skipped, none of it applied (of the
    copy it entered: a crash or stop before the group's end throws that skip away)."""
    for s in v.kind("skip"):
        if s.get("reason") != "sql_slave_skip_counter" or s.get("trx") is None:
            continue
        end = _skip_abandoned(v, s) or (2**62, 0)
        rest = index(v).by_gtid.get((s["node"], s.get("gtid")), Seq((), key)).between(key(s), end)
        applied = [o for o in rest if o["kind"] == "apply"]
        check.judge(not applied, f"{s['node']} skipped {s['type']} of {s['trx']} but applied its {applied and applied[0]['type']}",
                    s, *applied[:1])


def _read_at(v: TraceView, r: dict, stop: dict) -> tuple[int, int]:
    """When, and at which trace line, the SQL thread read the relayed incident it stopped at: after
    its relay, after the thread's last start and after its last apply before the stop. The wait it
    then began counts by the clock
    difference measured by then: sql_delay_event sets its sleep once, at the read (MariaDB sql/slave.cc),
    so a reconnect's new clock_diff_with_master during the wait does not move it."""
    last = read_triggers(v, r["node"]).last_before(stop["_line"])
    # the later of the two, in time and then in trace order: a clock step logged after it in its µs
    # came after the read
    return max((r["t"], r["_line"]), (last["t"], last["_line"]) if last is not None else (-1, -1))


@checks("WL3464.DELAY", needs=("relay",))
def incident_waits_its_due_time(v: TraceView, check: Check) -> None:
    """A delayed replica stops at an incident no earlier than the incident's timestamp plus the delay,
    counted as the server counts it where the trace shows its clock query: with the clock difference
    it measured at its connect, on its own clock, which a clock step since moves (delay_timing's
    measured_due; MariaDB sql/slave.cc sql_delay_event: when + clock_diff_with_master + sql_delay)."""
    ix = index(v)
    relayed = _relayed_incidents(v)
    dx = delay_properties.index(v) if relayed else None
    epoch = v.header.get("epoch_us", 0)
    for r, _ in relayed:
        stop = ix.stop_after(r)
        delay = dx.delay_at(r["node"], stop["t"], stop["_line"]) if stop else None  # a CHANGE MASTER after it in its µs came after
        if not delay:
            continue
        origin = next(iter(ix.by_origin.get((r["server_id"], r["when"], r.get("message")), ())), None)
        if origin is None:
            continue
        due = dx.measured_due(r["node"], r["source"], r["when"], delay, stop["_line"], *_read_at(v, r, stop))
        if due is None:
            due = r["when"] * US - v.offset_at(origin["node"], origin["t"], origin["_line"]) - epoch + delay * US
        check.judge(stop["t"] + v.resolution_us >= due, f"{r['node']} stopped at the incident at {seconds(stop['t'])}, due at {seconds(due)}", r, stop)


@checks("WL3464.GTID_SKIP", kinds=("skip",))
def skipped_group_stays_skipped(v: TraceView, check: Check) -> None:
    """A GTID group skipped with the counter is never applied later, not after a reconnect or restart."""
    for s in v.kind("skip"):
        if s.get("reason") != "sql_slave_skip_counter" or not s.get("gtid") or not s.get("type", "").endswith("GTID_LOG_EVENT"):
            continue
        if _skip_abandoned(v, s) is not None:
            continue  # the skip never reached the group's end: the group was not skipped
        visible = v.memo("incident.visible_by_gtid", lambda: {k: timed(os) for k, os in index_by(
            (o for o in v.kind("visible") if o.get("gtid")), lambda o: (o["node"], o["gtid"])).items()})
        later = list(visible.get((s["node"], s["gtid"]), Seq((), key)).after(key(s)))
        check.judge(not later, f"{s['node']} skipped {s['trx']} ({s['gtid']}) at {seconds(s['t'])} but applied it at "
                    f"{seconds(later[0]['t']) if later else ''}", s, *later[:1])

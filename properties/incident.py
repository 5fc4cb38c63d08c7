"""Incident events (WL#3464): one check per requirement, judging a Trace alone.

A "lost change" is one the master made visible but never binlogged (a `visible` observation on
the master with no GTID); an incident is an INCIDENT_EVENT in a binlog. On a replica the checks
follow each relayed incident: the stop it causes, what is applied or skipped after it, and
what SHOW SLAVE STATUS says meanwhile.
"""
from __future__ import annotations

import re

from replcheck.spec.formats import US

from . import delay as delay_properties
from .core import Check, TraceView, checks
from .filter import unlogged

ER_SLAVE_INCIDENT, ER_REPLICA_INCIDENT = 1590, 13119  # MySQL 8.0.26+ renamed and renumbered it
KNOWN = {0: "NONE", 1: "LOST_EVENTS"}
# What the skip counter neither counts nor skips (a dump's Gtid_list too: Gtid_list_log_event::do_shall_skip)
# Besides the seed's exempt events: MariaDB's Binlog_checkpoint, which does nothing on a replica
# (log_event_server.cc) and which the models do not write.
EXEMPT = frozenset({"START_EVENT_V3", "ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT", "BINLOG_CHECKPOINT_EVENT"})
MESSAGE = re.compile(r"^The incident (\S+) (?:occured|occurred) on the (?:master|source)\. Message: (.*)$", re.S)


def _key(o: dict) -> tuple[int, int]:
    return o["t"], o["_line"]


def _has_master(v: TraceView, o: dict) -> bool:
    """Whether o's server replicated from a master then: the History's channels as it began, then
    each restore (as a slave) and promotion. A slave's own clients' changes are not its masters'
    to mark (an --rpl-hierarchical slave does not binlog them, GGID.FILTER)."""
    changes = [x for x in v.kind("restore") + v.kind("promoted") if x["node"] == o["node"] and _key(x) < _key(o)]
    last = max(changes, key=_key, default=None)
    return o["node"] in v.channels if last is None else last["kind"] == "restore"


class IncidentIndex:
    def __init__(self, v: TraceView):
        self.v = v
        self.binlog: dict[str, list[dict]] = {}
        for b in v.kind("binlog"):
            self.binlog.setdefault(b["node"], []).append(b)
        self.incidents = [b for b in v.kind("binlog") if b["type"] == "INCIDENT_EVENT"]
        # binlog-do/ignore-db leave a change out of the binlog by design: no gap (FILTER.BINLOG.DB)
        self.lost = [o for o in v.kind("visible") if o.get("gtid") is None and not _has_master(v, o)
                     and o.get("trx") not in unlogged(v)]
        self.relays: dict[str, list[dict]] = {}
        for r in v.kind("relay"):
            self.relays.setdefault(r["node"], []).append(r)
        self.stops = [o for o in v.kind("sql_stop") if o.get("errno") in (ER_SLAVE_INCIDENT, ER_REPLICA_INCIDENT)]

    def stop_after(self, r: dict) -> dict | None:
        """The stop a relayed incident caused: on that replica, after it, at its relay position
        (a trace that does not say where its SQL thread stopped: the first stop after it). A real
        server's relay log is read at each poll: the incident is stamped up to the resolution late,
        so a stop that early is after it too."""
        slack = self.v.resolution_us
        # Written after the read before the one that found it began (`since`): no stop before that
        # is its own, whatever the resolution (a copy fetched again comes long after the first stop).
        early = max(r["t"] - slack, r.get("since", 0))
        stop = next((s for s in self.stops if s["node"] == r["node"]
                     and (_key(s) > _key(r) if not slack else s["t"] >= early)
                     and s.get("relay_pos", r["pos"]) == r["pos"] and s.get("relay_file", r["file"]) == r["file"]), None)
        if stop is not None and "relay_pos" not in stop and any(
                k["node"] == r["node"] and (k["relay_file"], k["relay_pos"]) == (r["file"], r["pos"])
                and r["t"] - slack <= k["t"] <= stop["t"] for k in self.v.kind("skip")):
            return None  # skipped before that stop (which names no place: a real server's): another incident's
        return stop

    def after(self, r: dict) -> list[dict]:
        """What was relayed to the same replica after r, in order, until the relay log holding r
        was thrown away (RESET SLAVE, relay_log_recovery)."""
        end = next((_key(d) for d in self.v.of_node(r["node"]) if _key(d) > _key(r) and (
            d["kind"] == "relay_log_recovery" or (d["kind"] == "stmt" and d["op"] == "reset_slave" and d.get("errno") is None))),
            (2**62, 0))
        return [x for x in self.relays[r["node"]] if _key(r) < _key(x) < end]

    def origin(self, node: str, file: str, pos: int) -> tuple | None:
        """Where the event relayed to `node` at relay file:pos stands in its source's binlog."""
        by_place = self.v.memo("incident.relay_by_place", lambda: {(r["node"], r["file"], r["pos"]): r for r in self.v.kind("relay")})
        r = by_place.get((node, file, pos))
        return None if r is None else (r["source"], r["master_file"], r["master_end"])

    def source_binlog(self, r: dict) -> dict | None:
        return next((b for b in self.binlog.get(r["source"], []) if (b["file"], b["end"]) == (r["master_file"], r["master_end"])), None)


def index(v: TraceView) -> IncidentIndex:
    return v.memo("incident.index", lambda: IncidentIndex(v))


def _executed(v: TraceView, node: str, r: dict) -> list[dict]:
    """apply and skip observations of relayed event r."""
    return [o for o in v.of_node(node) if o["kind"] in ("apply", "skip")
            and (o.get("relay_file"), o.get("relay_pos")) == (r["file"], r["pos"])]


def _relayed_incidents(v: TraceView):
    ix = index(v)
    return [(r, ix) for rs in ix.relays.values() for r in rs if r["type"] == "INCIDENT_EVENT"]


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
    origin = ix.origin(r["node"], r["file"], r["pos"])
    return any(s["node"] == r["node"] and s.get("type") == "INCIDENT_EVENT" and _key(s) < _key(stop)
               and ix.origin(s["node"], s["relay_file"], s["relay_pos"]) == origin for s in v.kind("skip"))


def _reached(v: TraceView, r: dict) -> bool:
    """The SQL thread got to the incident: something about it or after it happened on the replica."""
    ix = index(v)
    later = {(x["file"], x["pos"]) for x in [r] + ix.after(r)}
    return ix.stop_after(r) is not None or any(
        (o.get("relay_file"), o.get("relay_pos")) in later for o in v.of_node(r["node"]) if o["kind"] in ("apply", "skip"))


def _judge_stop(v: TraceView, check: Check, known: bool) -> None:
    for r, ix in _relayed_incidents(v):
        if (r.get("incident") in KNOWN) != known or not _reached(v, r):
            continue
        stop = ix.stop_after(r)
        done = _executed(v, r["node"], r)
        first = min(done, key=_key, default=None)
        # A skip counter the DBA set beforehand consumes the incident: that is the DBA acting.
        dba_skip = first is not None and first["kind"] == "skip" and first.get("reason") == "sql_slave_skip_counter"
        stopped = stop is not None and (first is None or _key(stop) < _key(first))
        ok = (stopped or dba_skip) and not any(o["kind"] == "apply" for o in done)
        check.judge(ok, f"{r['node']} did not stop at incident {r.get('incident')} ({r.get('message')!r}) relayed at {r['t']}",
                    r, *done[:1])


@checks("WL3464.R1")
def incident_recorded_in_binlog(v: TraceView, check: Check) -> None:
    """A requested incident is in the binlog, with its code and message."""
    _judge_record(v, check, "binlog")


@checks("WL3464.R2")
def incident_recorded_through_injector(v: TraceView, check: Check) -> None:
    """An incident recorded through the injector interface lands in the binlog the same way."""
    _judge_record(v, check, "injector")


def _judge_record(v: TraceView, check: Check, via: str) -> None:
    ix = index(v)
    for s in v.kind("stmt"):
        if s["op"] == "record_incident" and s.get("via", "binlog") == via:
            found = [b for b in ix.incidents if b["node"] == s["node"] and b["t"] == s["t"] and _key(b) > _key(s)
                     and b.get("incident") == s["code"] and b.get("message", "") == s.get("message", "")]
            check.judge(bool(found), f"{s['node']} was asked for incident {s['code']} ({s.get('message')!r}) via {via}; "
                        "its binlog has none", s)


@checks("WL3464.ROTATE")
def rotation_after_incident(v: TraceView, check: Check) -> None:
    """After an incident the binlog rotates: a ROTATE_EVENT, then a fresh file starting with its FDE."""
    ix = index(v)
    for b in ix.incidents:
        log = ix.binlog[b["node"]]
        i = log.index(b)
        nxt = log[i + 1:i + 3]
        ok = (len(nxt) == 2 and nxt[0]["type"] == "ROTATE_EVENT" and nxt[0]["file"] == b["file"]
              and nxt[1]["type"] == "FORMAT_DESCRIPTION_EVENT" and nxt[1]["file"] != b["file"])
        check.judge(ok, f"{b['node']}: the incident at {b['file']}:{b['pos']} is followed by "
                    f"{[(x['type'], x['file']) for x in nxt]}, not a rotation to a fresh binlog", b, *nxt)


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
        sample = next((s for s in v.kind("status") if s["node"] == r["node"] and _key(stop) < _key(s) < end), None)
        if sample is not None and sample["Slave_SQL_Running"] == "No" and "Last_SQL_Errno" in sample:
            ok = ok and sample["Last_SQL_Errno"] == stop["errno"] and sample["Last_SQL_Error"] == stop["message"]
        check.judge(ok, f"{r['node']} stopped with {stop.get('message')!r} for incident {r.get('incident')} ({want_msg!r})",
                    stop, *([sample] if sample else []))


def _stopped_interval(v: TraceView, stop: dict) -> tuple[int, int]:
    """From an incident stop to the next START SLAVE, restart or restore, or the DBA's move of the
    replica elsewhere (RESET SLAVE, a CHANGE MASTER to a new place: its relay log and position go)
    (or the end), in trace order."""
    start = next((o for o in v.of_node(stop["node"]) if _key(o) > _key(stop) and (
        o["kind"] in ("restart", "restore") or delay_properties.repositions(o) or (o["kind"] == "stmt" and o.get("errno") is None and (
            o["op"] == "reset_slave" or (o["op"] == "start_slave" and o.get("thread") in (None, "sql")))))), None)
    return _key(stop), (_key(start) if start else (2**62, 0))


def _io_running_before(v: TraceView, stop: dict) -> bool:
    """Whether the replica's IO thread ran when its SQL thread stopped: the last sample, STOP or
    START SLAVE [IO_THREAD], crash, restart or restore (both start both threads) before the stop says."""
    running = True
    for o in v.obs:
        if _key(o) >= _key(stop):
            break
        if o["node"] != stop["node"]:
            continue
        if o["kind"] == "status":
            running = o["Slave_IO_Running"] == "Yes"
        elif o["kind"] in ("crash", "restart", "restore"):
            running = o["kind"] != "crash"
        elif o["kind"] == "stmt" and o["op"] in ("stop_slave", "start_slave") and o.get("errno") is None \
                and o.get("thread") in (None, "io"):
            running = o["op"] == "start_slave"
        elif o["kind"] == "io_cut" and o.get("then") == "stop":  # a cut that stopped the IO thread
            running = False
    return running


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
        hi = min([_key(o) for o in v.of_node(stop["node"]) if lo < _key(o) < hi and (
            o["kind"] == "crash" or (o["kind"] == "stmt" and o["op"] == "stop_slave")
            or (o["kind"] == "io_cut" and o.get("then") == "stop"))], default=hi)
        for s in v.kind("status"):
            if s["node"] == stop["node"] and lo < _key(s) < hi:
                check.judge(s["Slave_IO_Running"] == "Yes", f"{s['node']} at {s['t']}: IO thread {s['Slave_IO_Running']!r} "
                            "while stopped at an incident", stop, s)
                break


@checks("WL3464.HOLD", needs=("relay",))
def nothing_after_the_incident(v: TraceView, check: Check) -> None:
    """Stopped at an incident, the replica applies nothing and keeps its position just before it."""
    ix = index(v)
    for r, stop in _stopped_at(v):
        lo, hi = _stopped_interval(v, stop)
        applied = [a for a in v.kind("apply") if a["node"] == r["node"] and lo < _key(a) < hi]
        check.judge(not applied, f"{r['node']} applied {applied[0]['type'] if applied else ''} of "
                    f"{applied[0]['trx'] if applied else ''} while stopped at an incident", stop, *applied[:1])
        b = ix.source_binlog(r)
        if _skipped_before(v, r, stop):
            continue  # sent again after the DBA skipped it: WL3464.R4.ONCE's violation, at the place the dump put it
        # A GTID connect that skipped another domain's groups leaves a hole before the incident in the
        # relay log: the position executed is then the end of the event relayed just before it.
        before = [x for x in v.kind("relay") if x["node"] == r["node"] and _key(x) < _key(r) and x["master_end"]]
        hole = before[-1]["master_end"] if b is not None and before and before[-1]["master_file"] == b["file"] \
            and before[-1]["master_end"] < b["pos"] else None
        for s in v.kind("status"):
            if s["node"] == r["node"] and lo < _key(s) < hi and b is not None:
                check.judge(s["Relay_Log_Pos"] == r["pos"] and s["Exec_Master_Log_Pos"] in (b["pos"], hole),
                            f"{s['node']} stopped at an incident shows Relay_Log_Pos {s['Relay_Log_Pos']}, Exec_Master_Log_Pos "
                            f"{s['Exec_Master_Log_Pos']}; the incident is at {r['pos']}, master {b['pos']}", s)


def _skips_after_start(v: TraceView, start: dict) -> tuple[list[dict], dict | None]:
    """The skip observations right after a START SLAVE, and the first event applied after them.
    A real server's skips are stamped when its note is read and its applies when a poll finds the
    row: a skip up to the resolution after that apply came before it."""
    skips, first_apply = [], None
    for o in v.obs:
        if o["node"] != start["node"] or _key(o) <= _key(start):
            continue
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


@checks("WL3464.R4", needs=("relay",))
def skip_resumes_after_incident(v: TraceView, check: Check) -> None:
    """SKIP_COUNTER = 1 and START SLAVE skip exactly the incident; the next event applied is the one after it."""
    ix = index(v)
    for r, stop in _stopped_at(v):
        _, hi = _stopped_interval(v, stop)
        setting = [o for o in v.kind("stmt") if o["node"] == r["node"] and o["op"] == "set_global"
                   and o.get("variable") == "sql_slave_skip_counter" and _key(stop) < _key(o) < hi]
        if not setting or setting[-1]["value"] != 1 or hi[0] >= 2**62:
            continue
        start = next((o for o in v.kind("stmt") if o["node"] == r["node"] and _key(o) == hi and o["op"] == "start_slave"), None)
        if start is None:
            continue  # a restart, or the replica moved elsewhere: not the DBA's START SLAVE at the incident
        skips, first_apply = _skips_after_start(v, start)
        following = next((x for x in ix.after(r) if x["type"] not in EXEMPT), None)
        # The same incident, in this relay log or relayed again into a new one (MariaDB purges the
        # relay logs when START SLAVE starts both threads with GTID): the place in the master's binlog.
        ok = [ix.origin(s["node"], s["relay_file"], s["relay_pos"]) for s in skips] == [ix.origin(r["node"], r["file"], r["pos"])]
        if following is not None and first_apply is not None:
            ok = ok and ix.origin(first_apply["node"], first_apply["relay_file"], first_apply["relay_pos"]) == \
                ix.origin(following["node"], following["file"], following["pos"])
        check.judge(ok, f"{r['node']}: skip 1 after the incident skipped {[(s['type'], s.get('trx')) for s in skips]}, "
                    f"then applied {first_apply and (first_apply['type'], first_apply['trx'])}", start, *skips[:2])


@checks("WL3464.R4.ONCE")
def skipped_incident_stays_skipped(v: TraceView, check: Check) -> None:
    """Once a replica has skipped as many incident stops as its masters wrote incidents, another
    incident stop is at one it already passed (a reconnect sent it again)."""
    ix = index(v)
    for node in sorted({s["node"] for s in ix.stops}):
        stops = [s for s in ix.stops if s["node"] == node]
        skipped = 0
        for i, stop in enumerate(stops):
            written = sum(1 for b in ix.incidents if b["node"] != node and _key(b) < _key(stop))
            check.judge(skipped < written, f"{node} stopped at an incident at {stop['t']} after skipping {skipped}; "
                        f"its masters wrote {written}: one it had skipped came back", stop)
            # the DBA skipped past it (SQL_SLAVE_SKIP_COUNTER, then START SLAVE) before the next stop
            until = _key(stops[i + 1]) if i + 1 < len(stops) else (2**62, 0)
            if any(_key(stop) < k < until for k in v.skip_starts(node)):
                skipped += 1


@checks("WL3464.REACH")
def every_incident_reaches_its_replicas(v: TraceView, check: Check) -> None:
    """A replica of the incident's server that applies a group binlogged before it and then one
    binlogged after it stops at an incident in between."""
    ix = index(v)
    visible: dict[str, list[dict]] = {}
    for o in v.kind("visible"):
        if o.get("trx"):
            visible.setdefault(o["node"], []).append(o)
    for b in ix.incidents:
        log = ix.binlog[b["node"]]
        i = log.index(b)
        before = {o["trx"] for o in log[:i] if o.get("trx") and o["last"]}
        after = {o["trx"] for o in log[i + 1:] if o.get("trx") and o["last"]}
        for node, seen in visible.items():
            c = v.channels.get(node)
            if c is None or c["source"] != b["node"]:
                continue
            first_after = next((o for o in seen if o["trx"] in after), None)
            last_before = next((o for o in reversed(seen) if o["trx"] in before and first_after is not None
                                and _key(o) < _key(first_after)), None)
            if last_before is None or _moved(v, node, _key(last_before), _key(first_after)):
                continue
            stopped = [s for s in ix.stops if s["node"] == node and _key(last_before) < _key(s) < _key(first_after)]
            check.judge(bool(stopped), f"{node} applied {last_before['trx']} and then {first_after['trx']}, binlogged on "
                        f"either side of the incident at {b['file']}:{b['pos']} on {b['node']}, without stopping at it",
                        b, last_before, first_after)


def _moved(v: TraceView, node: str, lo: tuple[int, int], hi: tuple[int, int]) -> bool:
    """Whether the replica changed master in (lo, hi): a CHANGE MASTER TO another host, a restore, a promotion."""
    moves = v.memo("incident.moves", lambda: [(o["node"], _key(o)) for o in v.obs if o["kind"] in ("restore", "promoted") or (
        o["kind"] == "stmt" and o["op"] == "change_master" and o.get("master_host") and o.get("errno") is None)])
    return any(n == node and lo < k < hi for n, k in moves)


# What throws away the SQL thread's place inside a group: it starts again at the group's first event.
_DISCARDS = ("crash", "shutdown", "restart", "sql_stop", "relay_log_recovery")


def _skip_abandoned(v: TraceView, s: dict) -> tuple[int, int] | None:
    """When the skip of s's group was thrown away before it reached the group's last event (a cut
    IO thread may leave only the group's start to skip; then a crash or a stop): the next copy of
    the group is another one, which nothing skipped. None if it reached the end, or if the trace
    does not say which event ends the group (no relay observation)."""
    by_place = v.memo("incident.relay_by_place", lambda: {(r["node"], r["file"], r["pos"]): r for r in v.kind("relay")})
    for o in v.obs:
        if o["node"] != s["node"] or _key(o) < _key(s):
            continue
        if o["kind"] in _DISCARDS:
            return _key(o)
        if o["kind"] == "skip" and o.get("gtid") == s["gtid"]:
            r = by_place.get((o["node"], o.get("relay_file"), o.get("relay_pos")))
            if r is None or r.get("last"):
                return None
    return None


@checks("WL3464.SKIP_GROUP")
def skip_never_stops_inside_a_group(v: TraceView, check: Check) -> None:
    """Once the skip counter enters a group, the whole group is skipped, none of it applied (of the
    copy it entered: a crash or stop before the group's end throws that skip away)."""
    for s in v.kind("skip"):
        if s.get("reason") != "sql_slave_skip_counter" or s.get("trx") is None:
            continue
        end = _skip_abandoned(v, s) or (2**62, 0)
        rest = [o for o in v.of_node(s["node"]) if o["kind"] in ("apply", "skip") and o.get("gtid") == s.get("gtid")
                and _key(s) < _key(o) < end]
        applied = [o for o in rest if o["kind"] == "apply"]
        check.judge(not applied, f"{s['node']} skipped {s['type']} of {s['trx']} but applied its {applied and applied[0]['type']}",
                    s, *applied[:1])


@checks("WL3464.GAP")
def every_gap_is_marked(v: TraceView, check: Check) -> None:
    """A change the master made but did not binlog is marked by an incident before anything later is binlogged."""
    ix = index(v)
    for lost in ix.lost:
        log = ix.binlog.get(lost["node"], [])
        later = [b for b in log if _key(b) > _key(lost) and (b["type"] == "INCIDENT_EVENT" or b.get("gtid"))]
        ok = bool(later) and later[0]["type"] == "INCIDENT_EVENT"
        check.judge(ok, f"{lost['trx']} changed {lost['node']} but never reached its binlog, and "
                    f"{'nothing' if not later else later[0]['type'] + ' of ' + str(later[0].get('trx'))} follows, no incident",
                    lost, *later[:1])


@checks("WL3464.NO_FALSE")
def no_incident_without_loss(v: TraceView, check: Check) -> None:
    """An incident that no one asked for follows a change the binlog lost."""
    ix = index(v)
    requested = {(s["node"], s["t"]) for s in v.kind("stmt") if s["op"] == "record_incident"}
    for b in ix.incidents:
        if (b["node"], b["t"]) in requested:
            continue
        earlier = [i for i in ix.incidents if i["node"] == b["node"] and _key(i) < _key(b)]
        since = _key(earlier[-1]) if earlier else (-1, -1)
        lost = [o for o in ix.lost if o["node"] == b["node"] and since < _key(o) < _key(b)]
        check.judge(bool(lost), f"{b['node']} wrote an incident at {b['t']} ({b.get('message')!r}) with no lost change before it", b)


@checks("WL3464.DELAY", needs=("relay",))
def incident_waits_its_due_time(v: TraceView, check: Check) -> None:
    """A delayed replica stops at an incident no earlier than the incident's timestamp plus the delay."""
    ix = index(v)
    dx = delay_properties.index(v)
    epoch = v.header.get("epoch_us", 0)
    for r, _ in _relayed_incidents(v):
        stop = ix.stop_after(r)
        delay = dx.delay_at(r["node"], stop["t"]) if stop else None
        if not delay:
            continue
        origin = next((b for b in ix.incidents if b["server_id"] == r["server_id"] and b["when"] == r["when"]
                       and b.get("message") == r.get("message")), None)
        if origin is None:
            continue
        due = r["when"] * US - v.offset_at(origin["node"], origin["t"], origin["_line"]) - epoch + delay * US
        check.judge(stop["t"] + v.resolution_us >= due, f"{r['node']} stopped at the incident at {stop['t']}, due at {due}", r, stop)


@checks("WL3464.GTID_SKIP")
def skipped_group_stays_skipped(v: TraceView, check: Check) -> None:
    """A GTID group skipped with the counter is never applied later, not after a reconnect or restart."""
    for s in v.kind("skip"):
        if s.get("reason") != "sql_slave_skip_counter" or not s.get("gtid") or not s.get("type", "").endswith("GTID_LOG_EVENT"):
            continue
        if _skip_abandoned(v, s) is not None:
            continue  # the skip never reached the group's end: the group was not skipped
        later = [o for o in v.kind("visible") if o["node"] == s["node"] and o.get("gtid") == s["gtid"] and _key(o) > _key(s)]
        check.judge(not later, f"{s['node']} skipped {s['trx']} ({s['gtid']}) at {s['t']} but applied it at "
                    f"{later[0]['t'] if later else ''}", s, *later[:1])

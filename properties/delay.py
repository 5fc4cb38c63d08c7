"""Time-delayed replication (WL#344, WL#7318): one check per requirement, judging a Trace alone.

The checks recompute, from observations only, when each event was due on each replica: the
event's timestamp as the immediate master's binlog shows it, that server's clock offset at the
time (topology plus clock steps), and the delay in force on the replica (topology, CHANGE
MASTER, RESET SLAVE). A real server's trace has a sampling resolution; every timing comparison
allows it (header resolution_us), and instances within it of a boundary are not judged.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Iterator

from replcheck.spec.formats import ER_SLAVE_WAS_RUNNING, MAX_MASTER_DELAY, US

from .core import Check, Seq, TraceView, checks, seconds
from .recovery import copies, sources_at_end, stopped_at_end

STATE_WAITING = "Waiting until MASTER_DELAY seconds after master executed event"
EXEMPT = frozenset({"START_EVENT_V3", "ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT"})
TRX_START = frozenset({"GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT"})
BINLOG_STATEMENT_EVENTS = frozenset({
    "FORMAT_DESCRIPTION_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT",
    "DELETE_ROWS_EVENT", "PRE_GA_WRITE_ROWS_EVENT", "PRE_GA_UPDATE_ROWS_EVENT",
    "PRE_GA_DELETE_ROWS_EVENT",
})


# -- derived views, built once per trace ------------------------------------------------------
class DelayIndex:
    def __init__(self, v: TraceView):
        self.v = v
        self.binlog: dict[tuple, dict] = {}
        self.origin: dict[tuple, dict] = {}
        for b in v.kind("binlog"):
            if b.get("gtid") is None:
                continue
            self.binlog.setdefault((b["node"], b["gtid"], b["idx"]), b)
            self.origin.setdefault((b["gtid"], b["idx"]), b)
        self.relay = {(r["node"], r["file"], r["pos"]): r for r in v.kind("relay")}
        self.applies: dict[str, list[dict]] = {}
        self.applied_at: dict[tuple, list[dict]] = {}  # (node, relay file, relay pos) -> its applies, in order
        for a in v.kind("apply"):
            self.applies.setdefault(a["node"], []).append(a)
            self.applied_at.setdefault((a["node"], a.get("relay_file"), a.get("relay_pos")), []).append(a)
        self.skipped_at: dict[tuple, list[dict]] = {}  # (node, relay file, relay pos) -> its skips, in order
        for o in v.kind("skip"):
            for f, pos in skipped_places(o):
                self.skipped_at.setdefault((o["node"], f, pos), []).append(o)
        self.delays = self._delay_timelines()
        self.delay_keys = {node: [(when, line) for when, line, _ in changes] for node, changes in self.delays.items()}
        # per node, (the last query, the first relay it could still return): see pending
        self.cursors: dict[str, tuple[tuple[int, int], int]] = {}
        # per sample line, what the SQL thread was doing there: several properties ask (_waiting_for)
        self.waiting: dict[int, tuple[str, int | None] | None] = {}

    def _delay_timelines(self) -> dict[str, list[tuple[int, int, int | None]]]:
        lines: dict[str, list[tuple[int, int, int | None]]] = {}
        for c in self.v.channels.values():
            node = self.v.nodes.get(c["replica"], {})
            initial = c.get("delay", 0)
            if "relay_log_info" in node:
                initial = read_relay_log_info(node["relay_log_info"]).get("delay")
            lines[c["replica"]] = [(-1, 0, initial)]
        for s in self.v.kind("stmt"):
            # A warning does not undo the statement (MariaDB's 4190: a relay log place turns
            # MASTER_USE_GTID off).
            if s.get("errno") is not None or s["node"] not in lines:
                continue
            if s["op"] == "change_master" and s.get("delay") is not None:
                lines[s["node"]].append((s["t"], s["_line"], s["delay"]))
            elif s["op"] == "reset_slave":
                lines[s["node"]].append((s["t"], s["_line"], 0))
        return lines

    def applies_of(self, node: str, file: str, pos: int) -> list[dict]:
        """The applies on node of the relay log's event at (file, pos), in trace order."""
        return self.applied_at.get((node, file, pos), [])

    def delay_at(self, node: str, t: int, line: int | None = None) -> int | None:
        """The configured delay at time t, just before trace line `line` if given."""
        i = bisect_left(self.delay_keys.get(node, []), (t, 2**62 if line is None else line))
        return self.delays[node][i - 1][2] if i else None

    def rule(self, a: dict) -> str:
        """Which rule governs an applied event: WL#7318 needs a capable replica and a commit timestamp."""
        node_rule = self.v.nodes.get(a["node"], {}).get("delay_rule", "wl344")
        return "wl7318" if node_rule == "wl7318" and a.get("ict") is not None else "wl344"

    def _gtidless_origin(self, a: dict) -> dict | None:
        """The source's binlog entry of an event with no GTID (an incident), by its master position."""
        r = a if "master_end" in a else self.relay.get((a["node"], a.get("relay_file"), a.get("relay_pos")))
        if r is None:
            return None
        by_pos = self.v.memo("delay.binlog_by_pos", lambda: {(b["node"], b["file"], b["end"]): b for b in self.v.kind("binlog")})
        return by_pos.get((r["source"], r["master_file"], r["master_end"]))

    def estimate(self, a: dict) -> int | None:
        """The clock difference the replica measured with the apply's source at its IO thread's last
        connect before it (clock_diff_with_master, whole seconds), where the trace shows the clock
        query (a real server's, a server flavour model's); None where the replica compensates exactly."""
        queries = self.v.memo(("delay.clock_queries", a["node"]), lambda: self.v.of_node(a["node"], "clock_query"))
        read = a.get("read") if a.get("read") is not None else begin_of(a)  # the wait counted by the estimate then
        q = queries.last_before(a["_line"])
        while q is not None and (q.get("source") != a.get("source") or q["t"] > read):
            q = queries.last_before(q["_line"])
        return None if q is None else q.get("clock_diff_with_master")

    def _counted(self, a: dict, when: int) -> int:
        """A timestamp plus the measured clock difference, on the replica's clock as it stood when
        the SQL thread read the event (its timed wait, set then, is not moved by a later step)."""
        read = a.get("read") if a.get("read") is not None else begin_of(a)
        return (when + self.estimate(a)) * US - self.v.offset_at(a["node"], read)

    def due(self, a: dict, exact: bool = False) -> int | None:
        """True time before which the applied event must not begin; None if it does not wait. By the
        clock difference the replica measured (estimate), as a server counts (sql_delay_event: when +
        clock_diff_with_master + sql_delay on its own clock), unless `exact`: the seed's absolute
        time, whose difference from the server's count is WL344.CLOCK.COMPENSATE's alone."""
        # A dump thread's fake event (timestamp 0, MariaDB fake_event_header) is in no binlog but
        # still waits: sql_delay_event exempts events by type only, so a delay longer than the
        # epoch makes even timestamp 0 due in the future.
        fake = a.get("gtid") is None and a["type"] != "INCIDENT_EVENT" and a.get("when") == 0
        if a["type"] in EXEMPT or (a.get("gtid") is None and a["type"] != "INCIDENT_EVENT" and not fake):
            return None
        # The delay in force just before this observation: a CHANGE MASTER or RESET SLAVE logged
        # later in the same microsecond came after it.
        delay = self.delay_at(a["node"], begin_of(a), a.get("_line"))
        if delay is None:
            return None
        if self.rule(a) == "wl7318":
            if a["type"] not in TRX_START:
                return None
            b = self.binlog.get((a["source"], a["gtid"], a["idx"]))
            if b is None:
                return None
            base = a["ict"] // US * US - self.v.offset_at(a["source"], b["t"], b["_line"])
        elif fake:
            # the relay observation of the event (a probe made from one carries its file and pos)
            at = (a["file"], a["pos"]) if "master_end" in a else (a.get("relay_file"), a.get("relay_pos"))
            r = self.relay.get((a["node"], *at))
            if r is None:
                return None
            # compensated by the source's clock, as clock_diff_with_master does
            base = self._counted(a, 0) if not exact and self.estimate(a) is not None \
                else -self.v.offset_at(r["source"], r["t"], r["_line"])
        else:
            o = self.origin_of(a)
            if o is None:
                return None
            base = self._counted(a, a["when"]) if not exact and self.estimate(a) is not None \
                else a["when"] * US - self.v.offset_at(o["node"], o["t"], o["_line"])
        due = base - self.v.header.get("epoch_us", 0) + delay * US
        if not delay and due > begin_of(a):
            # no delay set: an event dated ahead sets no wait, sql_delay_event waits only `if (sql_delay)`
            # (MariaDB sql/slave.cc, MySQL sql/rpl_replica.cc; MariaDB's rpl_delayed_slave2)
            return None
        return due

    def origin_of(self, a: dict) -> dict | None:
        """The binlog event on the originating master that an apply replays, if the Trace has it."""
        return self.origin.get((a["gtid"], a["idx"])) if a.get("gtid") else self._gtidless_origin(a)

    def stops(self, node: str) -> list[int]:
        """Times the SQL thread of `node` stopped (STOP SLAVE, UNTIL, crash)."""
        return [o["t"] for o in self.v.of_node(node, "sql_stop")] + [o["t"] for o in self.v.of_node(node, "crash")]

    def applies_from(self, node: str, t: int) -> Iterator[dict]:
        """The node's applies stamped at t or later, in order (a trace is in time order)."""
        return self.v.memo(("delay.applies_by_t", node), lambda: Seq(self.applies.get(node, []), lambda a: a["t"])).after(t - 1)

    def relayed_within(self, node: str, lo: int, hi: int) -> bool:
        """Whether an event relayed to `node` is stamped in (lo, hi]."""
        stamps = self.v.memo(f"delay.relay_stamps.{node}", lambda: [r["t"] for r in self.v.of_node(node, "relay")])
        i = bisect_left(stamps, lo + 1)
        return i < len(stamps) and stamps[i] <= hi

    def executed_before(self, node: str, trx: str, line: int) -> bool:
        """The node had made the transaction visible before trace line `line`."""
        first = self.v.memo("delay.visible_first", lambda: {
            (o["node"], o["trx"]): o["_line"] for o in reversed(self.v.kind("visible"))})
        return first.get((node, trx), line) < line

    def pending(self, node: str, t: int, line: int) -> tuple[dict | None, int | None]:
        """The first event relayed to `node` by t and not applied before t (the SQL thread's next),
        with the time it was applied, if it was; as seen at trace line `line`."""
        done = self.v.memo(f"delay.applied.{node}", lambda: _applies_by_place(
            self.applies.get(node, []) + [{"_line": o["_line"], "t": o["t"], "relay_file": f, "relay_pos": pos}
                                          for o in self.v.of_node(node, "skip") for f, pos in skipped_places(o)]))
        relays = self.v.of_node(node, "relay")
        discards = self.v.memo(f"delay.discards.{node}", lambda: Seq((
            o for o in self.v.of_node(node, "relay_log_recovery", "stmt") if (o["kind"] == "relay_log_recovery" or repositions(o) or (
                o["kind"] == "stmt" and o["op"] == "reset_slave" and o.get("errno") is None))), lambda o: o["_line"]))
        # A relay passed over for one query is passed over for every later one up to the thread's
        # next stop (a later t and line only add discards and applies before them), so queries in
        # trace order resume where the last one stopped: one sweep of the relay log per stretch
        # between stops, not one per sample.
        stops = self.v.of_node(node, "sql_stop").keys
        last, start = self.cursors.get(node, ((-1, -1), 0))
        if (t, line) < last:
            start = 0
        elif (stop := _first_between(stops, last[1], line)) is not None:
            # a stop since may have sent the thread back to its group's start, and a parallel
            # coordinator's further back, to the first queued group its workers gave up
            start = self._rewind(node, relays, start, stop)
        for i in range(start, len(relays)):
            r = relays[i]
            if r["t"] > t:
                break
            # A model's Trace: the first apply of this very event (a relay-log place is reused after a
            # discard, and an apply before a rollback, its group completed later, still passed it). A
            # polled server's relay log is read after what its samples showed applied, and a STOP
            # SLAVE mid-group sends its SQL thread back to the group's start: its last apply.
            lines = done.get((r["file"], r["pos"]), ())
            if self.v.resolution_us:
                when = lines[-1][1] if lines else None
            else:
                when = self._passed(node, r, lines, stops, done, line)
            # Only discards logged before the sample: one later in the same microsecond had not happened yet.
            if any(when is None or when > d["t"] for d in discards.between(r["_line"], line)):
                continue  # RESET SLAVE or relay_log_recovery threw it away unapplied
            if when is None or when >= t - self.v.resolution_us:
                self.cursors[node] = ((t, line), i)
                return r, when
        else:
            i = len(relays)
        self.cursors[node] = ((t, line), i)
        return None, None

    def _passed(self, node: str, r: dict, lines, stops: list[int], done, line: int) -> int | None:
        """When a model's SQL thread passed relay event r for good, as seen at trace line `line`:
        its first apply or skip after it was relayed, unless the thread stopped (STOP SLAVE, a crash,
        an error) before the event's group was complete. A stop mid-group sends the thread back to
        the group's start, where the group position and relay-log.info stand (MariaDB
        `Relay_log_info::inc_group_relay_log_pos`, sql/rpl_rli.cc, moves them only at a group's end;
        `handle_slave_sql`, sql/slave.cc, starts the thread at them): the event is pending again
        until passed once more."""
        k = bisect_left(lines, (r["_line"],))
        while k < len(lines):
            at, when = lines[k]
            stop = _first_between(stops, at, line)
            if stop is None or _group(r) is None or self._group_done(node, r, done, at, stop):
                return when
            k = bisect_left(lines, (stop,))
        return None

    def _group_done(self, node: str, r: dict, done, after: int, before: int) -> bool:
        """Whether r's group was applied or skipped to its last event between two trace lines, and
        not rolled back after that before the later line (a parallel coordinator applies a group's
        events as it queues them; a STOP gives up the queued groups no worker started)."""
        ends = self.v.memo(f"delay.group_end_places.{node}", lambda: _group_end_places(self.v, node))
        backs = self._rollbacks(node).get(_group(r), ())
        return any(after <= at < before and not any(at < b < before for b in backs)
                   for place in ends.get(_group(r), ()) for at, _ in done.get(place, ()))

    def _rollbacks(self, node: str) -> dict[str, list[int]]:
        """Per group, the trace lines at which `node` rolled it back."""
        return self.v.memo(f"delay.rollbacks.{node}", lambda: _lines_by_group(
            o for o in self.v.of_node(node, "rollback")))

    def _rewind(self, node: str, relays: list[dict], i: int, stop: int) -> int:
        """Where the sweep, having passed relays[:i], looks again after the stop at trace line `stop`:
        the start of the last group it passed, and before it of every group rolled back at that stop
        (MariaDB's workers give up the groups not yet started, rpl_parallel_thread's do_gco_wait with
        force_abort; they come again from the relay log at the next start)."""
        i = _group_start(relays, i)
        backs = self._rollbacks(node)
        while i and any(relays[i - 1]["_line"] < b < stop for b in backs.get(_group(relays[i - 1]), ())):
            i = _group_start(relays, i)
        return i


def _group_start(relays: list[dict], i: int) -> int:
    """Where to look again after a stop, the sweep having passed relays[:i]: the first event of the
    last group it passed, the only one a stop can have left incomplete (with the events in no group
    between, a reconnect's Rotate and FDE)."""
    group = next((_group(relays[j]) for j in range(i - 1, -1, -1) if _group(relays[j])), None)  # no copy of relays[:i]
    while i and _group(relays[i - 1]) in (group, None):
        i -= 1
    return i


def _group(o: dict) -> str | None:
    """The group an event belongs to: its GTID, or its transaction where the source logs none."""
    return o.get("gtid") or o.get("trx")


def _lines_by_group(obs) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for o in obs:
        out.setdefault(_group(o), []).append(o["_line"])
    return out


def _group_end_places(v: TraceView, node: str) -> dict[str, list[tuple[str, int]]]:
    """Per group, the relay-log places of its last event on `node` (a group fetched again has more than one)."""
    ends: dict[str, list[tuple[str, int]]] = {}
    for o in v.kind("relay"):
        if o["node"] == node and _group(o) and o.get("last"):
            ends.setdefault(_group(o), []).append((o["file"], o["pos"]))
    return ends


def skipped_places(o: dict) -> list[tuple[str, int]]:
    """The relay-log places a skip passed over: the counter's one event, or an executed GTID's whole group."""
    if "relay_pos" in o:
        return [(o["relay_file"], o["relay_pos"])]
    return [(f, pos) for f, pos in o.get("events", ())]


def _applies_by_place(applies: list[dict]) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """Per relay-log place, its applies and skips as (line, t), in trace order."""
    by: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for a in sorted(applies, key=lambda o: o["_line"]):
        by.setdefault((a["relay_file"], a["relay_pos"]), []).append((a["_line"], a["t"]))
    return by


def _first_between(lines: list[int], lo: int, hi: int) -> int | None:
    """The first of sorted trace lines strictly between lo and hi."""
    i = bisect_right(lines, lo)
    return lines[i] if i < len(lines) and lines[i] < hi else None


def index(v: TraceView) -> DelayIndex:
    return v.memo("delay.index", lambda: DelayIndex(v))


def begin_of(a: dict) -> int:
    """When an event began executing; a real server's trace may only know when it became visible."""
    return a["begin"] if a.get("begin") is not None else a["t"]


def read_relay_log_info(content: str) -> dict:
    """What WL#344 says a server reads from relay-log.info: format, fields, delay, or the error."""
    lines = content.split("\n")[:-1]  # only \n-terminated lines count
    if not lines:
        return {"error": "empty"}
    if _number(lines[0]):
        n = int(lines[0])
        if n < 5:
            return {"error": f"number_of_fields {n} < 5", "format": "new"}
        if len(lines) < n + 1 or not all(_number(x) for x in (lines[2], lines[4], lines[5])):
            return {"error": "truncated or non-numeric field", "format": "new"}
        if int(lines[5]) > MAX_MASTER_DELAY:
            return {"error": f"delay {lines[5]} out of range", "format": "new"}
        return {"format": "new", "fields": n, "delay": int(lines[5]), "relay_log_name": lines[1],
                "garbage": len(lines) > n + 1 or not content.endswith("\n")}
    if len(lines) < 4 or not (_number(lines[1]) and _number(lines[3])):
        return {"error": "truncated or non-numeric field", "format": "old"}
    return {"format": "old", "delay": 0, "relay_log_name": lines[0],
            "garbage": len(lines) > 4 or not content.endswith("\n")}


def _number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _judge_due(v: TraceView, check: Check, a: dict, due: int, tight: bool, what: str) -> None:
    """Safety (not before due) and, where the read time is known, tightness (not later than needed)."""
    tol = v.resolution_us
    begin = begin_of(a)
    ok = begin + tol >= due
    msg = f"{a['node']} began {a['type']} of {a['trx']} at {seconds(begin)} but it was due at {seconds(due)} ({what})"
    if not check.judge(ok, msg, a) or not tight or a.get("read") is None:
        return
    latest = max(a["read"], due)
    check.judge(begin <= latest + tol,
                f"{a['node']} read {a['type']} of {a['trx']} at {seconds(a['read'])}, due {seconds(due)}, but began only at {seconds(begin)} ({what})", a)


def _applies(v: TraceView):
    return (a for a in v.kind("apply") if a.get("gtid") is not None)


# -- the wait rule ----------------------------------------------------------------------------
@checks("WL344.WAIT.RULE")
def wait_not_before_due(v: TraceView, check: Check) -> None:
    """An event is executed no earlier than its timestamp (compensated) plus the delay."""
    ix = index(v)
    for a in _applies(v):
        if ix.rule(a) == "wl344" and (due := ix.due(a)) is not None:
            _judge_due(v, check, a, due, tight=False, what="WL#344 rule")


@checks("WL344.WAIT.NO_EXTRA")
def wait_no_longer_than_needed(v: TraceView, check: Check) -> None:
    """An event already due when read runs at once; a waiting thread wakes when the delay is reached."""
    ix = index(v)
    for a in _applies(v):
        if ix.rule(a) == "wl344" and a.get("read") is not None and (due := ix.due(a)) is not None:
            check.judge(begin_of(a) <= max(a["read"], due) + v.resolution_us,
                        f"{a['node']} read {a['type']} of {a['trx']} at {seconds(a['read'])}, due {seconds(due)}, began {seconds(begin_of(a))}", a)


@checks("WL344.WAIT.EXEMPT")
def exempt_events_never_wait(v: TraceView, check: Check) -> None:
    """START_EVENT_V3, ROTATE_EVENT and FORMAT_DESCRIPTION_EVENT are executed without waiting."""
    for a in v.kind("apply"):
        if a["type"] in EXEMPT and a.get("read") is not None:
            check.judge(begin_of(a) <= a["read"] + v.resolution_us,
                        f"{a['node']} waited {seconds(begin_of(a) - a['read'])} before {a['type']} (when={a['when']})", a)


# -- STOP SLAVE and kill ----------------------------------------------------------------------
def _sql_stops(v: TraceView):
    """(node, time, obs) of every stop of an SQL thread by statement or crash."""
    for o in v.kind("sql_stop"):
        if o.get("reason") in ("stop", "crash"):
            yield o["node"], o["t"], o
    # A crash of a replica whose SQL thread was not running stops nothing; sql_stop covers the rest.


def _samples(v: TraceView, node: str) -> Seq:
    return v.of_node(node, "status")


def _next_start(v: TraceView, stop: dict) -> dict | None:
    """The START SLAVE, restart or restore (a server rebuilt from a backup starts as a slave) that
    ends a stop of the SQL thread, in trace order."""
    starts = v.memo(("delay.starts", stop["node"]), lambda: Seq((
        o for o in v.of_node(stop["node"], "stmt", "restart", "restore")
        if o["kind"] != "stmt" or (o["op"] == "start_slave" and o.get("errno") is None)), lambda o: o["_line"]))
    return next(starts.after(stop["_line"]), None)


@checks("WL344.STOP.IMMEDIATE")
def stop_interrupts_at_once(v: TraceView, check: Check) -> None:
    """STOP SLAVE (or kill) returns at once and leaves the SQL thread stopped, state '', no remaining delay."""
    tol = v.resolution_us
    for node, t, o in _sql_stops(v):
        start = _next_start(v, o)
        after = next(_samples(v, node).after(o["_line"]), None)
        if after is None or after["t"] > t + tol or (start is not None and after["_line"] > start["_line"]):
            continue
        if o.get("reason") == "stop":
            stops = v.memo(("delay.stop_slaves", node), lambda: Seq(
                (s for s in v.of_node(node, "stmt") if s["op"] == "stop_slave"), lambda s: (s["t"], s["_line"])))
            stmt = next(stops.after((t, -1)), None)
            if stmt is not None and stmt.get("duration_us") is not None:
                check.judge(stmt["duration_us"] <= tol, f"STOP SLAVE on {node} took {seconds(stmt['duration_us'])}", stmt)
        check.judge(after["Slave_SQL_Running"] == "No" and after["Slave_SQL_Running_State"] == ""
                    and after["SQL_Remaining_Delay"] is None,
                    f"after the stop at {seconds(t)} {node} shows SQL thread {after['Slave_SQL_Running']!r}, "
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
            due = ix.due(a)
            if a["t"] > t + tol:
                check.judge(False, f"{node} executed {a['type']} of {a['trx']} at {seconds(a['t'])} while stopped since {seconds(t)}", o, a)
            elif due is not None and due > begin_of(a) + tol and a["t"] >= t:
                check.judge(False, f"{node} executed the delayed {a['type']} of {a['trx']} (due {seconds(due)}) at the stop {seconds(t)}", o, a)
        before = [s for s in [_samples(v, node).last_before(o["_line"])] if s is not None and s["Slave_SQL_Running"] == "Yes"]
        if before and before[-1]["SQL_Remaining_Delay"] is not None and before[-1]["t"] + before[-1]["SQL_Remaining_Delay"] * US > t:
            check.reached(f"{o['reason']} during a delay wait")  # the last sample's wait was still running at the stop
        stopped = v.memo(("delay.stopped_samples", node), lambda: Seq(
            (s for s in _samples(v, node) if s["Slave_SQL_Running"] == "No"), lambda s: s["_line"]))
        after = next(stopped.after(o["_line"]), None)
        if before and after is not None and (start is None or after["_line"] < start["_line"]):
            b = before[-1]
            relocations = v.memo(("delay.relocations", node), lambda: Seq((
                x for x in v.of_node(node, "restart", "restore", "relay_log_recovery", "stmt")
                if x["kind"] != "stmt" or repositions(x) or x["op"] == "reset_slave"), lambda x: x["_line"]))
            if relocations.between(b["_line"], after["_line"]):
                continue  # a restart, restore, RESET SLAVE or CHANGE MASTER to a new place moves the position legitimately
            # Events applied or skipped (the skip counter) between the sample and the stop moved it before the stop,
            # as did a parallel replica's workers committing the groups queued to them (their position is the oldest).
            moved = v.memo(("delay.moved", node), lambda: Seq(sorted(ix.applies.get(node, []) + [
                x for x in v.of_node(node, "skip", "visible") if x["kind"] == "skip" or "worker" in x], key=lambda x: x["_line"]),
                lambda x: x["_line"]))
            check.judge((b["Relay_Log_Pos"], b["Exec_Master_Log_Pos"]) == (after["Relay_Log_Pos"], after["Exec_Master_Log_Pos"])
                        or bool(moved.between(b["_line"], o["_line"])),
                        f"the stop at {seconds(t)} moved {node} from Relay_Log_Pos {b['Relay_Log_Pos']} to {after['Relay_Log_Pos']}",
                        b, after)


def repositions(x: dict) -> bool:
    """A CHANGE MASTER to a new place (a binlog position, the slave's last group ID, or MariaDB's
    MASTER_USE_GTID: sql_repl.cc change_master purges the relay logs, and the next connect asks by
    GTID): the replica's position moves and its relay log is thrown away."""
    return x["kind"] == "stmt" and x["op"] == "change_master" and x.get("errno") is None and (
        "master_log_file" in x or bool(x.get("connect_using_group_id")) or x.get("master_use_gtid") is not None)


# -- a delay change with unapplied events -----------------------------------------------------
def _held_at(v: TraceView, s: dict) -> dict[str, dict]:
    """The transactions the replica had received whole and not applied, skipped or thrown away when
    statement s ran: each with the relay observation of its last event."""
    def build() -> dict[int, dict[str, dict]]:
        """One sweep of the node: what it held at each of its CHANGE MASTERs."""
        held: dict[str, dict] = {}
        at: dict[int, dict[str, dict]] = {}
        for o in v.of_node(s["node"], "relay", "apply", "skip", "relay_log_recovery", "restore", "stmt"):
            if o["kind"] == "stmt" and o["op"] == "change_master":
                at[o["_line"]] = dict(held)
            if o["kind"] == "relay" and o.get("last") and o.get("trx") is not None:
                held[o["trx"]] = o
            elif o["kind"] in ("apply", "skip") and o.get("trx") is not None and (o.get("last") or o["kind"] == "skip"):
                held.pop(o["trx"], None)
            elif o["kind"] in ("relay_log_recovery", "restore") or repositions(o) or (
                    o["kind"] == "stmt" and o["op"] == "reset_slave" and o.get("errno") is None):
                held.clear()
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


@checks("WL344.CM.NO_LOSS")
def delay_change_loses_nothing(v: TraceView, check: Check) -> None:
    """A CHANGE MASTER that changes only the delay neither loses nor repeats a transaction the
    replica held unapplied: whether the relay log was kept or purged and fetched again, the replica
    holds each exactly once when replication is quiet (one stopped, down or repointed at the end is
    not judged for what it lacks)."""
    counts, witnesses = copies(v)
    sources = sources_at_end(v)
    for s in v.kind("stmt"):
        if s["op"] != "change_master" or s.get("errno") is not None or repositions(s) or s.get("master_host") is not None:
            continue
        node = s["node"]
        if node not in counts or _replaced_after(v, s):
            continue
        have, w = counts[node], witnesses.get(node)
        judged_lack = sources.get(node) is not None and not stopped_at_end(v, node)
        for trx, r in sorted(_held_at(v, s).items()):
            n = have.get(trx, 0)
            if n == 0 and not judged_lack:
                continue
            check.judge(n == 1, f"{node} held {trx} unapplied (relayed at {seconds(r['t'])}) at the CHANGE MASTER TO MASTER_DELAY = "
                                f"{s.get('delay')} at {seconds(s['t'])}, and holds it {n} times once replication is quiet",
                        s, r, *([w] if w else []))


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
    for a in _applies(v):
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
        check.judge(ok, f"{a['node']} began {a['type']} of {a['trx']} at {seconds(begin_of(a))}, {a['source']} executed it at "
                        f"{seconds(begin_of(x))}: due {seconds(due)} with delay {delay}", x, a)


@checks("WL344.CLOCK.COMPENSATE")
def clocks_compensated(v: TraceView, check: Check) -> None:
    """With unsynchronised clocks, events still run exactly when due in absolute time; and while
    the replica waits, the deadline it counts to (SQL_Remaining_Delay from its clock's second)
    is the due time, within the whole second it counts in, whether the clocks differ or not."""
    ix = index(v)
    for a in _applies(v):
        due = ix.due(a, exact=True)
        if due is None:
            continue
        writer = a["source"] if ix.rule(a) == "wl7318" else ix.origin_of(a)["node"]  # due is known: so is the origin
        if v.offset_at(writer, a["t"]) != v.offset_at(a["node"], a["t"]):
            _judge_due(v, check, a, due, tight=True, what=f"clocks of {writer} and {a['node']} differ")
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
    for s in _running_samples(v):
        rem = s["SQL_Remaining_Delay"]
        if s["Slave_SQL_Running_State"] != STATE_WAITING or not isinstance(rem, int):
            continue
        w = _waiting_for(v, s, exact=True)
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
        why = "" if q is None else (f"; its IO thread's clock query got the answer {q['master_unix_timestamp']} at "
                                    f"{seconds(q['t'])}: clock_diff_with_master {q['clock_diff_with_master']}")
        check.judge(abs(error) < US, f"{s['node']} at {seconds(s['t'])} counts to {seconds(deadline)} (SQL_Remaining_Delay {rem}) but the "
                    f"event is due at {seconds(w[1])}: {error / US:+.0f} s, the error of the clock difference it measured in whole "
                    f"seconds at its IO thread's connect (clock_diff_with_master){why}", s, *([q] if q else []))


# -- statements -------------------------------------------------------------------------------
def _sample_after(v: TraceView, stmt: dict) -> dict | None:
    """The node's first sample after the statement, if it shows the statement's effect alone: within
    the resolution, and before the node's next statement began (a slow run can sample only after
    it, when a later CHANGE MASTER may have set another delay)."""
    s = next((s for s in _samples(v, stmt["node"]).after(stmt["_line"]) if s["t"] >= stmt["t"]), None)
    if s is None or s["t"] > stmt["t"] + v.resolution_us:
        return None
    nxt = next(v.of_node(stmt["node"], "stmt").after(stmt["_line"]), None)
    if nxt is not None and (nxt["_line"] < s["_line"] or (v.resolution_us and s["t"] >= nxt["t"] - nxt.get("duration_us", 0))):
        return None
    return s


def _stmts(v: TraceView, op: str):
    return (s for s in v.kind("stmt") if s["op"] == op)


@checks("WL344.CM.SET")
def change_master_sets_delay(v: TraceView, check: Check) -> None:
    """CHANGE MASTER TO MASTER_DELAY = N sets the delay to N seconds (SQL_Delay shows N)."""
    for s in _stmts(v, "change_master"):
        if s.get("errno") is None and s.get("delay") is not None and (after := _sample_after(v, s)):
            check.judge(after["SQL_Delay"] == s["delay"], f"MASTER_DELAY = {s['delay']} but SQL_Delay shows {after['SQL_Delay']}", s, after)


def _expected_error(text: str) -> int | None:
    token = str(text).strip()
    if not token.isascii() or not token.isdigit():
        return 1064  # negative or not an integer: a syntax error
    return 1729 if int(token) > MAX_MASTER_DELAY else None


def _judge_delay_stmt(v: TraceView, check: Check, s: dict, want: int | None) -> None:
    ix = index(v)
    errno = s.get("errno")
    if errno == 1198:  # refused because the slave runs: not a verdict on the value
        return
    if want is None:
        check.judge(errno is None, f"MASTER_DELAY = {s['delay_sql']} is valid but failed with {errno}", s)
        return
    before = ix.delay_at(s["node"], s["t"], s["_line"])
    after = _sample_after(v, s)
    check.judge(errno == want and (after is None or after["SQL_Delay"] == before),
                f"MASTER_DELAY = {s['delay_sql']}: want error {want} and SQL_Delay {before} unchanged, got error {errno}"
                + (f" and SQL_Delay {after['SQL_Delay']}" if after else ""), s, *([after] if after else []))


@checks("WL344.CM.INVALID")
def invalid_delay_rejected(v: TraceView, check: Check) -> None:
    """A negative or non-integer MASTER_DELAY is an error and the statement does not execute."""
    for s in _stmts(v, "change_master"):
        if "delay_sql" in s and _expected_error(s["delay_sql"]) == 1064:
            _judge_delay_stmt(v, check, s, 1064)


@checks("WL344.CM.RANGE")
def delay_range(v: TraceView, check: Check) -> None:
    """0 <= N < 2^31 is accepted; a larger integer fails with ER_MASTER_DELAY_VALUE_OUT_OF_RANGE."""
    for s in _stmts(v, "change_master"):
        if "delay_sql" in s and _expected_error(s["delay_sql"]) != 1064:
            _judge_delay_stmt(v, check, s, _expected_error(s["delay_sql"]))


@checks("WL344.CM.DEFAULT")
def default_delay_zero(v: TraceView, check: Check) -> None:
    """A channel configured without MASTER_DELAY has SQL_Delay 0 until it is changed."""
    ix = index(v)
    for c in v.channels.values():
        node = c["replica"]
        if "delay" in c or "relay_log_info" in v.nodes.get(node, {}):
            continue
        changes = [t for t, _, _ in ix.delays.get(node, [])[1:]]
        first_change = min(changes, default=None)
        for s in _samples(v, node):
            if first_change is None or s["t"] < first_change:
                check.judge(s["SQL_Delay"] == 0, f"{node} never set MASTER_DELAY but SQL_Delay is {s['SQL_Delay']}", s)


@checks("WL344.RESET.DELAY0")
def reset_slave_clears_delay(v: TraceView, check: Check) -> None:
    """RESET SLAVE sets the delay to 0."""
    for s in _stmts(v, "reset_slave"):
        if s.get("errno") is None and (after := _sample_after(v, s)):
            check.judge(after["SQL_Delay"] == 0, f"after RESET SLAVE {s['node']} shows SQL_Delay {after['SQL_Delay']}", s, after)


@checks("WL344.BINLOG.RESTRICT")
def binlog_statement_restricted(v: TraceView, check: Check) -> None:
    """BINLOG executes only format description and row events."""
    for s in _stmts(v, "binlog_statement"):
        types = s["event_types"]
        allowed = bool(types) and types[0] == "FORMAT_DESCRIPTION_EVENT" and all(t in BINLOG_STATEMENT_EVENTS for t in types)
        check.judge((s.get("errno") is None) == allowed,
                    f"BINLOG with {types} {'failed' if s.get('errno') else 'succeeded'} (errno {s.get('errno')})", s)


# -- SHOW SLAVE STATUS ------------------------------------------------------------------------
def count_moved(v: TraceView, node: str, since_line: int, until_line: int) -> bool:
    """Whether a replica that counts by a measured clock difference (the trace shows its clock
    queries) had its clock stepped, or measured again, between the two lines: a wait it began before
    counts to a deadline set then, while what it shows after counts on the clock and estimate of
    now (sql_delay_end, time(0) and clock_diff_with_master, sql/slave.cc). Its whole-second displays
    then tell nothing of the wait; WL344.CLOCK.COMPENSATE judges the wait itself."""
    queries = v.of_node(node, "clock_query")
    if not queries:
        return False
    return bool(v.of_node(node, "clock_step", "clock_query").between(since_line, until_line))


def _running_samples(v: TraceView):
    return (s for s in v.kind("status") if s["Slave_SQL_Running"] == "Yes")


def _waiting_for(v: TraceView, s: dict, exact: bool = False) -> tuple[str, int | None] | None:
    """('yes'|'no', due) if the trace decides whether the SQL thread was delaying at the sample; None at a boundary."""
    ix = index(v)
    try:
        return ix.waiting[s["_line"], exact]
    except KeyError:
        answer = ix.waiting[s["_line"], exact] = _decide_waiting(v, ix, s, exact)
        return answer


def _decide_waiting(v: TraceView, ix: DelayIndex, s: dict, exact: bool) -> tuple[str, int | None] | None:
    t, tol = s["t"], v.resolution_us
    r, applied = ix.pending(s["node"], t, s["_line"])
    if tol and ix.relayed_within(s["node"], t, t + tol):
        return None  # a relay log read after the sample may hold what the SQL thread had at it
    if r is None:
        return "no", None
    if r.get("trx") is not None and ix.executed_before(s["node"], r["trx"], s["_line"]):
        # A group the node had executed, fetched again (after RESET SLAVE, say): a model skips it at
        # its GTID event without a wait, and shows the skip once the group is whole (a cut IO thread
        # may leave only its start). Whether a server delays it first (MySQL's sql_delay_event runs
        # before Gtid_log_event's skip) is not WL#344's, which predates GTIDs: not judged.
        return None
    if r["t"] >= t - tol or (applied is not None and applied <= t + tol):
        return None  # it just arrived, or is being applied at this very instant
    if not exact and count_moved(v, s["node"], r["_line"], s["_line"]):
        return None
    before = [x for x in ix.applies_of(s["node"], r["file"], r["pos"]) if x["_line"] < s["_line"]]
    if before and not any(b["trx"] == r["trx"] for b in v.of_node(s["node"], "rollback").between(before[-1]["_line"], s["_line"])):
        return None  # applied before the sample and redone only after a later rollback: the thread was past it
    skipped = [x for x in ix.skipped_at.get((s["node"], r["file"], r["pos"]), []) if x["_line"] < s["_line"]]
    if skipped and not v.of_node(s["node"], "sql_stop").between(skipped[-1]["_line"], s["_line"]):
        # skipped (sql_slave_skip_counter) before the sample, skipped again only after a stop put the
        # thread back at its group's start: at the sample the thread was past it, waiting for the rest
        # of the group (a cut IO thread may leave only its start in the relay log)
        return None
    a = next((x for x in ix.applies_of(s["node"], r["file"], r["pos"]) if x["t"] > t), None)
    # due under the delay in force at the sample: a CHANGE MASTER before the apply may change it
    probe = {**(a or r), "begin": t, "t": t, "_line": s["_line"]}
    due = ix.due(probe, exact)
    if a is not None and a.get("read") is not None and a["read"] > t - tol:
        return None  # still busy with the previous event
    if due is None:
        return "no", None
    if abs(due - t) <= tol:
        return None
    if tol and due < t < due + US:
        # A server counts the delay in whole seconds and sleeps the whole seconds left from when it
        # looked (sql_delay_event: nap_time = sql_delay_end - now, then slave_sleep): it may wait
        # up to a second past the due time. Whether it waits longer is WL344.WAIT.NO_EXTRA's.
        return None
    return ("yes", due) if due > t else ("no", due)


@checks("WL344.STATE.WAITING", needs=("relay",))
def waiting_state_string(v: TraceView, check: Check) -> None:
    """While delaying, the SQL thread's state is exactly 'Waiting until MASTER_DELAY seconds after master executed event'."""
    for s in _running_samples(v):
        w = _waiting_for(v, s)
        if w is None:
            continue
        shown = s["Slave_SQL_Running_State"] == STATE_WAITING
        check.judge(shown == (w[0] == "yes"),
                    lambda: f"{s['node']} at {seconds(s['t'])} shows state {s['Slave_SQL_Running_State']!r} but it "
                    f"{'is' if w[0] == 'yes' else 'is not'} delaying" + (f" (due {seconds(w[1])})" if w[1] is not None else ""), s)


@checks("WL344.SSS.REMAINING", needs=("relay",))
def remaining_delay(v: TraceView, check: Check) -> None:
    """SQL_Remaining_Delay: the whole seconds left while waiting, NULL in every other state."""
    for s in v.kind("status"):
        rem = s["SQL_Remaining_Delay"]
        if s["Slave_SQL_Running_State"] != STATE_WAITING:
            check.judge(rem is None, lambda: f"{s['node']} state {s['Slave_SQL_Running_State']!r} but SQL_Remaining_Delay {rem}", s)
            continue
        w = _waiting_for(v, s) if s["Slave_SQL_Running"] == "Yes" else None
        if not isinstance(rem, int) or rem < 0:
            check.judge(False, f"{s['node']} is waiting but SQL_Remaining_Delay is {rem!r}", s)
        elif w is not None and w[1] is not None:
            exact = (w[1] - s["t"]) / US
            # Whole seconds, read at some instant of the sample's read (not within the resolution:
            # a loaded machine's coarse polls would hide the whole-second error it is there to see).
            check.judge(abs(rem - exact) < 1 + v.whole_second_slack_us(s) / US,
                        f"{s['node']} at {seconds(s['t'])}: SQL_Remaining_Delay {rem} but {exact:.3f} s are left", s)


@checks("WL344.SSS.SQL_DELAY")
def sql_delay_field(v: TraceView, check: Check) -> None:
    """SQL_Delay is the configured delay, a nonnegative integer, at every sample."""
    ix = index(v)
    for s in v.kind("status"):
        want = ix.delay_at(s["node"], s["t"], s["_line"])
        got = s["SQL_Delay"]
        check.judge(isinstance(got, int) and got >= 0 and (want is None or got == want),
                    lambda: f"{s['node']} at {seconds(s['t'])} shows SQL_Delay {got!r}, configured {want}", s)


@checks("WL344.SSS.RUNNING_STATE")
def running_state_is_processlist_state(v: TraceView, check: Check) -> None:
    """Slave_SQL_Running_State is identical to the SQL thread's State in SHOW PROCESSLIST."""
    for s in v.kind("status"):
        if "processlist_state" in s and (not v.resolution_us or _quiet_around(v, s)):
            pl = s["processlist_state"]
            check.judge(s["Slave_SQL_Running_State"] == (pl if pl is not None else ""),
                        lambda: f"{s['node']}: Slave_SQL_Running_State {s['Slave_SQL_Running_State']!r}, processlist {pl!r}", s)


def _quiet_around(v: TraceView, s: dict) -> bool:
    """A polled sample reads the processlist and SHOW SLAVE STATUS one after the other: their
    states are compared where nothing woke the SQL thread meanwhile, i.e. the IO thread read
    nothing and no statement ran on the replica from the sample before to the one after. A
    relay-log write wakes the thread waiting for more updates (wait_for_update_relay_log,
    sql/log.cc); it may find nothing to read and wait again, so its state goes and comes back
    with no event applied (mdb-purge-statement at load 13, over a master's FLUSH LOGS)."""
    samples = _samples(v, s["node"])
    i = bisect_left(samples.keys, s["_line"])
    if not 0 < i < len(samples) - 1:
        return False
    before, after = samples[i - 1], samples[i + 1]
    read = lambda x: (x["Master_Log_File"], x["Read_Master_Log_Pos"])  # noqa: E731
    return read(before) == read(s) == read(after) and not v.of_node(s["node"], "stmt").between(before["_line"], after["_line"])


# -- relay-log.info ---------------------------------------------------------------------------
def _reads(v: TraceView):
    """relay-log.info contents a server read, with whether the server wrote them itself."""
    boot = {n: c.get("relay_log_info") for n, c in v.nodes.items()}
    for r in v.kind("relay_log_info"):
        yield r, not (r["t"] == 0 and boot.get(r["node"]) == r["content"])


def _first_sample_after(v: TraceView, o: dict) -> dict | None:
    return next(_samples(v, o["node"]).after(o["_line"]), None)


@checks("WL344.RLI.DURABLE")
def delay_survives_restart(v: TraceView, check: Check) -> None:
    """After a restart the previous delay is restored."""
    ix = index(v)
    for r in v.kind("restart"):
        node = r["node"]
        if node not in v.channels:
            continue
        crash = v.of_node(node, "crash").last_before(r["_line"])
        s = _first_sample_after(v, r)
        if crash is None or s is None:
            continue
        want = ix.delay_at(node, crash["t"], crash["_line"])
        if ix.delay_at(node, s["t"], s["_line"]) != want:
            continue  # changed again after the restart, before anything showed it
        check.judge(s["SQL_Delay"] == want, f"{node} had delay {want} before its crash at {seconds(crash['t'])}, {s['SQL_Delay']} after restart", r, s)


@checks("WL344.RLI.FORMAT")
def relay_log_info_new_format(v: TraceView, check: Check) -> None:
    """relay-log.info is written as number_of_fields (>= 5), the four positions, the delay."""
    ix = index(v)
    for r, own in _reads(v):
        if not own:
            continue
        info = read_relay_log_info(r["content"])
        want = ix.delay_at(r["node"], r["t"], r["_line"])
        check.judge(info.get("format") == "new" and "error" not in info and info["fields"] >= 5
                    and "." in info["relay_log_name"] and (want is None or info["delay"] == want),
                    f"{r['node']} wrote relay-log.info {r['content']!r}: {info}, delay should be {want}", r)


def _boot_reads(v: TraceView, pick) -> list[tuple[dict, dict, dict | None]]:
    """relay-log.info reads at start-up, with the first SHOW SLAVE STATUS after; a read the server
    went down right after (crash, shutdown), or whose replication a DBA changed (STOP SLAVE, CHANGE
    MASTER, RESET SLAVE), before any sample is not judged: nothing showed what it read."""
    def downs(node: str) -> Seq:
        return v.memo(("delay.downs", node), lambda: Seq((o for o in v.of_node(node, "crash", "shutdown", "stmt") if o["kind"] != "stmt" or (
            o["op"] in ("stop_slave", "change_master", "reset_slave"))), lambda o: o["_line"]))
    out = []
    for r, own in _reads(v):
        info = read_relay_log_info(r["content"])
        s = _first_sample_after(v, r)
        end = s["_line"] if s is not None else 2**62
        if pick(info, own) and not downs(r["node"]).between(r["_line"], end):
            out.append((r, info, s))
    return out


@checks("WL344.RLI.FIELDS_MIN")
def too_few_fields_is_an_error(v: TraceView, check: Check) -> None:
    """A first line that is an integer below 5 is an error; the slave does not start on it."""
    for r, info, s in _boot_reads(v, lambda i, own: i.get("format") == "new" and "< 5" in i.get("error", "")):
        err = next((e for e in v.of_node(r["node"], "error") if e["t"] == r["t"]), None)
        check.judge(err is not None and (s is None or s["Slave_SQL_Running"] == "No"),
                    f"{r['node']} read {r['content']!r} without an error", r, *([s] if s else []))


@checks("WL344.RLI.OLD_FORMAT")
def old_format_read(v: TraceView, check: Check) -> None:
    """A first line that is not a number is read as the old format, with delay 0."""
    for r, info, s in _boot_reads(v, lambda i, own: i.get("format") == "old" and "error" not in i):
        check.judge(s is not None and s["SQL_Delay"] == 0 and s["Slave_SQL_Running"] == "Yes",
                    f"{r['node']} read old-format {r['content']!r}, then {s and (s['SQL_Delay'], s['Slave_SQL_Running'])}",
                    r, *([s] if s else []))


@checks("WL344.RLI.GARBAGE")
def garbage_tail_tolerated(v: TraceView, check: Check) -> None:
    """Garbage after the last field is ignored, in both formats."""
    for r, info, s in _boot_reads(v, lambda i, own: i.get("garbage") and "error" not in i):
        check.judge(s is not None and s["SQL_Delay"] == info["delay"],
                    f"{r['node']} read {r['content']!r} (delay {info['delay']}), then SQL_Delay {s and s['SQL_Delay']}",
                    r, *([s] if s else []))


# -- the IO thread and the master -------------------------------------------------------------
@checks("WL344.IO.UNAFFECTED", needs=("relay",))
def io_thread_unaffected(v: TraceView, check: Check) -> None:
    """The IO thread relays events as they come, whatever the delay. What stops or restarts it
    (a crash, STOP/START/RESET SLAVE, a dropped connection and its reconnect) delays what it
    relays for its own reasons, not the delay's."""
    ix = index(v)
    disturb: dict[str, list[int]] = {}
    for o in v.obs:
        if o["kind"] in ("crash", "restart", "io_cut") or (o["kind"] == "stmt" and o["op"] in ("stop_slave", "start_slave", "reset_slave")):
            disturb.setdefault(o["node"], []).append(o["t"])
    for times in disturb.values():
        times.sort()

    def disturbed(node: str, lo: int, hi: int) -> bool:
        times = disturb.get(node, [])
        i = bisect_left(times, lo)
        return i < len(times) and times[i] <= hi

    for r in v.kind("relay"):
        c = v.channels.get(r["node"])
        b = ix.binlog.get((r["source"], r.get("gtid"), r.get("idx")))
        if b is None or c is None or ix.delay_at(r["node"], r["t"]) in (None, 0):
            continue
        if disturbed(r["node"], b["t"], r["t"]) or disturbed(r["source"], b["t"], r["t"]):
            continue
        limit = c.get("latency_us", 0) + v.resolution_us
        check.judge(r["t"] - b["t"] <= limit, f"{r['node']} relayed {r['type']} of {r['trx']} {seconds(r['t'] - b['t'])} after it was binlogged", b, r)


@checks("WL344.MASTER.UNAFFECTED")
def master_unaffected(v: TraceView, check: Check) -> None:
    """A commit on the master returns when it is binlogged, whatever its replicas' delays."""
    ix = index(v)
    delayed = {c["source"] for c in v.channels.values() if c.get("delay") or ix.delays.get(c["replica"], [(0, 0, 0)])[-1][2]}
    for c in v.kind("commit"):
        if c["node"] not in delayed or c.get("gtid") is None or c.get("semisync") is not None or c.get("errno") is not None:
            continue  # a semi-sync wait is judged by the semi-sync properties; a failed commit never returned
        b = ix.binlog.get((c["node"], c["gtid"], 0))
        if b is not None and b.get("trx") != c["trx"]:  # a GTID issued again (a crash cut the first away): its own group
            firsts = v.memo(("delay.group_starts", c["node"]), lambda: {
                x.get("trx"): x for x in reversed(v.of_node(c["node"], "binlog")) if x.get("idx") == 0})
            b = firsts.get(c["trx"])
        if b is not None:
            check.judge(b["t"] <= c["t"] <= b["t"] + v.resolution_us, f"commit of {c['trx']} returned at {seconds(c['t'])}, binlogged at {seconds(b['t'])}", b, c)


# -- START SLAVE UNTIL (use case P1) ----------------------------------------------------------
@checks("WL344.P1.UNTIL", needs=("relay",))
def until_stops_at_position(v: TraceView, check: Check) -> None:
    """START SLAVE SQL_THREAD UNTIL stops the SQL thread at the position, executing nothing beyond it."""
    ix = index(v)
    for s in _stmts(v, "start_slave"):
        u = s.get("until")
        # With the SQL thread already running, START SLAVE only notes it and sets no UNTIL
        # (start_slave, sql/sql_repl.cc: the until condition is taken only for threads it starts).
        if not u or "master_log_file" not in u or s.get("errno") is not None or s.get("warning") == ER_SLAVE_WAS_RUNNING:
            continue  # (UNTIL SQL_AFTER_MTS_GAPS names no position: PARALLEL.UNTIL.GAPS)
        target = (u["master_log_file"], u["master_log_pos"])
        stopped = next(v.of_node(s["node"], "sql_stop").after(s["_line"]), None)
        stop = stopped["t"] if stopped is not None else None
        group_start = None
        # By trace line: a START SLAVE without UNTIL in the stop's microsecond runs what follows.
        for a in v.of_node(s["node"], "apply").between(s["_line"], stopped["_line"] if stopped is not None else 2**62):
            r = ix.relay.get((a["node"], a["relay_file"], a["relay_pos"]))
            if r is None or not r["master_end"]:
                continue
            if group_start is not None:
                check.judge(group_start < target, f"{a['node']} executed {a['trx']} beyond UNTIL {target}", s, a)
            if a["last"]:
                group_start = (r["master_file"], r["master_end"])
        # Only a stop the condition made says where UNTIL left the thread: STOP SLAVE, an error or a
        # crash may come first, and after a restart the thread runs without the condition.
        if stop is None or stopped["reason"] != "until":
            continue
        final = _first_sample_after(v, stopped)
        if final is None:
            continue
        at = (final["Relay_Master_Log_File"], final["Exec_Master_Log_Pos"])
        # Short only if the relay log the thread read held an event between its stop and the position:
        # a GTID connect that skipped another domain's groups leaves a hole there (the next event
        # starts past the position, and the servers stop before it).
        kept = max((d["_line"] for d in v.of_node(s["node"]) if d["_line"] < stopped["_line"] and (
            d["kind"] == "relay_log_recovery" or repositions(d) or (d["kind"] == "stmt" and d["op"] == "reset_slave"))), default=0)
        short = any(r["node"] == s["node"] and kept < r["_line"] and r["t"] <= stop and r["master_end"]
                    and at < (r["master_file"], r["master_end"]) <= target for r in v.kind("relay"))
        relayed_beyond = any(r["node"] == s["node"] and (r["master_file"], r["master_end"]) > target and r["t"] <= stop
                             for r in v.kind("relay"))
        if relayed_beyond:
            check.judge(at >= target or not short,
                        f"{s['node']} stopped at {final['Exec_Master_Log_Pos']} before reaching UNTIL {target}", s, final)


# -- WL#7318 ----------------------------------------------------------------------------------
def _commit_ts_applies(v: TraceView):
    ix = index(v)
    return (a for a in _applies(v) if ix.rule(a) == "wl7318")


@checks("WL7318.F1")
def immediate_master_reference(v: TraceView, check: Check) -> None:
    """In a chain, the delay is measured from the immediate master's commit."""
    ix = index(v)
    for a in _commit_ts_applies(v):
        if a["type"] in TRX_START and a["source"] in v.channels and (due := ix.due(a)) is not None:
            _judge_due(v, check, a, due, tight=True, what=f"{a['source']}'s commit")


@checks("WL7318.F2")
def commit_time_reference(v: TraceView, check: Check) -> None:
    """The delay begins at the commit on the master, not at the transaction's start."""
    ix = index(v)
    for a in _commit_ts_applies(v):
        if a["type"] in TRX_START and (due := ix.due(a)) is not None:
            _judge_due(v, check, a, due, tight=True, what="immediate_commit_timestamp + delay")


def _per_trx(v: TraceView, types: frozenset[str], check: Check) -> None:
    """Only the transaction's first event may wait; every other one starts as soon as it is read."""
    first_type: dict[tuple, str] = {}
    for a in _commit_ts_applies(v):
        if a["idx"] == 0:
            first_type[(a["node"], a["gtid"])] = a["type"]
        elif first_type.get((a["node"], a["gtid"])) in types and a.get("read") is not None:
            check.judge(begin_of(a) <= a["read"] + v.resolution_us,
                        f"{a['node']} paused {seconds(begin_of(a) - a['read'])} inside {a['trx']} before {a['type']}", a)


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
                        f"{s['node']}: P_S ({s['DESIRED_DELAY']}, {s['REMAINING_DELAY']}) vs "
                        f"SHOW SLAVE STATUS ({s['SQL_Delay']}, {s['SQL_Remaining_Delay']})", s)


@checks("WL7318.F5", needs=("relay",))
def delay_in_seconds(v: TraceView, check: Check) -> None:
    """The delay is in seconds everywhere: what CHANGE MASTER set, what the monitoring shows, what is waited."""
    ix = index(v)
    for s in v.kind("status"):
        if "DESIRED_DELAY" not in s or s["Slave_SQL_Running"] != "Yes":
            continue
        w = _waiting_for(v, s)
        if w and w[0] == "yes" and s["REMAINING_DELAY"] is not None:
            left = (w[1] - s["t"]) / US
            check.judge(abs(s["REMAINING_DELAY"] - left) < 1 + v.resolution_us / US,
                        f"{s['node']}: REMAINING_DELAY {s['REMAINING_DELAY']} but {left:.3f} s are left", s)
        want = ix.delay_at(s["node"], s["t"], s["_line"])
        if want is not None:
            check.judge(s["DESIRED_DELAY"] == want, f"{s['node']}: DESIRED_DELAY {s['DESIRED_DELAY']}, configured {want} s", s)


@checks("WL7318.F6")
def fallback_without_commit_timestamps(v: TraceView, check: Check) -> None:
    """From an immediate master that sends no commit timestamps, a WL#7318 replica keeps the WL#344 rule."""
    ix = index(v)
    for a in _applies(v):
        if v.nodes.get(a["node"], {}).get("delay_rule") == "wl7318" and a.get("ict") is None and (due := ix.due(a)) is not None:
            _judge_due(v, check, a, due, tight=True, what="WL#344 fallback")


@checks("WL7318.ICT")
def immediate_commit_timestamp(v: TraceView, check: Check) -> None:
    """The GTID event carries the microseconds since the epoch at which the server binlogged the transaction."""
    epoch = v.header.get("epoch_us", 0)
    for b in v.kind("binlog"):
        if b["type"] in TRX_START and v.nodes.get(b["node"], {}).get("commit_timestamps"):
            local = epoch + b["t"] + v.offset_at(b["node"], b["t"], b["_line"])
            check.judge(b.get("ict") is not None and abs(b["ict"] - local) <= v.resolution_us,
                        f"{b['node']} binlogged {b['trx']} at local {local} µs with immediate_commit_timestamp {b.get('ict')}", b)


@checks("WL7318.NF1")
def delay_on_every_slave(v: TraceView, check: Check) -> None:
    """A delay is honoured on every replica of any topology: chains, fan-outs, replicas that are sources."""
    ix = index(v)
    fan = {}
    for c in v.channels.values():
        fan[c["source"]] = fan.get(c["source"], 0) + 1
    sources = {c["source"] for c in v.channels.values()}
    for a in _applies(v):
        c = v.channels.get(a["node"])
        if c is None or not (c["source"] in v.channels or a["node"] in sources or fan[c["source"]] > 1):
            continue
        due = ix.due(a)
        if due is not None and ix.delay_at(a["node"], begin_of(a)):
            _judge_due(v, check, a, due, tight=False, what="delay on a replica inside a larger topology")

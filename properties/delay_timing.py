"""When each event was due on each replica, recomputed from the Trace (DelayIndex), and the views the
delay properties share."""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import cached_property
from operator import itemgetter
from typing import Iterator
from replcheck.spec.formats import MAX_MASTER_DELAY, US

from .core import Check, Seq, TraceView, seconds


STATE_WAITING = "Waiting until MASTER_DELAY seconds after master executed event"
# MariaDB: '...; waiting for more updates'; MySQL 5.6 and the seed's model: '...; waiting for the
# slave I/O thread to update it'. Both are set where the SQL thread waits at the end of the relay log.
CAUGHT_UP = "Slave has read all relay log"
EXEMPT = frozenset({"START_EVENT_V3", "ROTATE_EVENT", "FORMAT_DESCRIPTION_EVENT"})
TRX_START = frozenset({"GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT"})
BINLOG_STATEMENT_EVENTS = frozenset({
    "FORMAT_DESCRIPTION_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT",
    "DELETE_ROWS_EVENT", "PRE_GA_WRITE_ROWS_EVENT", "PRE_GA_UPDATE_ROWS_EVENT",
    "PRE_GA_DELETE_ROWS_EVENT",
})
UNASKED = object()  # what a cache of answers gives for a question not asked yet (an answer may be None)


# -- derived views, built once per trace ------------------------------------------------------
class DelayIndex:
    def __init__(self, v: TraceView):
        self.v = v
        # each key's first writer: built backwards, the first overwrites the later ones
        written = [b for b in reversed(v.kind("binlog")) if b.get("gtid") is not None]
        self.binlog: dict[tuple, dict] = {(b["node"], b["gtid"], b["idx"]): b for b in written}
        self.origin: dict[tuple, dict] = {(b["gtid"], b["idx"]): b for b in written}
        # a GTID whose write a crash tore is numbered again for the next transaction (recovery
        # truncates the torn group): its first writer is that transaction's origin, not the torn one's
        self.origin.update({(b["gtid"], b["idx"], b.get("trx")): b for b in written})
        self.applies: dict[str, list[dict]] = {}
        self.applied_at: dict[tuple, list[dict]] = {}  # (node, relay file, relay pos) -> its applies, in order
        applies, applied_at = self.applies, self.applied_at
        for a in v.kind("apply"):
            node = a["node"]
            applies.setdefault(node, []).append(a)
            applied_at.setdefault((node, a.get("relay_file"), a.get("relay_pos")), []).append(a)
        self.skipped_at: dict[tuple, list[dict]] = {}  # (node, relay file, relay pos) -> its skips, in order
        for o in v.kind("skip"):
            for f, pos in skipped_places(o):
                self.skipped_at.setdefault((o["node"], f, pos), []).append(o)
        self.delays = self._delay_timelines()
        self.delay_keys = {node: [(when, line) for when, line, _ in changes] for node, changes in self.delays.items()}
        # a replica whose delay never changes has it at any time of the trace: no bisect
        self._fixed = {node: changes[0][2] for node, changes in self.delays.items() if len(changes) == 1}
        self._wl7318 = {n for n, node in v.nodes.items() if node.get("delay_rule") == "wl7318"}
        # per node, (the last query, the first relay it could still return): see pending
        self.cursors: dict[str, tuple[tuple[int, int], int]] = {}
        self._sweeps: dict[str, tuple[dict, Seq, Seq, list[int]]] = {}  # per node, what pending reads
        self._last_passes: dict[str, tuple[list[int], list[int]]] = {}  # per node, see _last_passes
        self._swept: dict[tuple[str, int, int, int], tuple[dict | None, int | None, int]] = {}  # pending's sweeps by their start
        # per sample line, what the SQL thread was doing there: several properties ask (waiting_for)
        self.waiting: dict[tuple[int, bool], tuple[str, int | None] | None] = {}  # (sample line, exact) -> waiting_for
        self._due_ranges: dict[int, tuple[int, int] | None] = {}  # apply line -> due_range
        self.in_hand: dict[int, tuple] = {}  # sample line -> what waiting_for decides alike both ways (delay_waiting)
        self._pending_at: dict[int, tuple[dict | None, int | None]] = {}  # sample line -> pending there
        self.rewinds: dict[str, tuple[list[int], list[int | None]]] = {}  # per node, its stops and the samples after (delay_waiting)

    @cached_property
    def relay(self) -> dict[tuple, dict]:
        """Each relayed event by (node, relay file, pos): asked of few Traces, built on the first ask."""
        return {(r["node"], r["file"], r["pos"]): r for r in self.v.kind("relay")}

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
        if t >= 0 and node in self._fixed:
            return self._fixed[node]
        i = bisect_left(self.delay_keys.get(node, []), (t, 2**62 if line is None else line))
        return self.delays[node][i - 1][2] if i else None

    def rule(self, a: dict) -> str:
        """Which rule governs an applied event: WL#7318 needs a capable replica and a commit timestamp."""
        return "wl7318" if a["node"] in self._wl7318 and a.get("ict") is not None else "wl344"

    def _gtidless_origin(self, a: dict) -> dict | None:
        """The source's binlog entry of an event with no GTID (an incident), by its master position."""
        r = a if "master_end" in a else self.relay.get((a["node"], a.get("relay_file"), a.get("relay_pos")))
        if r is None:
            return None
        by_pos = self.v.memo("delay.binlog_by_pos", lambda: {(b["node"], b["file"], b["end"]): b for b in self.v.kind("binlog")})
        return by_pos.get((r["source"], r["master_file"], r["master_end"]))

    def estimate(self, a: dict, read: int | None = None, query_first: bool = False) -> int | None:
        """The clock difference the replica measured with the apply's source at its IO thread's last
        connect before it (clock_diff_with_master, whole seconds), where the trace shows the clock
        query (a real server's, a server flavour model's); None where the replica compensates exactly.
        `read`: another moment the SQL thread may have read the event (_read_times); `query_first`:
        a query in the read's µs logged after the read came before it (due_range)."""
        if not self.v.of_node(a["node"], "clock_query"):
            return None  # no query: the replica compensates exactly (measured_difference), whenever it read
        own = read is None
        if own:
            read = a.get("read") if a.get("read") is not None else begin_of(a)  # the wait counted by the estimate then
        until_line = self.read_line(a) if own and "kind" in a and not query_first else None
        return measured_difference(self.v, a["node"], a.get("source"), a["_line"], read, until_line)

    def measured_due(self, node: str, source: str, when: int, delay: int, line: int, read: int,
                     read_line: int | None = None) -> int | None:
        """True time at which a replica that read an event stamped `when` (whole seconds) at `read`
        ends its delay as a server counts it: when + clock_diff_with_master + delay on its own clock,
        as it stood at the read (a clock step after the connect moves the end); None where the
        trace shows no clock query (the replica compensates exactly)."""
        est = self.estimate({"node": node, "source": source, "_line": line, "read": read})
        if est is None:
            return None
        return (when + est + delay) * US - self.v.offset_at(node, read, read_line) - self.v.header.get("epoch_us", 0)

    def _counted(self, a: dict, when: int, query_first: bool = False, latest: bool = False) -> int:
        """A timestamp plus the measured clock difference, on the replica's clock as it stood when
        the SQL thread read the event (its timed wait, set then, is not moved by a later step): the
        earliest such count over the moments it may have read it, or the `latest`."""
        # a step logged after the observation in its own µs came after it (a status sample's probe)
        own = a.get("read") if a.get("read") is not None else begin_of(a)
        return (max if latest else min)((when + diff) * US - self.v.offset_at(a["node"], read, self.read_line(a) if read == own else None)
                   for read in self._read_times(a)
                   if (diff := self.estimate(a, None if read == own else read, query_first)) is not None)  # none before a connect

    def due_range(self, a: dict) -> tuple[int, int] | None:
        """(earliest, latest) due of an applied event over both orders of its read and a reconnect's
        clock query in the same µs: the IO thread (connect_to_master's get_master_version_and_clock)
        and the SQL thread (next_event, then sql_delay_event reading mi->clock_diff_with_master, MariaDB
        sql/slave.cc) run unsynchronised, and a trace's µs does not order them; None if it does not wait.
        `a` is an observation of the Trace: several properties ask of the same, kept by its line."""
        answer = self._due_ranges.get(a["_line"], UNASKED)  # half are asked first here: no KeyError raised for each
        if answer is not UNASKED:
            return answer
        due = self.due(a)
        read = a.get("read") if a.get("read") is not None else begin_of(a)
        queried = self.v.memo("delay.clock_query_stamps", lambda: {(q["node"], q["t"]) for q in self.v.kind("clock_query")})
        if (a["node"], read) in queried:
            dues = [d for d in (due, self.due(a, query_first=True)) if d is not None]
            answer = (min(dues), max(dues)) if dues else None
        else:  # no query in the read's µs: both orders count alike
            answer = None if due is None else (due, due)
        self._due_ranges[a["_line"]] = answer
        return answer

    def read_line(self, a: dict) -> int | None:
        """The trace line the SQL thread read the applied event at, where the trace places it: its own
        line if read as applied; else the latest in the read's µs of what let the thread read it (its
        start, the event's relay, the apply before it). A clock step logged after that line in the same
        µs came after the read, and does not move the wait begun there (delay_wait's wait rule)."""
        read = a.get("read") if a.get("read") is not None else begin_of(a)
        if read == a["t"]:
            return a["_line"]
        last = read_triggers(self.v, a["node"]).last_before(a["_line"])
        relayed = self.relay.get((a["node"], a.get("relay_file"), a.get("relay_pos")))
        lines = [o["_line"] for o in (last, relayed) if o is not None and o["t"] == read]
        return max(lines) if lines else None

    def _read_times(self, a: dict) -> list[int]:
        """When the SQL thread may have read the event: the apply's read; on a polled trace, which sees
        an apply only by its row, any moment from its relay copy's write on, so each clock state in
        between, a step or a difference measured again (seed 0's History 149: B read t10 before its
        IO thread reconnected, after a cut, and measured the difference 1 s smaller)."""
        begin = begin_of(a)
        if a.get("read") is not None or not self.v.resolution_us:
            return [a["read"] if a.get("read") is not None else begin]
        copies = self.v.memo("delay.relay_copies", lambda: _by_place(self.v.kind("relay")))
        # the copy relayed before the apply (a relay log name begun again reuses the place)
        r = next((c for c in reversed(copies.get((a["node"], a.get("relay_file"), a.get("relay_pos")), ())) if c["_line"] < a["_line"]), None)
        first = min(begin, r.get("since", r["t"])) if r is not None else begin
        if r is not None and (gone := self.v.of_node(a["node"], "relay_log_recovery").last_before(r["_line"])) is not None:
            # a copy relayed after the relay logs were thrown away came by a connect after that, which
            # measured the clock difference before fetching (seed 8's History 132: a START SLAVE by
            # GTID after an hour's clock step; the read before the one that found it was older). The
            # throw-away is logged when its statement returned, the connect may come before that.
            stmt = self.v.of_node(a["node"], "stmt").last_before(gone["_line"])
            began = stmt["t"] - stmt.get("duration_us", 0) if stmt is not None and stmt["t"] == gone["t"] else gone["t"]
            q = next((q for q in self.v.of_node(a["node"], "clock_query") if q["t"] >= began and q["_line"] < r["_line"]), None)
            first = min(begin, max(first, q["t"] if q is not None else began))
        return [first, *(o["t"] for o in self.v.of_node(a["node"], "clock_query", "clock_step") if first < o["t"] < begin), begin]

    def due(self, a: dict, exact: bool = False, query_first: bool = False, latest: bool = False) -> int | None:
        """True time before which the applied event must not begin; None if it does not wait. By the
        clock difference the replica measured (estimate), as a server counts (sql_delay_event: when +
        clock_diff_with_master + sql_delay on its own clock), unless `exact`: the seed's absolute
        time, whose difference from the server's count is WL344.CLOCK.COMPENSATE's alone. The
        earliest over the moments the SQL thread may have read the event, or the `latest`."""
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
            base = self._counted(a, 0, query_first, latest) if not exact and self.estimate(a) is not None \
                else -self.v.offset_at(r["source"], r["t"], r["_line"])
        else:
            o = self.origin_of(a)
            if o is None:
                return None
            base = self._counted(a, a["when"], query_first, latest) if not exact and self.estimate(a) is not None \
                else a["when"] * US - self.v.offset_at(o["node"], o["t"], o["_line"])
        due = base - self.v.header.get("epoch_us", 0) + delay * US
        if not delay and due > begin_of(a):
            # no delay set: an event dated ahead sets no wait, sql_delay_event waits only `if (sql_delay)`
            # (MariaDB sql/slave.cc, MySQL sql/rpl_replica.cc; MariaDB's rpl_delayed_slave2)
            return None
        return due

    def earliest_due(self, a: dict) -> int | None:
        """due, or under WL#7318 the replica's own count where that is earlier: the immediate master's
        commit timestamp rounded up to the second plus the delay, on the replica's clock (MySQL
        rpl_replica.cc sql_delay_event: ceil(immediate_commit_timestamp / 1000000.00) + sql_delay
        against my_time(0), no clock_diff_with_master), which a replica clock ahead of its source's
        reaches first (the MySQL models' declared WL7318.F1)."""
        due = self.due(a)
        if due is None or self.rule(a) != "wl7318":
            return due
        begin, line = begin_of(a), a.get("_line")
        own = -(-a["ict"] // US) * US + self.delay_at(a["node"], begin, line) * US
        return min(due, own - self.v.offset_at(a["node"], begin, line) - self.v.header.get("epoch_us", 0))

    def origin_of(self, a: dict) -> dict | None:
        """The binlog event on the originating master that an apply replays, if the Trace has it."""
        if not a.get("gtid"):
            return self._gtidless_origin(a)
        return self.origin.get((a["gtid"], a["idx"], a.get("trx"))) or self.origin.get((a["gtid"], a["idx"]))

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
        done, relays, discards, stops = self._sweeps.get(node) or self._sweep_state(node)
        # Queries in trace order resume where the last one stopped: one sweep of the relay log per
        # stretch between stops, not one per sample. A later t and line only add discards and applies
        # before them (in the same µs an event discarded may be applied again: from the start there).
        last, start = self.cursors.get(node, ((-1, -1), 0))
        if not ((t, line) == last or (t > last[0] and line >= last[1])):
            start = 0
        elif stops and (k := bisect_left(stops, last[1])) < len(stops) and stops[k] <= line:
            # A stop since may send the thread back to a group it passed, incomplete or rolled back
            # there, even behind groups committed (a parallel applier's gap): _passed settles an
            # apply at the first stop after it, so only those applied since the stop before are open.
            start = min(start, self._applied_since(node, done, relays, stops[k - 1] if k else -1))
        # The sweep from a start is the same whoever asks: several properties ask of each sample in
        # turn, from the same place
        key = node, t, line, start
        swept = self._swept.get(key)
        if swept is None:
            swept = self._swept[key] = self._sweep(done, relays, discards, stops, node, t, line, start)
        r, when, i = swept
        self.cursors[node] = ((t, line), i)
        return r, when

    def pending_at(self, s: dict) -> tuple[dict | None, int | None]:
        """pending at a status sample, asked once: the lag and delay state checks ask it of each sample."""
        found = self._pending_at.get(s["_line"])  # most are asked first here: no KeyError raised for each
        if found is None:
            found = self._pending_at[s["_line"]] = self.pending(s["node"], s["t"], s["_line"])
        return found

    def _applied_since(self, node: str, done: dict, relays: Seq, line: int) -> int:
        """The first of the node's relays whose place was applied or skipped after trace line `line`."""
        lines, firsts = self._last_passes.get(node) or self._last_passes.setdefault(node, _last_passes(done, relays))
        return firsts[bisect_right(lines, line)]

    def _sweep_state(self, node: str) -> tuple[dict, Seq, Seq, list[int]]:
        """What pending reads of a node: its applies and skips by place, its relays, its discards
        (RESET SLAVE, relay_log_recovery, a CHANGE MASTER to a new place), its SQL thread's stops."""
        done = _applies_by_place(self.applies.get(node, []) + [
            {"_line": o["_line"], "t": o["t"], "relay_file": f, "relay_pos": pos}
            for o in self.v.of_node(node, "skip") for f, pos in skipped_places(o)])
        discards = Seq((o for o in self.v.of_node(node, "relay_log_recovery", "stmt") if (o["kind"] == "relay_log_recovery" or repositions(o) or (
            o["kind"] == "stmt" and o["op"] == "reset_slave" and o.get("errno") is None))), itemgetter("_line"))
        state = self._sweeps[node] = (done, self.v.of_node(node, "relay"), discards, self.v.of_node(node, "sql_stop").keys)
        return state

    def _sweep(self, done: dict, relays: Seq, discards: Seq, stops: list[int], node: str, t: int, line: int,
               start: int) -> tuple[dict | None, int | None, int]:
        """pending's answer, looking from relays[start], and where the next query resumes."""
        res = self.v.resolution_us
        for i in range(start, len(relays)):
            r = relays[i]
            if r["t"] > t:
                return None, None, i
            # A model's Trace: the first apply of this very event (a relay-log place is reused after a
            # discard, and an apply before a rollback, its group completed later, still passed it). A
            # polled server's relay log is read after what its samples showed applied, and a STOP
            # SLAVE mid-group sends its SQL thread back to the group's start: its last apply of this
            # copy, before the relay logs were next thrown away (seed 10's History 25: the place of
            # a Rotate relayed again after a START SLAVE by GTID).
            lines = done.get((r["file"], r["pos"]), ())
            if res:
                gone = next(discards.after(r["_line"]), None)
                mine = lines if gone is None else lines[:bisect_left(lines, (gone["_line"],))]
                when = mine[-1][1] if mine else None
            else:
                when = self._passed(node, r, lines, stops, done, line) if lines else None
            # Only discards logged before the sample: one later in the same microsecond had not happened yet.
            if discards and any(when is None or when > d["t"] for d in discards.between(r["_line"], line)):
                continue  # RESET SLAVE or relay_log_recovery threw it away unapplied
            if when is None or when >= t - res:
                return r, when, i
        return None, None, len(relays)

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


def read_triggers(v: TraceView, node: str) -> Seq:
    """What lets the node's SQL thread read its next event, in line order: its start (START SLAVE that
    started it, a restart, a restore) and each apply (the next read follows it)."""
    return v.memo(("delay.read_triggers", node), lambda: Seq((
        o for o in v.of_node(node, "stmt", "restart", "restore", "apply") if o["kind"] != "stmt" or (
            o["op"] == "start_slave" and o.get("errno") is None and not o.get("warning") and o.get("thread") in (None, "sql"))),
        lambda o: o["_line"]))


def measured_difference(v: TraceView, node: str, source: str | None, line: int, until_t: int | None = None,
                        until_line: int | None = None) -> int | None:
    """clock_diff_with_master of the replica's channel that relayed an event from `source`, as its IO
    thread measured it at its last connect before the line (and at or before `until_t`); None where
    the trace shows no clock query (the replica compensates exactly). One channel keeps one value
    (Master_info's), measured again at each connect to whatever source it then has: after a failover
    the SQL thread counts the old primary's relayed events by the new primary's difference
    (sql_delay_event: `ev->when + rli->mi->clock_diff_with_master + sql_delay`, MariaDB sql/slave.cc,
    MySQL sql/rpl_replica.cc). Only named connections (multi-source) keep one each, told apart by source."""
    queries = v.of_node(node, "clock_query")
    named = any(replica == node for replica, _ in v.connections)
    q = queries.last_before(line)
    # a query at the read's µs logged after the line the read is placed at came after it
    while q is not None and ((named and source is not None and q.get("source") != source)
                             or (until_t is not None and (q["t"] > until_t or (q["t"] == until_t and until_line is not None
                                                                                and q["_line"] > until_line)))):
        q = queries.last_before(q["_line"])
    return None if q is None else q.get("clock_diff_with_master")


def skipped_places(o: dict) -> list[tuple[str, int]]:
    """The relay-log places a skip passed over: the counter's one event, or an executed GTID's whole group."""
    if "relay_pos" in o:
        return [(o["relay_file"], o["relay_pos"])]
    return [(f, pos) for f, pos in o.get("events", ())]


def _applies_by_place(applies: list[dict]) -> dict[tuple[str, int], list[tuple[int, int]]]:
    """Per relay-log place, its applies and skips as (line, t), in trace order."""
    by: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for a in sorted(applies, key=itemgetter("_line")):
        by.setdefault((a["relay_file"], a["relay_pos"]), []).append((a["_line"], a["t"]))
    return by


def _last_passes(done: dict, relays: Seq) -> tuple[list[int], list[int]]:
    """The relays by the line of their place's last apply or skip: those lines in order and, for
    each, the least relay index of it and those after it; past the end, len(relays)."""
    by_last = sorted((done[place][-1][0], i) for i, r in enumerate(relays) if (place := (r["file"], r["pos"])) in done)
    firsts = [len(relays)] * (len(by_last) + 1)
    for k in range(len(by_last) - 1, -1, -1):
        firsts[k] = min(by_last[k][1], firsts[k + 1])
    return [line for line, _ in by_last], firsts


def _first_between(lines: list[int], lo: int, hi: int) -> int | None:
    """The first of sorted trace lines strictly between lo and hi."""
    i = bisect_right(lines, lo)
    return lines[i] if i < len(lines) and lines[i] < hi else None


def index(v: TraceView) -> DelayIndex:
    return v.memo("delay.index", lambda: DelayIndex(v))


def _by_place(relays) -> dict[tuple[str, str, int], list[dict]]:
    out: dict[tuple[str, str, int], list[dict]] = {}
    for r in relays:
        out.setdefault((r["node"], r["file"], r["pos"]), []).append(r)
    return out


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


def judge_due(v: TraceView, check: Check, a: dict, due: int, tight: bool, what: str) -> None:
    """Safety (not before due) and, where the read time is known, tightness (not later than needed)."""
    tol = v.resolution_us
    begin = begin_of(a)
    ok = begin + tol >= due
    if not check.judge(ok, lambda: f"{a['node']} began {a['type']} of {a['trx']} at {seconds(begin)} but it was due at {seconds(due)} ({what})", a) \
            or not tight or a.get("read") is None:
        return
    latest = max(a["read"], due)
    check.judge(begin <= latest + tol,
                lambda: f"{a['node']} read {a['type']} of {a['trx']} at {seconds(a['read'])}, due {seconds(due)}, but began only at {seconds(begin)} ({what})", a)


def gtid_applies(v: TraceView) -> list[dict]:
    """The applies of events with a GTID, found once: most delay checks judge only these."""
    return v.memo("delay.gtid_applies", lambda: [a for a in v.kind("apply") if a.get("gtid") is not None])


def status_samples(v: TraceView, node: str) -> Seq:
    return v.of_node(node, "status")


def repositions(x: dict) -> bool:
    """A CHANGE MASTER to a new place (a binlog position, the slave's last group ID, or MariaDB's
    MASTER_USE_GTID: sql_repl.cc change_master purges the relay logs, and the next connect asks by
    GTID): the replica's position moves and its relay log is thrown away."""
    return x["kind"] == "stmt" and x["op"] == "change_master" and x.get("errno") is None and (
        "master_log_file" in x or bool(x.get("connect_using_group_id")) or x.get("master_use_gtid") is not None)


def stmts(v: TraceView, op: str):
    return (s for s in v.kind("stmt") if s["op"] == op)


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


def running_samples(v: TraceView) -> list[dict]:
    """The samples with the SQL thread running, found once for the checks of its state."""
    return v.memo("delay.running_samples", lambda: [s for s in v.kind("status") if s["Slave_SQL_Running"] == "Yes"])

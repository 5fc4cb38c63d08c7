"""The parallel applier: one check per requirement of spec/requirements/parallel.toml.

A replica's `parallel` observation says, at each start of its SQL thread, how many workers it runs
and whether they keep commit order; its `visible` observations carry the worker that committed each
group. The source's `binlog` observations give the order the source wrote the groups in. Nothing
of the model is read: a real server's trace with these observations is judged the same way.
"""
from __future__ import annotations

import bisect
import heapq
from collections import Counter

from replcheck.spec import formats as F
from replcheck.spec.formats import US

from .core import Check, TraceView, checks, seconds
from .filter import kept_out
from .lag import GRANULARITY_US, SBM, connected, sample_ids, with_workers
from .parallel_lag import clocks_stepped_us, format_descriptions_read, group_reads, lag_floors, older, queued_spans, waited_for
from .recovery import applied_counts, sources_at_end


def _binlog_places(v: TraceView) -> tuple[tuple[dict, dict], dict[str, tuple[dict, dict]]]:
    """(order, starts) where the first server that binlogged each transaction wrote it (replicas
    binlog it later, with log_slave_updates), and each server's own: a replica's START SLAVE UNTIL
    position is in its own source's binlog, an intermediate master's in a chain (its
    log_slave_updates binlog numbers and offsets are not the origin's). order: trx -> its last
    event's (binlog number, end) and when; starts: trx -> its first event's (binlog number, position)."""
    def build() -> tuple:
        first: tuple[dict, dict] = ({}, {})
        by_server: dict[str, tuple[dict, dict]] = {}
        for o in v.kind("binlog"):
            if o.get("trx") is None:
                continue
            for order, starts in (first, by_server.setdefault(o["node"], ({}, {}))):
                if o.get("last"):
                    order.setdefault(o["trx"], (F.binlog_number(o["file"]), o["end"], o["t"]))
                if o.get("idx") == 0:
                    starts.setdefault(o["trx"], (F.binlog_number(o["file"]), o["pos"]))
        return first, by_server
    return v.memo("parallel.binlogs", build)


def _binlog_order(v: TraceView) -> dict[str, tuple[int, int, int]]:
    """trx -> where its first server wrote its last event (binlog number, end) and when."""
    return _binlog_places(v)[0][0]


def _binlog_starts(v: TraceView) -> dict[str, tuple[int, int]]:
    """trx -> where its first server wrote its first event (binlog number, position)."""
    return _binlog_places(v)[0][1]


def _origins(v: TraceView) -> dict[str, str]:
    """trx -> the server that binlogged it first, whose binlog _binlog_order's positions are in."""
    def build() -> dict:
        out: dict = {}
        for o in v.kind("binlog"):
            if o.get("trx") is not None and o.get("last"):
                out.setdefault(o["trx"], o["node"])
        return out
    return v.memo("parallel.origins", build)


def _groups(v: TraceView) -> Counter:
    """trx -> how many groups its source wrote of it: one, or one per statement of a transaction of
    non-transactional statements (each MyISAM statement is its own group, with its own GTID)."""
    def build() -> Counter:
        origin = _origins(v)
        return Counter(o["trx"] for o in v.kind("binlog") if o.get("last") and o.get("trx") is not None
                       and origin.get(o["trx"]) == o["node"])
    return v.memo("parallel.groups", build)


def _stamped(v: TraceView) -> dict[str, int]:
    """trx -> the true time its first event's timestamp names (SET TIMESTAMP may put it ahead of the
    write). Seconds_Behind_Master counts from the timestamp, and one ahead of the replica's clock
    shows 0: MySQL rpl_replica.cc show_slave_status stores max(0L, time_diff)."""
    def build() -> dict:
        epoch, out = v.header.get("epoch_us", 0), {}
        for o in v.kind("binlog"):
            if o.get("trx") is not None and o.get("idx") == 0 and o.get("when") and o["trx"] not in out:
                out[o["trx"]] = o["when"] * US - v.offset_at(o["node"], o["t"], o["_line"]) - epoch
        return out
    return v.memo("parallel.stamped", build)


def _runs(v: TraceView, node: str) -> list[tuple[dict, list[dict]]]:
    """The node's SQL thread runs with workers: each `parallel` start with the replicated groups
    committed after it (a polled server's `visible` names no worker)."""
    order = _binlog_order(v)
    runs: list[tuple[dict, list[dict]]] = []
    for o in v.of_node(node):
        if o["kind"] in ("parallel", "crash", "restart"):
            runs.append((o if o["kind"] == "parallel" else {"workers": 0}, []))
        elif o["kind"] == "visible" and o["trx"] in order and runs:
            runs[-1][1].append(o)
    return [(p, commits) for p, commits in runs if p.get("workers")]


def _parallel_nodes(v: TraceView) -> list[str]:
    return sorted({o["node"] for o in v.kind("parallel") if o.get("workers")})


def _domain(o: dict) -> int:
    return F.parse_gtid(o["gtid"])[0] if o.get("gtid") else 0


@checks("PARALLEL.COMMIT.ORDER", kinds=("parallel",))
def commits_in_binlog_order(v: TraceView, check: Check) -> None:
    """Where commit order is kept, no group of a domain becomes visible after one its source wrote
    later (commits seen at the same instant are not ordered by the trace)."""
    order, origin = _binlog_order(v), _origins(v)
    # a transaction of MyISAM statements is a group per statement, each with its own GTID: a commit is
    # placed by its own group's last event (an equal place: groups the trace does not tell apart)
    group = {(o["trx"], o.get("gtid")): (F.binlog_number(o["file"]), o["end"])
             for o in reversed(v.kind("binlog")) if o.get("trx") is not None and o.get("last")}
    for node in _parallel_nodes(v):
        for p, commits in _runs(v, node):
            if not p.get("preserve_commit_order"):
                continue
            # per domain of each origin, the commit the source wrote last among those seen, and its place:
            # two servers' binlog positions do not order their groups (the old primary's and the new one's)
            latest: dict[tuple, tuple[dict, tuple]] = {}
            for c in commits:
                d, here = _domain(c), group.get((c["trx"], c.get("gtid")), order[c["trx"]][:2])
                prev, there = latest.get((origin.get(c["trx"]), d), (None, None))
                if prev is not None:
                    check.judge(there <= here or prev["t"] == c["t"],
                                f"{node} commits {c['trx']} after {prev['trx']}, though its source wrote {prev['trx']} after it "
                                f"(domain {d})", prev, c)
                if prev is None or here > there:
                    latest[(origin.get(c["trx"]), d)] = (c, here)


@checks("PARALLEL.SBM.PENDING", kinds=("parallel",))
def never_caught_up_with_workers_behind(v: TraceView, check: Check) -> None:
    """SBM 0 on a parallel replica with both threads running: no group handed to a worker (all its
    events applied by the coordinator) is uncommitted that was written 2 s or more before."""
    nodes = set(_parallel_nodes(v))
    order, stamped, origin = _binlog_order(v), _stamped(v), _origins(v)
    # when each group's lag starts to count: its write, or its timestamp where that is later
    since = {trx: max(w, stamped.get(trx, w)) for trx, (_, _, w) in order.items()}
    old_enough = GRANULARITY_US + v.resolution_us
    judged = sample_ids(v)
    for node in nodes:
        # One sweep of the node's samples in time order: the groups handed over before each, by
        # when they were written (not yet old enough), then those old enough by binlog order (the
        # earliest is the one to name); a group committed or given up leaves when it comes up.
        spans = sorted((a, i, trx, c) for i, (trx, a, c) in enumerate(queued_spans(v, node)) if trx in order)
        # ahead: the latest timestamp ahead of its write among the groups read so far; a read or the
        # checkpoint may have taken it, and the groups queued behind it show 0 until it is 2 s old
        reads, r = group_reads(v, node, order), 0
        k, young, old, ahead = 0, [], [], None
        # fde: the earliest write of a master's format description read since the timestamp last started again,
        # which the lag may count from instead of a group (format_descriptions_read); the latest is ahead too
        fdes, f, fde = format_descriptions_read(v, node), 0, None
        for s in v.of_node(node, "status"):
            if id(s) not in judged or not (connected(s) and s[SBM] == 0):
                continue
            t = s["t"]
            while f < len(fdes) and fdes[f][0] < s["_line"]:
                w = fdes[f][1]
                fde = None if w is None else older(w, fde)
                ahead = ahead if w is None else w if ahead is None else max(ahead, w)
                f += 1
            while k < len(spans) and spans[k][0] < t:
                _, i, trx, c = spans[k]
                heapq.heappush(young, (since[trx], i, trx, c))
                k += 1
            while r < len(reads) and reads[r][0] <= s["_line"]:
                trx = reads[r][1]
                if since[trx] > order[trx][2]:
                    ahead = since[trx] if ahead is None else max(ahead, since[trx])
                r += 1
            while young and t - young[0][0] >= old_enough:
                _, i, trx, c = heapq.heappop(young)
                heapq.heappush(old, (order[trx][:2], i, trx, c))
            while old and old[0][3] is not None and old[0][3] <= t:
                heapq.heappop(old)
            # a clock step since the difference was measured shifts what the lag shows by as much
            # (a replica's clock stepped back shows 0 for an old group): the age as it counts
            if old and (ahead is None or t - ahead >= old_enough) and \
                    t - since[old[0][2]] - clocks_stepped_us(v, node, s, older(since[old[0][2]], fde),
                                                              {origin.get(old[0][2])} - {None}) >= old_enough:
                trx = old[0][2]
                check.judge(False, f"{node} at {seconds(t)} shows {SBM} 0 but its workers have not committed {trx}, "
                                   f"written {(t - since[trx]) / 1e6:.3f} s ago", s)
            else:
                check.judge(True, "", s)


@checks("PARALLEL.RECOVERY.GAPS", kinds=("parallel",))
def resumes_without_gap_or_repeat(v: TraceView, check: Check) -> None:
    """After a crash of a replica with workers: no group committed twice, and every group its
    source wrote before the last one it had committed at the crash is committed by the end."""
    order = _binlog_order(v)
    sources = sources_at_end(v)
    for node in _parallel_nodes(v):
        crashes = [o for o in v.of_node(node) if o["kind"] == "crash"]
        if not crashes or node not in sources:
            continue
        counts = applied_counts(v, node)
        groups = _groups(v)
        for trx, n in sorted(counts.items()):
            if trx in order:
                check.judge(n <= groups[trx], f"{node} commits {trx} {n} times across its crash"
                            + (f" (its source wrote {groups[trx]} groups of it)" if groups[trx] > 1 else ""),
                            *[o for o in v.of_node(node) if o["kind"] == "visible" and o["trx"] == trx][:2])
        crash = crashes[-1]
        held = [o["trx"] for o in v.of_node(node) if o["kind"] == "visible" and o["t"] <= crash["t"] and o["trx"] in order]
        if not held:
            continue
        high = max(order[t][:2] for t in held)
        # passed over, or never its to apply: what its filters keep out (a marked group its master never
        # sent it, replicate_events_marked_for_skip = FILTER_ON_MASTER, leaves no observation on it)
        passed = {o.get("trx") for o in v.of_node(node) if o["kind"] in ("skip", "filtered")} | kept_out(v, node)
        lost = {o["trx"] for o in v.kind("commit") if o.get("errno") is not None}
        # only what its source binlogged is the node's to apply: a sibling's own commit is never
        # sent to it (positions in another server's binlog do not order it against its own groups)
        sent = {o.get("trx") for o in v.of_node(sources[node], "binlog")}
        # A group held past by another domain's commit (MariaDB's domains commit apart) whose relay log was thrown away
        # after the crash (a GTID start: start_slave_threads) is fetched again by GTID, per domain: owed only once relayed
        # again (its IO thread may never run: DOMAIN.* judge the connect). (After the first crash since the last commit
        # held: a second crash before anything was fetched again leaves the same gap, and the relay log the first restart threw away.)
        last_held = max(o["_line"] for o in v.of_node(node) if o["kind"] == "visible" and o["trx"] in held)
        first = next((c for c in crashes if c["_line"] > last_held), crash)
        after = [o for o in v.of_node(node) if o["_line"] > first["_line"]]
        last = next((o for o in reversed(after) if o["kind"] == "status" and "Slave_SQL_Running" in o), None)
        if last is None or last["Slave_SQL_Running"] != "Yes":
            continue  # not applying at the end (never back up, or its SQL thread stopped again): nothing is owed
        # (relayed again after the last time the relay log was thrown away: an earlier copy went with it)
        discards = [o["_line"] for o in after if o["kind"] == "relay_log_recovery"]
        dropped = bool(discards)
        refetched = {o.get("trx") for o in after if o["kind"] == "relay" and o.get("last") and o["_line"] > max(discards, default=0)}
        for trx, (num, end, _) in sorted(order.items(), key=lambda x: x[1]):
            owed = trx in sent and trx not in passed and trx not in lost and (not dropped or trx in refetched)
            if (num, end) < high and owed:
                check.judge(counts.get(trx, 0) >= 1, f"{node} crashed holding groups past {trx}, and never commits it", crash)


@checks("PARALLEL.UNTIL", kinds=("parallel",))
def until_stops_at_the_position(v: TraceView, check: Check) -> None:
    """A START SLAVE UNTIL run of a replica with workers: by its stop at the position every group
    written up to it is committed (skipped and filtered ones aside), and none written after it is
    committed before the SQL thread starts again."""
    first, by_server = _binlog_places(v)
    for node in _parallel_nodes(v):
        until, workers, held, source = None, 0, set(), None
        order, starts = first
        passed = {o.get("trx") for o in v.of_node(node) if o["kind"] in ("skip", "filtered")}
        for o in v.of_node(node):
            if o["kind"] in ("relay", "apply") and o.get("source"):
                source = o["source"]
            if o["kind"] == "parallel":
                workers = o.get("workers", 0)
            elif o["kind"] == "visible":
                held.add(o["trx"])
                # a group begun before the position is finished: inside a group the UNTIL test takes the
                # group's start (slave.cc exec_relay_log_event: is_until_satisfied(rli->is_in_group() ?
                # rli->group_master_log_pos : ...), MariaDB and MySQL alike)
                if until is not None and workers and o["trx"] in starts and starts[o["trx"]] >= until[0]:
                    check.judge(False, f"{node} commits {o['trx']}, written after its UNTIL position {until[1]}", until[2], o)
            elif o["kind"] == "stmt" and o.get("op") == "start_slave" and o.get("errno") is None and not o.get("warning") \
                    and o.get("thread") in (None, "sql"):
                u = o.get("until")
                # the run's applier is the `parallel` observation its start logs after the statement
                # (none where it stays serial): `workers` is read when the run is judged
                until = ((F.binlog_number(u["master_log_file"]), u["master_log_pos"]), u, o) \
                    if u and "master_log_file" in u else None
                # positions as the source the replica last read from wrote them (the origin's before any)
                order, starts = by_server.get(source, first)
            elif o["kind"] == "sql_stop" and until is not None and o.get("reason") == "until" and workers:
                owed = sorted((x for x in order if order[x][:2] <= until[0] and order[x][2] <= o["t"]
                               and x not in held and x not in passed), key=lambda x: order[x])
                check.judge(not owed, lambda: f"{node} stopped at its UNTIL position {until[1]} without {owed[0]}", until[2], o)
                until = None
            elif o["kind"] in ("crash", "sql_stop"):
                until = None


@checks("PARALLEL.UNTIL.GAPS")
def until_after_gaps_stops_with_them_filled(v: TraceView, check: Check) -> None:
    """START SLAVE UNTIL SQL_AFTER_MTS_GAPS after a crash: by its UNTIL stop every group its source
    wrote before the last one the replica had committed at the crash is committed (skipped and
    filtered ones aside), and none written after that one was committed since the START; with no
    crash before it (no gaps), nothing is."""
    order = _binlog_order(v)
    for node in sorted({o["node"] for o in v.kind("stmt") if o.get("op") == "start_slave"}):
        starts = [o for o in v.of_node(node, "stmt") if o.get("op") == "start_slave" and o.get("errno") is None
                  and not o.get("warning") and (o.get("until") or {}).get("sql_after_mts_gaps")]
        if not starts:  # most replicas never run one: nothing to gather for them
            continue
        obs = v.of_node(node)
        passed = {o.get("trx") for o in obs if o["kind"] in ("skip", "filtered")}
        lost = {o["trx"] for o in v.kind("commit") if o.get("errno") is not None}
        for start in starts:
            stop = next((o for o in obs if o["_line"] > start["_line"] and o["kind"] in ("sql_stop", "crash")), None)
            if stop is None or stop["kind"] != "sql_stop" or stop.get("reason") != "until":
                continue  # stopped otherwise (STOP SLAVE, an error, a crash), or still running at the end
            crash = next((o for o in reversed(obs) if o["_line"] < start["_line"] and o["kind"] == "crash"), None)
            held = [o["trx"] for o in obs if o["kind"] == "visible" and crash is not None
                    and o["_line"] < crash["_line"] and o["trx"] in order]
            high = max((order[t][:2] for t in held), default=None)
            done = {o["trx"] for o in obs if o["kind"] == "visible" and o["_line"] < stop["_line"]}
            owed = sorted((x for x in order if high is not None and order[x][:2] < high and x not in done
                           and x not in passed and x not in lost), key=lambda x: order[x])
            check.judge(not owed, lambda: f"{node} stopped at UNTIL SQL_AFTER_MTS_GAPS without {owed[0]}, below the gaps "
                                          f"its crash left", start, stop)
            for c in (o for o in obs if o["kind"] == "visible" and start["_line"] < o["_line"] < stop["_line"]
                      and o["trx"] in order):
                check.judge(high is not None and order[c["trx"]][:2] <= high,
                            f"{node} commits {c['trx']} before its UNTIL SQL_AFTER_MTS_GAPS stop, past the gaps", start, c)


def _written(v: TraceView) -> dict[str, tuple[int, str, int, int | None, int]]:
    """trx -> the timestamp (s) of its first event on the server that wrote it, that server, the
    line, its immediate_commit_timestamp (µs, None where the server writes none) and the time."""
    def build() -> dict:
        out: dict = {}
        for o in v.kind("binlog"):
            if o.get("trx") is not None and o.get("idx") == 0 and o.get("when") is not None and o["trx"] not in out:
                out[o["trx"]] = (o["when"], o["node"], o["_line"], o.get("ict"), o["t"])
        return out
    return v.memo("parallel.written", build)


@checks("PARALLEL.DELAY", kinds=("parallel",))
def workers_wait_the_delay(v: TraceView, check: Check) -> None:
    """A worker of a delayed replica begins a group (its `start`; a polled trace: its commit) no
    earlier than the group's timestamp plus MASTER_DELAY, on the writer's clock. Judged where the
    delay never changed and the two clocks agreed from the write to the start (the delay rules
    compensate a difference differently)."""
    written = _written(v)
    epoch = v.header.get("epoch_us", 0)
    changed = {o["node"] for o in v.kind("stmt") if o.get("op") == "change_master"}
    for node in _parallel_nodes(v):
        delay = v.channels.get(node, {}).get("delay", 0)
        if not delay or node in changed:
            continue
        wl7318 = v.nodes.get(node, {}).get("delay_rule") == "wl7318"
        for p, commits in _runs(v, node):
            if not p.get("workers"):
                continue
            for c in commits:
                if c["trx"] not in written:
                    continue
                when, writer, line, ict, at = written[c["trx"]]
                begin = c.get("start", c["t"])
                if not _clocks_agree(v, node, begin, (writer, at, line)):
                    continue
                # WL#7318 waits from the commit timestamp, which SET TIMESTAMP does not move (as
                # WL344.WAIT.RULE's due, properties/delay_timing.py)
                stamp = ict // US * US if ict is not None and wl7318 else when * US
                due = stamp - v.offset_at(writer, begin) - epoch + delay * US
                check.judge(begin + v.resolution_us >= due,
                            f"{node}'s worker began {c['trx']} at {seconds(begin)}, before its MASTER_DELAY {delay} ran out at {seconds(due)}", c)


def _clocks_agree(v: TraceView, node: str, begin: int, write: tuple[str, int, int]) -> bool:
    """The writer's clock when it wrote the group, the node's when its worker began it, and both
    clocks at the node's last clock query before (the clock_diff_with_master its wait counts with,
    MariaDB sql/slave.cc sql_delay_event) stand at one offset: a step of either between them moves
    the server's due by as much, which WL344.CLOCK.COMPENSATE judges."""
    writer, at, line = write
    queries = v.memo(("parallel.clock_queries", node), lambda: list(v.of_node(node, "clock_query")))
    n = bisect.bisect_right(queries, begin, key=lambda q: q["t"])
    last = queries[n - 1:n] if n else []
    points = [(writer, at, line), (writer, begin, None)] + [(n, q["t"], q["_line"]) for q in last
                                                           for n in (node, q.get("source", writer))]
    return all(v.offset_at(n, t, ln) == v.offset_at(node, begin) for n, t, ln in points)


@checks("PARALLEL.SBM.VALUE", kinds=("parallel",))
def lag_counted_from_the_last_commit_or_idle_read(v: TraceView, check: Check) -> None:
    """On a parallel replica with both threads running, Seconds_Behind_Master is never more than the
    time since the newest of: the groups it committed, and the group it read after its workers idled."""
    judged = sample_ids(v)
    for node in _parallel_nodes(v):
        floors = iter(lag_floors(v, node))
        floor, since, writers, nxt = None, None, set(), next(floors, None)
        for s in v.of_node(node, "status"):
            while nxt is not None and nxt[0] < s["_line"]:
                floor = nxt[1] if nxt[1] is None or floor is None else max(floor, nxt[1])
                since = nxt[2] if nxt[2] is None or since is None else min(since, nxt[2])
                writers = set() if nxt[1] is None else writers | {nxt[3]} - {None}
                nxt = next(floors, None)
            if id(s) not in judged or not connected(s) or not isinstance(s[SBM], int) or floor is None or not with_workers(v, s):
                continue
            most = max(0, s["t"] - floor) / US  # a timestamp ahead of the replica's clock shows 0
            if (waited := waited_for(v, s)) is not None:
                most = max(most, (s["t"] - waited) / US)
            check.judge(s[SBM] <= most + 1 + (v.sample_slack_us(s) + clocks_stepped_us(v, node, s, since, writers)) / US,
                        f"{node} at {seconds(s['t'])} shows {SBM} {s[SBM]}, but it committed or read after idling a group "
                        f"written {most:.3f} s before", s)

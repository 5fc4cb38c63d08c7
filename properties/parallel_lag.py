"""The parallel applier's lag: where Seconds_Behind_Master of a replica with workers may count
from (the groups read and queued, the format descriptions read, the clock steps between), for
properties/parallel.py's PARALLEL.SBM.* checks."""
from __future__ import annotations

from replcheck.spec.formats import US

from .core import TraceView
from .delay_timing import STATE_WAITING, index
from .lag import in_hand, written_us
from .recovery import source_at


def group_reads(v: TraceView, node: str, order: dict) -> list[tuple[int, str]]:
    """(line, trx): the node's SQL thread read the group's first event there, or by then: applied,
    skipped, or held for MASTER_DELAY at a sample. MariaDB's exec_relay_log_event (slave.cc) may
    take its timestamp as it reads it, before the delay wait and before shall_skip passes it over
    (sql_slave_skip_counter), and keeps it across STOP/START SLAVE: a group stamped ahead that was
    never handed over still makes the lag show 0 (only forward: MDEV-30619's `< ev->when`)."""
    out = [(o["_line"], o["trx"]) for o in v.of_node(node)
           if o["kind"] in ("apply", "skip") and o.get("idx") == 0 and o.get("trx") in order]
    for s in v.of_node(node, "status"):
        if s.get("Slave_SQL_Running_State") == STATE_WAITING and (h := in_hand(v, s)) is not None \
                and h.get("idx") == 0 and h.get("trx") in order:
            out.append((s["_line"], h["trx"]))
    return sorted(out)


def older(a: int, b: int | None) -> int:
    return a if b is None else min(a, b)


def format_descriptions_read(v: TraceView, node: str) -> list[tuple[int, int | None]]:
    """(line, write time) of each master's format description the node's SQL thread read; None where
    last_master_timestamp starts again (a restart builds Relay_log_info anew, CHANGE MASTER and RESET
    SLAVE reset it: handle_slave_sql, sql/slave.cc). MariaDB counts the lag from such a read after a
    start or its workers idled (lag_floors): its source's clock stepped back since it was written
    (dated its binlog's start), its timestamp is ahead of the groups read with it, which show 0 as
    they wait, as the step's size (clocks_stepped_us from its write)."""
    out: list[tuple[int, int | None]] = []
    for o in v.of_node(node):
        if o["kind"] in ("restart", "crash") or (
                o["kind"] == "stmt" and o["op"] in ("change_master", "reset_slave") and o.get("errno") is None):
            out.append((o["_line"], None))
        elif o["kind"] == "apply" and o.get("when") and o["type"] == "FORMAT_DESCRIPTION_EVENT" and not o.get("relay_log"):
            out.append((o["_line"], _fde_written(v, o)))
    return out


def queued_spans(v: TraceView, node: str) -> list[tuple[str, int, int | None]]:
    """(trx, from, to): a group with a worker, from when the coordinator applied its last event (it
    handed the group over whole) to when the node committed it, or gave it up (a rollback at a
    stop, a crash: the worker's group is gone with it), or passed it over (skipped, filtered); to
    None: to the end of the trace. A polled trace may show the commit before the apply at the same
    instant: the commit then closes the span it opens."""
    visible: dict[str, list[int]] = {}
    for o in v.of_node(node):
        if o["kind"] == "visible" and o.get("trx") is not None:
            visible.setdefault(o["trx"], []).append(o["t"])
    spans: list = []
    open_: dict[str, int] = {}
    workers = 0
    for o in v.of_node(node):
        trx = o.get("trx")
        if o["kind"] == "parallel":
            workers = o.get("workers", 0)
        elif o["kind"] == "apply" and workers and trx is not None and o.get("last") and trx not in open_:
            if o["t"] in visible.get(trx, ()):
                spans.append((trx, o["t"], o["t"]))
            else:
                open_[trx] = o["t"]
        elif o["kind"] in ("visible", "rollback", "skip", "filtered") and trx in open_:
            spans.append((trx, open_.pop(trx), o["t"]))
        elif o["kind"] == "crash":
            spans += [(x, a, o["t"]) for x, a in open_.items()]
            open_ = {}
    return spans + [(x, a, None) for x, a in open_.items()]


def waited_for(v: TraceView, s: dict) -> int | None:
    """When the group the SQL thread holds for MASTER_DELAY at the sample was written, where the trace
    shows no apply of it to place its read (a STOP SLAVE broke the wait). Read with the workers idle, it
    set last_master_timestamp before the wait (MySQL rpl_replica.cc, exec_relay_log_event: an empty GAQ
    takes the first event's timestamp, before apply_event_and_update_pos calls sql_delay_event; MariaDB
    slave.cc, exec_relay_log_event after MDEV-29639), and SET TIMESTAMP may date it before the last commit."""
    if s.get("Slave_SQL_Running_State") != STATE_WAITING or (r := in_hand(v, s)) is None or r.get("idx") != 0:
        return None
    if index(v).applies_of(s["node"], r["file"], r["pos"]):
        return None  # its apply places the read: one of lag_floors's floors
    return written_us(v, r)


def clocks_stepped_us(v: TraceView, node: str, s: dict, floor: int, writers: set[str] | frozenset[str] = frozenset()) -> int:
    """How far the clocks moved that the lag shown at the sample counts with: time(0) -
    last_master_timestamp - clock_diff_with_master (MySQL rpl_replica.cc show_slave_status_send_data,
    MariaDB slave.cc send_show_master_info_data), the difference taken at the IO thread's connect
    (get_master_version_and_clock). The replica's clock stepped since it was taken, or its source's
    between the connect and the write of the group the lag counts from (either way round), shifts
    the lag by as much until the next connect (as SBM.DELAY's count_moved has it). Down a chain the
    timestamp is the originating master's (the source's SQL thread binlogs the event with its `when`)
    while the difference is the source's: their clocks' difference counts whole."""
    # the clock query where the trace shows it (a step may come between it and the connect)
    last = v.of_node(node, "clock_query" if v.of_node(node, "clock_query") else "connect").last_before(s["_line"])
    since, connect_t = (last["_line"], last["t"]) if last is not None else (0, 0)
    moved = sum(abs(o.get("delta_us", 0)) for o in v.of_node(node, "clock_step").between(since, s["_line"]))
    # the server the difference was taken against: a failover or CHANGE MASTER may have moved the
    # replica off its topology's source
    source = (last or {}).get("source") or source_at(v, node, s["_line"])
    if source is not None:
        moved += sum(abs(o.get("delta_us", 0)) for o in v.of_node(source, "clock_step").before(s["_line"])
                     if o["t"] >= min(floor, connect_t))
        moved += max((abs(v.offset_at(source, connect_t) - v.offset_at(w, floor)) for w in writers - {source}), default=0)
    return moved


def lag_floors(v: TraceView, node: str) -> list[tuple[int, int | None, int | None, str | None]]:
    """(line, written, write time, writer) in trace order: from that line on, last_master_timestamp is at least the
    timestamp written at `written` (true µs); None: a start, a stop or a new source starts it again.
    A parallel applier moves it as groups commit (MariaDB rpl_rli.cc, Relay_log_info::stmt_done: "In
    the parallel case, we only update the Seconds_Behind_Master at the end of a transaction"; MySQL
    rpl_replica.cc, mta_checkpoint_routine: the oldest group still queued, 0 with none), and at a read
    only once no group is with a worker: the first event with a timestamp read after that sets it
    (MariaDB slave.cc, exec_relay_log_event, after MDEV-17516/MDEV-29639; MySQL rpl_replica.cc: "when
    last_master_timestamp is 0 (which indicates that GAQ is empty ...) we need to initialize it with a
    timestamp from the first event to be executed in parallel"). Only a group's first event gives a
    floor there: a format description (MariaDB counts the master's) may take that read instead."""
    out: list[tuple[int, int | None, int | None, str | None]] = []
    first: dict[str, dict] = {}
    queued: list[str] = []  # handed to the workers, in the order the coordinator handed them over
    done: set[str] = set()  # committed, not yet retired: a group ahead of it is still with a worker
    idle_since: int | None = -1  # the workers hold nothing since then; None: a read has taken the timestamp
    fde: int | None = None  # the timestamp of the master's format description read after the idle, if any
    for o in v.of_node(node):
        kind, trx = o["kind"], o.get("trx")
        if kind in ("restart", "crash", "restore", "sql_stop", "parallel") or (
                kind == "stmt" and o["op"] in ("change_master", "reset_slave") and o.get("errno") is None):
            queued, done, idle_since, fde = [], set(), o["t"], None  # (a refused statement changes nothing)
            out.append((o["_line"], None, None, None))
        elif kind == "apply" and o.get("when") and o["type"] == "FORMAT_DESCRIPTION_EVENT" and not o.get("relay_log"):
            # the master's format description (MariaDB counts it, slave.cc event_can_update_last_master_timestamp;
            # its timestamp is the binlog's start): read as the SQL thread starts, it takes the read after the
            # start (a start left no floor), and the group read next gives none
            read = o["t"] if o.get("read") is None else o["read"]
            if not queued and idle_since is not None and idle_since < read and (w := written_us(v, o)) is not None:
                # read after the workers idled (the IO thread reconnected): MariaDB counts from it, a new
                # count; MySQL from the group read next, which still may (whichever is older: fde). A
                # second one before any group (a dump begun in an older binlog sends its FDE, then the
                # next binlog's) moves the count only if the SQL thread caught up between the two: the
                # first read negated sql_thread_caught_up with its update (MariaDB slave.cc,
                # exec_relay_log_event, MDEV-30619), so either may be what it counts from
                w = w if fde is None else min(w, fde)
                out += [(o["_line"], None, None, None), (o["_line"], w, *_write_time(v, o, w))]
                fde = w
            elif not queued and idle_since is not None and idle_since < read:
                if _floor_now(out) is not None:
                    fde = _floor_now(out)  # sent again, undated: MySQL counts from the next read, MariaDB goes on
                else:
                    # sent again with no timestamp taken since the count started again (a restart leaves
                    # last_master_timestamp 0): MariaDB takes its binlog's start, older than the groups
                    # read next, which then move nothing (slave.cc, exec_relay_log_event, MDEV-30619: the
                    # read negated sql_thread_caught_up)
                    fde = _fde_written(v, o)
                    out += [(o["_line"], None, None, None), (o["_line"], fde, *_write_time(v, o, fde))]
            elif not queued and idle_since is not None and idle_since <= read:
                idle_since = None
            elif not queued and (w := _fde_written(v, o)) < (_floor_now(out) or w):
                # read with no group at the workers after a read took the timestamp: the SQL thread
                # caught up inside a group whose rest its IO thread, connected again, fetches after the
                # master's format description, dated its binlog's start. The server lets a read move
                # the timestamp with its SQL thread caught up and its workers idle (slave.cc,
                # exec_relay_log_event, MDEV-30619), which no trace shows, and only forward there
                # ("lmt < ev->when" in that patch's review): the count may be from either, the older
                # allowed
                out += [(o["_line"], None, None, None), (o["_line"], w, *_write_time(v, o, w))]
        elif kind == "apply" and o.get("when") and not o.get("relay_log"):
            # (the relay log's own events, a rotation's included, move nothing: MariaDB slave.cc,
            # event_can_update_last_master_timestamp excludes is_relay_log_event)
            if trx is not None and o.get("idx") == 0:
                first[trx] = o
            read = o["t"] if o.get("read") is None else o["read"]  # a polled trace does not know when it was read
            if not queued and idle_since is not None and idle_since < read:
                idle_since = None  # a read in the same instant as the last commit may precede it
                if trx is not None and o.get("idx") == 0 and (w := written_us(v, o)) is not None:
                    # the read sets the timestamp, older than the last commit's or not (a long
                    # transaction's GTID event carries its start): a new count, not a later floor
                    # from the read on, which came before this observation where the group waited
                    # for MASTER_DELAY (its read's line: what let the thread read it, in its µs)
                    at = index(v).read_line(o) or o["_line"]
                    w = w if fde is None else min(w, fde)
                    out += [(at, None, None, None), (at, w, *_write_time(v, o, w))]
                fde = None
            if trx is not None and o.get("last"):
                queued.append(trx)
        elif kind in ("visible", "rollback", "skip", "filtered") and trx in queued:
            if kind == "visible":
                done.add(trx)
            else:
                queued.remove(trx)
            newest = None
            while queued and queued[0] in done:  # the checkpoint retires the committed head of the queue
                newest = queued.pop(0)
            if not queued:
                idle_since = o["t"]
            if newest in first and (w := written_us(v, first[newest])) is not None:
                out.append((o["_line"], w, *_write_time(v, first[newest], w)))
    return sorted(out, key=lambda f: f[0])  # stable: a reset stays before the floor of its line


def _fde_written(v: TraceView, o: dict) -> int:
    """When a master's format description was written, by its timestamp. Sent again at a reconnect
    (log_pos 0) it has no position of its own: it is the one its source wrote at the start of that
    binlog (MariaDB sql_repl.cc, send_format_descriptor_event reads it from the file), dated by the
    source's clock then, which may have stepped since; else the source's clock as it is read."""
    w = written_us(v, o)
    if w is not None:
        return w
    relayed = index(v).relay.get((o["node"], o.get("relay_file"), o.get("relay_pos")))
    started = None if relayed is None else next(
        (b for b in reversed(v.of_node(o["source"], "binlog").before(o["_line"]))
         if b["file"] == relayed.get("master_file") and b["type"] == "FORMAT_DESCRIPTION_EVENT"), None)
    at = (o["t"], o["_line"]) if started is None else (started["t"], started["_line"])
    return o["when"] * US - v.offset_at(o["source"], *at) - v.header.get("epoch_us", 0)


def _floor_now(out: list[tuple]) -> int | None:
    """The newest timestamp the floors since the last start of the count give."""
    now = None
    for f in reversed(out):
        if f[1] is None:
            return now
        now = f[1] if now is None else max(now, f[1])
    return now


def _write_time(v: TraceView, a: dict, written: int) -> tuple[int, str | None]:
    """When the group whose timestamp gives a floor was written: its timestamp's time, or its
    binlog write where that came first (SET TIMESTAMP ahead): a clock step of its source between
    then and the connect moves the lag (clocks_stepped_us); and the server whose clock stamped it."""
    o = index(v).origin_of(a)
    return (written, None) if o is None else (min(written, o["t"]), o["node"])

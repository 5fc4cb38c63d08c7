"""Trace properties of multi-source replication (MULTISOURCE.*): a replica's named connections
(MariaDB's connection_name) are independent, each keeps its own MASTER_DELAY, and with
gtid_ignore_duplicates a GTID two connections bring is applied once.

A named connection's observations carry `connection` (TraceView keeps them apart, in
`v.connected`, from what the other properties judge); a statement without a name addresses the
default connection ''. They read `relay`, `apply`, `skip`, `sql_stop`, `stmt` and `status`
observations and the header, never model internals.
"""
from __future__ import annotations

import bisect
from collections import Counter
from typing import Iterable

from .core import Check, TraceView, checks, seconds
from .delay import STATE_WAITING, begin_of

US = 1_000_000
STOPS_ALL = ("stop_all_slaves",)
# An SQL thread (or worker) waiting while another connection applies a group of its GTID's domain
# (rpl_slave_state::check_duplicate_gtid, MariaDB sql/rpl_gtid.cc, stage_gtid_wait_other_connection)
STATE_OTHER_CONNECTION = "Waiting for other master connection to process the same GTID"
# An SQL thread with nothing to do: what a connection waited for is then not held by it
IDLE_STATES = ("Slave has read all relay log; waiting for more updates", "Waiting for work from SQL thread", "")


def _named(v: TraceView) -> dict[str, list[str]]:
    """Per replica with named connections, their names in the topology's order."""
    out: dict[str, list[str]] = {}
    for node, conn in v.connections:
        out.setdefault(node, []).append(conn)
    return out


def _conn_obs(v: TraceView, node: str, conn: str) -> list[dict]:
    """The observations of one connection, in trace order: its tagged ones and the node's
    statements addressed to it (a statement without a name addresses '')."""
    def build():
        out: dict[tuple[str, str], list[dict]] = {}
        named = _named(v)
        for o in sorted(v.connected + [o for o in v.kind("stmt") if o["node"] in named], key=lambda o: o["_line"]):
            out.setdefault((o["node"], o.get("connection", "")), []).append(o)
        return out
    return v.memo("multisource.conn_obs", build).get((node, conn), [])


def _started(o: dict) -> bool:
    return o["kind"] == "stmt" and o.get("errno") is None and o["op"] == "start_slave" and o.get("thread") in (None, "sql")


def _stopped(o: dict) -> bool:
    return o["kind"] == "stmt" and o.get("errno") is None and o["op"] == "stop_slave" and o.get("thread") in (None, "sql")


def _applied(o: dict) -> str | None:
    """The GTID whose group an apply observation ends (committed: a group begun and rolled back by a
    crash or a stop is applied again, once)."""
    return o.get("gtid") if o["kind"] == "apply" and o.get("last") and o.get("trx") is not None else None


def _skipped(o: dict) -> str | None:
    return o["gtid"] if o["kind"] == "skip" and o.get("gtid") and o.get("idx") in (None, 0) else None


def _applies(v: TraceView, node: str) -> list[dict]:
    """The groups the node's connections committed, in trace order."""
    return v.memo("multisource.applies", lambda: _by_node(o for o in v.connected if _applied(o))).get(node, [])


def _by_node(obs: Iterable[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for o in obs:
        out.setdefault(o["node"], []).append(o)
    return out


def _last_sample(obs: list[dict]) -> dict:
    return next((o for o in reversed(obs) if o["kind"] == "status"), {})


def _running_at_end(v: TraceView, obs: list[dict]) -> bool:
    """The connection's last sample shows both threads running: what it relayed, or the GTID connect
    of a restart fetches again after a relay log was dropped, it must have applied by then. Not in a
    Trace cut short (header cut_short): it ends where the server stopped answering, not the History."""
    if v.cut_short:
        return False
    last = _last_sample(obs)
    return last.get("Slave_SQL_Running") == "Yes" and last.get("Slave_IO_Running") == "Yes"


def _delaying_at_end(obs: list[dict]) -> bool:
    """The connection's last sample shows its SQL thread waiting out its MASTER_DELAY: a History may
    end before a group's timestamp plus the delay (SET TIMESTAMP ahead; sql_delay_event, MariaDB
    sql/slave.cc, sleeps until `ev->when + clock_diff_with_master + sql_delay`), and the groups it
    relayed after that one wait behind it. Whether it should wait is WL344's and MULTISOURCE.DELAY's."""
    return _last_sample(obs).get("Slave_SQL_Running_State") == STATE_WAITING


@checks("MULTISOURCE.INDEPENDENT")
def independent(v: TraceView, check: Check) -> None:
    """A connection's SQL thread stops only for a cause of its own (a STOP SLAVE naming it, STOP ALL
    SLAVES, its own error or UNTIL, the server's crash); and what a connection relayed is applied or
    skipped by it once its SQL thread runs to the trace's end, whatever the other connections do,
    unless it still waits out its MASTER_DELAY there."""
    _unanswered(v, check)
    for node, conns in _named(v).items():
        stop_all = {o["t"] for o in v.kind("stmt") if o["node"] == node and o["op"] in STOPS_ALL and o.get("errno") is None}
        for conn in conns:
            obs = _conn_obs(v, node, conn)
            stopped_at = {s["t"] for s in obs if _stopped(s)}  # a stop statement is not itself an sql_stop
            for o in obs:
                if o["kind"] != "sql_stop" or o.get("reason") != "stop":
                    continue
                own = o["t"] in stop_all or o["t"] in stopped_at
                check.judge(own, lambda: f"{node} connection {conn!r}: SQL thread stopped at {seconds(o['t'])} by no statement of its own", o)
            if not _running_at_end(v, obs) or _delaying_at_end(obs):
                continue
            # applied by any connection (a START SLAVE drops the relay log and asks by the shared
            # gtid_slave_pos, which another connection may have moved past it), or skipped by this one
            handled = {_applied(o) for o in _applies(v, node)} | {g for o in obs if (g := _skipped(o))}
            for o in obs:
                if o["kind"] == "relay" and o.get("idx") == 0 and o.get("gtid") and o.get("trx") is not None:
                    check.judge(o["gtid"] in handled,
                                lambda: f"{node} connection {conn!r}: {o['gtid']} relayed at {seconds(o['t'])}, never applied "
                                        f"though its threads run", o)


def _unanswered(v: TraceView, check: Check) -> None:
    """A statement a real server did not answer on a replica with named connections. A STOP SLAVE
    'name' or STOP ALL SLAVES is violated when the server showed the SQL thread of a connection it
    stops waiting for another connection's GTID while that other one is busy (in its MASTER_DELAY, or
    applying): the stop of one connection then hangs on another's progress (MariaDB
    check_duplicate_gtid, sql/rpl_gtid.cc, waits checking only thd->check_killed(), and
    terminate_slave_thread, sql/slave.cc, wakes it with awake_no_mutex(NOT_KILLED)). The evidence is
    the server's own: SHOW PROCESSLIST read after the statement (_whose tells whose thread is which).
    Without it, and for any other statement, undecidable: how long the harness waited is no verdict."""
    named = _named(v)
    for o in v.unanswered:
        if o["node"] not in named:
            continue
        node, conns = o["node"], named[o["node"]]
        stops = o["op"] in ("stop_slave",) + STOPS_ALL and o.get("thread") in (None, "sql")
        stopped = conns if o["op"] in STOPS_ALL else [o.get("connection", "")] if stops else []
        shown = next((p for p in v.kind("processlist") if p["node"] == node and p["_line"] > o["_line"]), None)
        rows = [r["state"] for r in (shown or {}).get("rows", ()) if r["command"] == "Slave_SQL"]
        whose = _whose(v, node, conns, rows, o)
        waiting = next((c for c in stopped if whose.get(c) == STATE_OTHER_CONNECTION), None)
        busy = next((c for c, st in whose.items() if c != waiting and st not in IDLE_STATES + (STATE_OTHER_CONNECTION,)), None)
        what = f"{node}: {o['op']}" + (f" {o['connection']!r}" if "connection" in o else "") + (
            f" ({o['statement']})" if "statement" in o else "")
        if waiting is None or busy is None:
            seen = f"the server showed SQL threads in {sorted(set(rows))}" if shown else "the server showed nothing"
            check.undecidable(f"{what} did not return within {seconds(o['duration_us'])}; {seen}"
                              + ("" if stops else ": the connections are not judged past it"), o, *([shown] if shown else []))
            continue
        check.judge(False, f"{what} did not return: connection {waiting!r}'s SQL thread is '{STATE_OTHER_CONNECTION}' "
                           f"while connection {busy!r}'s is '{whose[busy]}' (SHOW PROCESSLIST at {seconds(shown['t'])}): "
                           f"stopping one connection waits for another", o, shown)


def _whose(v: TraceView, node: str, conns: list[str], rows: list[str], o: dict) -> dict[str, str]:
    """The state of each connection's SQL thread among the processlist's `rows` (their states), where
    the Trace tells whose thread is whose (SHOW PROCESSLIST does not): a wait for MASTER_DELAY is a
    connection's whose delay in force is not 0 (sql_delay_event, sql/slave.cc, waits `if (sql_delay)`),
    one such running alone; a state its last sample showed, one row alone showing it; then one
    running connection and one row left over are each other's."""
    running = [c for c in conns if _state_before(v, node, c, o)]
    left, out = list(rows), {}
    delayed = [c for c in running if _delay_before(v, node, c, o)]
    if len(delayed) == 1 and left.count(STATE_WAITING) == 1:
        out[delayed[0]] = STATE_WAITING
        left.remove(STATE_WAITING)
    for c in running:
        sampled = _state_before(v, node, c, o)["Slave_SQL_Running_State"]
        if c not in out and left.count(sampled) == 1:
            out[c] = sampled
            left.remove(sampled)
    rest = [c for c in running if c not in out]
    if len(rest) == 1 and len(left) == 1:
        out[rest[0]] = left[0]
    return out


def _delay_before(v: TraceView, node: str, conn: str, o: dict) -> int:
    """The connection's MASTER_DELAY in force at the statement."""
    return [d for line, d in _delays(v, node, conn, _conn_obs(v, node, conn)) if line < o["_line"]][-1]


def _state_before(v: TraceView, node: str, conn: str, o: dict) -> dict | None:
    """The connection's last sample before the statement, when its SQL thread ran."""
    last = next((s for s in reversed(_conn_obs(v, node, conn)) if s["kind"] == "status" and s["_line"] < o["_line"]), None)
    return last if last and last.get("Slave_SQL_Running") == "Yes" else None


def _delays(v: TraceView, node: str, conn: str, obs: list[dict]) -> list[tuple[int, int]]:
    """(line, MASTER_DELAY in force from there) of one connection."""
    out = [(0, v.connections[(node, conn)].get("delay", 0))]
    for o in obs:
        if o["kind"] == "stmt" and o.get("errno") is None and o["op"] == "change_master" and o.get("delay") is not None:
            out.append((o["_line"], o["delay"]))
        elif o["kind"] == "stmt" and o.get("errno") is None and o["op"] == "reset_slave":
            out.append((o["_line"], 0))
    return out


@checks("MULTISOURCE.DELAY")
def own_delay(v: TraceView, check: Check) -> None:
    """Each connection's MASTER_DELAY holds its own groups: a group a connection applies begins no
    earlier than its event timestamp (WL#7318: its immediate master's commit timestamp) plus that connection's delay. Judged where no clock is offset
    or stepped (the timestamp is then true time), and only under a delay: with MASTER_DELAY 0 nothing
    waits, not even a group stamped ahead of the clock by SET TIMESTAMP (sql/slave.cc,
    sql_delay_event: the wait is computed `if (sql_delay)` only)."""
    if v.kind("clock_step") or any(n.get("clock_offset_us") for n in v.nodes.values()):
        return
    epoch = v.header.get("epoch_us", 0)  # a Trace header always has it
    for node, conns in _named(v).items():
        for conn in conns:
            obs = _conn_obs(v, node, conn)
            delays = _delays(v, node, conn, obs)
            lines = [line for line, _ in delays]
            for o in obs:
                if o["kind"] != "apply" or o.get("idx") != 0 or o.get("trx") is None or not o.get("when"):
                    continue
                delay = delays[bisect.bisect_left(lines, o["_line"]) - 1][1]
                if not delay:
                    continue
                # WL#7318's servers count from the immediate master's commit timestamp, not the event's
                # (MySQL sql/rpl_replica.cc, sql_delay_event): a SET TIMESTAMP ahead does not move it
                wl7318 = v.nodes.get(node, {}).get("delay_rule") == "wl7318" and o.get("ict")
                due = (o["ict"] // US if wl7318 else o["when"]) * US - epoch + delay * US
                begin = begin_of(o)  # a real server's apply: when it began is not observed, its row's sample is
                check.judge(begin + v.resolution_us >= due,
                            lambda: f"{node} connection {conn!r} began {o['gtid']} at {seconds(begin)}, before {seconds(due)} "
                                    f"(its timestamp plus its MASTER_DELAY {delay})", o)


@checks("MULTISOURCE.IGNORE_DUPLICATES.ONCE")
def applied_once(v: TraceView, check: Check) -> None:
    """With gtid_ignore_duplicates a replica applies each GTID once, whichever of its connections
    brings it first: no GTID is committed by two of its connections, nor twice by one. A group
    rolled back after it was applied (a crash before its commit, a STOP of its worker) was not
    committed: it is owed again, and applied again (MariaDB sql/rpl_parallel.cc and sql/slave.cc roll
    back an uncommitted group; rpl_slave_state::check_duplicate_gtid lets the next one bring it)."""
    for node in _named(v):
        if not v.nodes.get(node, {}).get("variables", {}).get("gtid_ignore_duplicates"):
            continue
        seen: dict[str, dict] = {}
        rollbacks = [o for o in v.kind("rollback") if o["node"] == node and o.get("gtid")]
        for o in sorted(v.connected + rollbacks, key=lambda o: o["_line"]):
            if o["kind"] == "rollback":
                if o["node"] == node:
                    seen.pop(o["gtid"], None)
                continue
            if o["node"] != node or o["kind"] != "apply" or not o.get("last") or o.get("trx") is None or not o.get("gtid"):
                continue
            first = seen.get(o["gtid"])
            check.judge(first is None, lambda: f"{node} applied {o['gtid']} twice: by connection {first['connection']!r} "
                                               f"at {seconds(first['t'])} and by {o['connection']!r} at {seconds(o['t'])}", o)
            seen.setdefault(o["gtid"], o)


@checks("MULTISOURCE.RESTART.NO_LOSS")
def restart_no_loss(v: TraceView, check: Check) -> None:
    """Each group a connection had relayed and not applied when it was stopped is applied once on
    the replica after it is started again (by it, or by another connection bringing the same GTID),
    when its threads run to the trace's end: at most once while it still waits out its delay there."""
    for node, conns in _named(v).items():
        applies = _applies(v, node)
        times = Counter(_applied(o) for o in applies)
        for conn in conns:
            obs = _conn_obs(v, node, conn)
            if not _running_at_end(v, obs):
                continue
            delaying = _delaying_at_end(obs)
            # One sweep: the groups relayed so far that neither the node applied nor this
            # connection skipped, kept up to date as applies (by line) and skips come.
            undone: dict[str, list[dict]] = {}
            done: set[str] = set()
            k = 0
            starts = [i for i, s in enumerate(obs) if _started(s)]
            for i, stop in enumerate(obs):
                while k < len(applies) and applies[k]["_line"] < stop["_line"]:
                    done.add(_applied(applies[k]))
                    undone.pop(_applied(applies[k]), None)
                    k += 1
                if stop["kind"] == "relay" and stop.get("idx") == 0 and stop.get("gtid") and stop.get("trx") is not None:
                    if stop["gtid"] not in done:
                        undone.setdefault(stop["gtid"], []).append(stop)
                elif (g := _skipped(stop)) is not None:
                    done.add(g)
                    undone.pop(g, None)
                if not _stopped(stop):
                    continue
                nxt = bisect.bisect_right(starts, i)
                if nxt == len(starts):
                    continue
                start = obs[starts[nxt]]
                for r in sorted((r for rs in undone.values() for r in rs), key=lambda r: r["_line"]):
                    n = times[r["gtid"]]
                    check.judge(n == 1 or (n == 0 and delaying), lambda: f"{node} connection {conn!r}: {r['gtid']}, relayed before STOP SLAVE at "
                                                f"{seconds(stop['t'])}, was applied {n} times after START SLAVE at {seconds(start['t'])}", r)

"""The MariaDB-GTID view of group IDs: gtid_binlog_pos, gtid_slave_pos, gtid_current_pos and
Gtid_IO_Pos."""
from __future__ import annotations

import bisect
import re
from replcheck.spec import formats as F

from .core import Check, TraceView, checks
from .filter import kept_out
from .semisync_applier import may_still_wait
from .groupid_shared import deleted_domains, lost_lines, of_node, out_of_system, server_id, starts_new_binlog


# -- the MariaDB-GTID view -------------------------------------------------------------------------
@checks("MARIADB.GTID.UNIQUE")
def gtid_one_body(v: TraceView, check: Check) -> None:
    """Each GTID names one transaction body in every binlog of the system; but a RESET MASTER on a
    server lets it issue its GTIDs anew (sql_repl.cc reset_master: the binlog state emptied), which
    the DBA who ran it chose (rpl_gtid_startpos, rpl_gtid_mdev4820), as does FLUSH BINARY LOGS
    DELETE_DOMAIN_ID for the domains it deleted on that server."""
    gone = out_of_system(v)
    first: dict[str, dict] = {}
    resets = sorted((o for o in v.kind("stmt") if starts_new_binlog(o) or deleted_domains(o)), key=lambda o: o["_line"])
    for o in sorted([*v.kind("binlog"), *resets], key=lambda o: o["_line"]):
        if o["kind"] == "stmt" and (gone_domains := deleted_domains(o)):  # any server's GTIDs of those domains
            first = {g: x for g, x in first.items() if domain_of(g) not in gone_domains or x["node"] != o["node"]}
        elif o["kind"] == "stmt":
            sid = server_id(v, o["node"])
            first = {g: x for g, x in first.items() if domain_of(g) is None or F.parse_gtid(g)[1] != sid}
        elif o.get("gtid") and o.get("trx") is not None and o.get("idx", 0) == 0 and o["_line"] not in gone:
            seen = first.setdefault(o["gtid"], o)
            check.judge(seen.get("trx") == o.get("trx"),
                        f"GTID {o['gtid']} names {seen.get('trx')} on {seen['node']} and {o.get('trx')} on {o['node']}", seen, o)


def domain_of(gtid) -> int | None:
    """The replication domain of a MariaDB GTID; None for anything else (a MySQL uuid:n GTID)."""
    try:
        return F.parse_gtid(gtid)[0]
    except (ValueError, TypeError, AttributeError):
        return None


def positions(text) -> dict[int, str] | None:
    """A GTID position as a server shows it, or None when it is not one."""
    try:
        return F.parse_pos(text)
    except (ValueError, TypeError, AttributeError):
        return None


def _positions(v: TraceView, node: str, line: int, own_too: bool) -> str:
    """Per domain, the last GTID the node logged (own_too) or replicated, before a line, as a
    server shows it."""
    lines, shown = _changes(v, node, own_too)
    return shown[bisect.bisect_left(lines, line) - 1]


def _changes(v: TraceView, node: str, own_too: bool) -> tuple[list[int], list[str]]:
    """_position_changes, made once a trace (looked up once a sample: no closure made for it)."""
    made = v.memo("gid.positions", dict)
    try:
        return made[node, own_too]
    except KeyError:
        found = made[node, own_too] = _position_changes(v, node, own_too)
        return found


# The kinds each position reads (any other observation of the node leaves it as it is): a
# binlog's own state moves with its writes, restores, resets and recoveries; gtid_slave_pos with
# what the SQL thread read, skipped, filtered and committed, and with the DBA's SET GLOBAL.
_BINLOG_KINDS = ("restore", "recovery", "stmt", "binlog")
_SLAVE_KINDS = ("restore", "stmt", "apply", "skip", "binlog", "visible", "filtered")


def _position_changes(v: TraceView, node: str, own_too: bool) -> tuple[list[int], list[str]]:
    """_positions over the whole trace in one pass: the lines where it changes (after a 0 for the
    start) and what it shows from each on."""
    own = server_id(v, node)
    pos: dict[int, str] = {}
    lines, shown = [0], [F.format_pos(pos)]
    gtid_of = v.memo("gid.parsed", dict)  # GTID text -> (domain, server_id, seq), or None: parsed once a trace
    # A crashed primary that rejoined (SET GLOBAL gtid_slave_pos, MDEV-21117) gets its own
    # transactions its recovery truncated back from the new primary, as replicated ones
    # (rpl_semi_sync_fail_over.result: server_1 gets 0-1-4 back): those whose commit never returned.
    rejoined = min((o["_line"] for o in v.of_node(node, "stmt") if o.get("op") == "set_global"
                    and o.get("variable") == "gtid_slave_pos"), default=None)
    returned = {c["trx"] for c in v.of_node(node, "commit") if c.get("errno") is None}
    # a client's own transaction under SET SESSION server_id carries another server's id, but only
    # the SQL thread records a GTID in gtid_slave_pos (rpl_gtid.cc record_gtid)
    local = {c["gtid"] for c in v.of_node(node, "commit") if c.get("gtid")}

    def came_back(o: dict) -> bool:
        return rejoined is not None and o["_line"] > rejoined and o["trx"] not in returned
    lost = lost_lines(v)

    def group_skipped(o: dict) -> bool:
        """The skip reached its group's last event (a cut IO thread may leave only a group's start to
        skip: its GTID is not recorded until the rest comes); so it is taken where the trace shows no relay log."""
        relay_at = v.memo("gid.relay_by_place", lambda: {(r["node"], r["file"], r["pos"]): r for r in v.kind("relay")})
        r = relay_at.get((o["node"], o.get("relay_file"), o.get("relay_pos")))
        return r is None or bool(r.get("last"))
    # what set the position, per domain, for a crash recovery that cuts some of it away: what it
    # cut is gone for good, so it is popped once, and the last left is the domain's position
    logged: dict[int, list[dict]] = {}
    # a load's line may be a named connection's START SLAVE, which the node's observations leave out
    loads = [] if own_too else sorted(_connect_loads(v, node).items())
    set_by: dict[int, str] = {}  # per domain, the kind of observation that set the position last
    # gtid_slave_pos shows per domain the GTID recorded with the highest sub_id (rpl_slave_state::
    # iterate, sql/rpl_gtid.cc): a group takes its own when its GTID is read (event_group_new_gtid,
    # sql/rpl_rli.cc), a load when it loads, so a group read before a load in its domain and
    # committed after it does not show. Ordered only where the trace is exact.
    read_at: dict[str, int] = {}  # GTID -> the line its GTID event was last read
    loaded_at: dict[int, int] = {}  # domain -> the line of its last load
    # a load takes effect at the first of the node's observations at or after its line, so those
    # past the last one never do
    every = of_node(v, node)
    end = every[-1]["_line"] if every else -1
    loads = [load for load in loads if load[0] <= end]
    for o in v.of_node(node, *(_BINLOG_KINDS if own_too else _SLAVE_KINDS)):
        kind = o["kind"]
        while loads and loads[0][0] <= o["_line"]:
            line, loaded = loads.pop(0)
            pos = {**pos, **loaded}
            loaded_at.update(dict.fromkeys(loaded, line))
            lines.append(line)
            shown.append(F.format_pos(pos))
        changed = kind == "restore" or (kind == "recovery" and bool(o.get("truncated")) and own_too)
        if kind == "restore":
            pos, logged = {}, {}
        elif kind == "stmt":
            if own_too and starts_new_binlog(o):
                # RESET MASTER empties the binlog's state; SET GLOBAL gtid_binlog_state sets it (sql_repl.cc reset_master)
                pos, logged, changed = positions(str(o.get("value", "")).replace(" ", "")) or {}, {}, True
            elif own_too and (dropped := deleted_domains(o)):  # FLUSH BINARY LOGS DELETE_DOMAIN_ID took them from the state
                pos = {d: g for d, g in pos.items() if d not in dropped}
                logged = {d: stack for d, stack in logged.items() if d not in dropped}
                changed = True
            elif (not own_too and o.get("op") == "set_global" and o.get("variable") == "gtid_slave_pos"
                  and o.get("errno") is None):
                pos, changed = F.parse_pos(o["value"]), True  # the DBA sets it (a crashed primary rejoining)
        elif changed:
            pos = {}
            for d, stack in logged.items():
                while stack and stack[-1]["_line"] in lost:
                    stack.pop()
                if stack:
                    pos[d] = stack[-1]["gtid"]
        # A group the skip counter skipped moves gtid_slave_pos as a committed one does (MariaDB
        # rpl_slave_state::record_and_update_gtid at the group's end).
        # So does a group a filter kept from the engine (properties/filter.py, FILTER.GTID.ADVANCES).
        # a skip reads the GTID event too (exec_relay_log_event calls event_group_new_gtid before
        # the skip, sql/slave.cc): a group read, rolled back by a stop and skipped after a load shows
        if kind in ("apply", "skip") and o.get("idx") == 0 and o.get("gtid"):
            read_at[o["gtid"]] = o["_line"]
        # of a binlog, only a group's last event moves a position (most of its events are not)
        counted = kind in ("visible", "filtered") or (kind == "binlog" and o.get("last")) or (
            kind == "skip" and o.get("reason") == "sql_slave_skip_counter" and group_skipped(o))
        g = _parsed(gtid_of, o.get("gtid")) if counted else None
        if g is not None:
            d = g[0]
            replicated = (g[1] != own and o["gtid"] not in local) or (kind == "visible" and came_back(o))
            # Never back: on a polled trace a skip is stamped when its note is read, maybe after a
            # later group was applied; a parallel worker's group may commit after the coordinator
            # passed a later group a filter kept out (recorded in commit order, model/sim/applier.py
            # commit_group). A skip a trace places exactly is recorded last, and the GTID recorded
            # last is shown, lower or not (rpl_slave_state::iterate, sql/rpl_gtid.cc: the highest
            # sub_id): after a replica that commits out of order crashed, a skipped earlier group.
            back = d in pos and _parsed(gtid_of, pos[d])[2] > g[2] and (
                (kind == "skip" and bool(v.resolution_us)) or (not own_too and set_by.get(d) == "filtered"))
            back = back or (not own_too and not v.resolution_us and loaded_at.get(d, -1) > read_at.get(o["gtid"], o["_line"]))
            if not back and ((kind == "binlog" and o.get("last") and (own_too or replicated)) or (
                    not own_too and kind in ("visible", "skip", "filtered") and replicated)):
                pos[d] = o["gtid"]
                set_by[d] = kind
                logged.setdefault(d, []).append(o)
                changed = True
            elif kind == "skip" and not own_too and replicated and v.resolution_us:
                # On a polled trace the later group may be placed first (its binlog write by the
                # sample that saw it, the skip by the note read at that sample): the SQL thread
                # skipped in relay order, so the skipped group was the position for a moment
                # before it, which a sample within the resolution may show (inc-skip-after-rotation
                # at load 14: gtid_slave_pos 0-1-2 at the sample that read the note, 0-1-3 binlogged).
                lines.append(o["_line"])
                shown.append(F.format_pos({**pos, d: o["gtid"]}))
                lines.append(o["_line"] + 1)
                shown.append(F.format_pos(pos))
        if changed:
            lines.append(o["_line"])
            shown.append(F.format_pos(pos))
    for line, loaded in loads:
        pos = {**pos, **loaded}
        lines.append(line)
        shown.append(F.format_pos(pos))
    return lines, shown


def _parsed(cache: dict, gtid) -> tuple[int, int, int] | None:
    """A MariaDB GTID's (domain, server_id, seq), None for anything else: remembered per text."""
    try:
        return cache[gtid]
    except KeyError:
        try:
            cache[gtid] = F.parse_gtid(gtid)
        except (ValueError, TypeError, AttributeError):
            cache[gtid] = None
        return cache[gtid]
    except TypeError:  # not hashable: no GTID
        return None


# the error-log line of an IO thread that connected by position (slave.cc, handle_slave_io), and
# the name a multi-source connection's lines begin with ("Master 'm1': ...", none for the default)
_STARTED_AT_PLACE = re.compile(r"Slave I/O thread: connected to master '[^']*',replication started in log '([^']*)' at position (\d+)")
_CONNECTION_NAMED = re.compile(r"Master '([^']*)': ")


def _connect_loads(v: TraceView, node: str) -> dict[int, dict[int, str]]:
    """Per line, what a connect by position loads into the node's gtid_slave_pos there. A server's
    log line is read at a poll, after groups the connection may have applied already: its load
    took effect at the START SLAVE (or restart) that began the connect, that connection's own on
    a multi-source replica (START ALL SLAVES and a restart begin every connection's)."""
    out: dict[int, dict[int, str]] = {}
    began: dict[str, int] = {}  # per connection ('' the default), the line its next connect began at
    every, used = None, set()  # the last start of every connection, and those whose connect took it
    named = v.memo(("gid.connected", node), lambda: [o for o in v.connected if o["node"] == node])
    # what a connect loads from is a `connect` or an error-log line; a start or restart begins one
    mine = v.of_node(node, "restart", "stmt", "connect", "log")
    for o in sorted([*mine, *(c for c in named if c["kind"] == "stmt")], key=lambda o: o["_line"]):
        ok = o["kind"] == "stmt" and o.get("errno") is None
        if o["kind"] == "restart" or (ok and o.get("op") == "start_all_slaves"):
            every, began, used = o["_line"], {}, set()
        elif ok and o.get("op") == "start_slave":
            began[o.get("connection", "")] = o["_line"]
        elif loaded := _loaded_at_connect(v, o):
            link = _connection_of(o)
            start = began.pop(link, None if link in used else every)
            used.add(link)
            out[o["_line"] if o["kind"] == "connect" or start is None else start] = loaded
    return out


def _connection_of(o: dict) -> str:
    named = _CONNECTION_NAMED.match(o.get("message", "")) if o["kind"] == "log" else None
    return named.group(1) if named else o.get("connection", "")


def _loaded_at_connect(v: TraceView, o: dict) -> dict[int, str]:
    """What an IO thread connecting by position loads into gtid_slave_pos: it asks its master for
    the GTID position of that place (SELECT binlog_gtid_pos(file, pos)) and each domain named takes
    it (get_master_version_and_clock, sql/slave.cc; rpl_slave_state::load without reset). Seen on
    10.11.19 in rpl_gtid_startpos's MDEV-4483 steps: 0-42-42 became 0-1-2 at START SLAVE by
    position from bin.000002:4. The place is the server's log line, or a `connect` of a model
    whose mechanics have MariaDB's GTID domains (the others' have no such query); the position,
    per domain, the last group the source binlogged before it since its binlog began."""
    mariadb = (v.header.get("config") or {}).get("mechanics", {}).get("gtid_domains")
    if o["kind"] == "connect" and o.get("by") == "position" and o.get("errno") is None and mariadb:
        source, place = o.get("source"), (o.get("master_log_file"), o.get("master_log_pos"))
    elif o["kind"] == "log" and (m := _STARTED_AT_PLACE.search(o.get("message", ""))):
        link = _connection_of(o)
        channel = v.connections.get((o["node"], link)) or (v.channels.get(o["node"]) if not link else None)
        source, place = (channel or {}).get("source"), (m.group(1), int(m.group(2)))
    else:
        return {}
    at = _place_key(*place)
    if source is None or at is None:
        return {}
    groups, lost = _binlog_states(v, source), lost_lines(v)
    i = bisect.bisect_left(groups, (o["_line"],)) - 1
    # passed over: a group written after the place, or one a crash recovery cut away before the connect
    while i >= 0 and ((groups[i][1] is not None and groups[i][1] > at) or lost.get(groups[i][0], o["_line"]) < o["_line"]):
        i -= 1
    return groups[i][2] if i >= 0 else {}


def _binlog_states(v: TraceView, source: str) -> list[tuple[int, tuple[int, int] | None, dict[int, str]]]:
    """The source's binlog group by group, at its GTID event and at its end: (line, place, the binlog
    state after it); a RESET MASTER
    or restore starts it over (place None, the state empty); a crash recovery that truncated the
    binlog takes it back to the state before the first group it cut away (at that group's place)."""
    def build():
        out: list[tuple[int, tuple[int, int] | None, dict[int, str]]] = []
        state: dict[int, str] = {}
        lost = lost_lines(v)
        for b in of_node(v, source):
            if starts_new_binlog(b):
                state = {}
                out.append((b["_line"], None, state))
            elif b["kind"] == "recovery" and (cut := [g for g in out if lost.get(g[0]) == b["_line"]]):
                kept = [g for g in out if g[0] < cut[0][0]]
                state = kept[-1][2] if kept else {}
                out.append((b["_line"], cut[0][1], state))
            # a group counts from its GTID event on: the master reads every event before the place,
            # so a place inside a group counts it (gtid_state_from_pos, sql/sql_repl.cc)
            elif b["kind"] == "binlog" and (b.get("last") or b.get("idx") == 0) and (
                    d := domain_of(b.get("gtid"))) is not None and (key := _place_key(b.get("file"), b.get("end"))) is not None:
                state = {**state, d: b["gtid"]}
                out.append((b["_line"], key, state))
        return out
    return v.memo(("gid.binlog_states", source), build)


def _place_key(file, pos) -> tuple[int, int] | None:
    """A binlog place in order: the file's number, then the offset; None when it is no place."""
    try:
        return int(str(file).rsplit(".", 1)[1]), int(pos)
    except (IndexError, ValueError, TypeError):
        return None


def sampled_positions(v: TraceView, sample: dict, own_too: bool) -> list[str]:
    """The positions a sample may show. A model's trace is exact: the one at the sample's line. A
    polled server's observations are placed within its resolution of when they happened (a
    replica binlogs a group a moment before it commits it and gtid_slave_pos moves), so any
    position the node passes through within the resolution around the sample is allowed."""
    lines, shown = _changes(v, sample["node"], own_too)
    res = v.resolution_us
    if not res:
        return [shown[bisect.bisect_left(lines, sample["_line"]) - 1]]
    node = of_node(v, sample["node"])
    times = v.memo(f"gid.times.{sample['node']}", lambda: [o["t"] for o in node])
    nearby = node[bisect.bisect_left(times, sample["t"] - res):bisect.bisect_right(times, sample["t"] + res)]
    near = [o["_line"] for o in nearby]
    cuts = [sample["_line"], *near, *(line + 1 for line in near)]
    return sorted({shown[bisect.bisect_left(lines, line) - 1] for line in cuts})


def _restored(v: TraceView) -> set[str]:
    return {o["node"] for o in v.kind("restore")}


@checks("MARIADB.GTID.BINLOG_POS", kinds=("server_status",))
def gtid_binlog_pos(v: TraceView, check: Check) -> None:
    """@@gtid_binlog_pos is, per domain, the last GTID written to the binlog (rebuilt after a crash)."""
    # A polled trace reads the binlogs at the end: a group a replica-role recovery truncated (MDEV-21117)
    # is in none, though the server showed it while its commit waited; such samples cannot be judged.
    truncating = v.resolution_us and any(r.get("init_rpl_role") == "SLAVE" for r in v.kind("restart"))
    doubt = [c for c in v.kind("commit") if truncating and c.get("errno") is not None and "start" in c]
    for o in v.kind("server_status"):
        got = o.get("variables", {}).get("gtid_binlog_pos")
        if got is not None and not (doubt and any(c["node"] == o["node"] and c["start"] <= o["t"] <= c["t"] for c in doubt)):
            want = sampled_positions(v, o, own_too=True)
            check.judge(got in want or _taken_while_waiting(v, o, got, want),
                        lambda: f"{o['node']}: gtid_binlog_pos {got!r}, its binlog ends with {' or '.join(map(repr, want))}", o)


def _taken_while_waiting(v: TraceView, sample: dict, got: str, want: list[str]) -> bool:
    """A sample while a binlog write of the node waits for space (binlog_wait, by when its server
    logged it): MariaDB's gtid_binlog_pos already holds the GTID of the group being written, taken
    in MYSQL_BIN_LOG::write_gtid_event (sql/log.cc) before the group reaches the file (seen on
    10.11 for the minute a write waited). Each domain shows what the binlog ends with, or the GTID
    of a commit of the node in flight at the sample."""
    node, at = sample["node"], sample["t"]
    if not any(w["node"] == node and w.get("logged", [w["t"]])[0] <= at for w in v.kind("binlog_wait")):
        return False
    flight = {c["gtid"] for c in v.kind("commit")
              if c["node"] == node and c.get("gtid") and c.get("start", c["t"]) <= at <= c["t"] + v.resolution_us}
    shown = positions(got)
    return any(all(g == ends.get(d) or g in flight for d, g in shown.items()) for ends in map(positions, want))


@checks("MARIADB.GTID.SLAVE_POS", kinds=("server_status",))
def gtid_slave_pos(v: TraceView, check: Check) -> None:
    """@@gtid_slave_pos is, per domain, the last GTID the slave replicated and committed."""
    restored = _restored(v)
    for o in v.kind("server_status"):
        got = o.get("variables", {}).get("gtid_slave_pos")
        if got is not None and o["node"] not in restored and not _blind_skip(v, o):
            want = sampled_positions(v, o, own_too=False)
            check.judge(got in want or _blind_filter(v, o, got, want) or _read_last(v, o, got, want)
                        or _commit_waits(v, o, got, want),
                        lambda: f"{o['node']}: gtid_slave_pos {got!r}, it replicated up to {' or '.join(map(repr, want))}", o)


def _commit_waits(v: TraceView, sample: dict, got: str, want: list) -> bool:
    """A position naming, in each domain, a wanted GTID or the one before a replicated group whose
    commit may still wait for a semi-sync ack on the node (its own semi-sync master enabled): the
    SQL thread updates the in-memory GTID state only once its commit returns
    (Xid_apply_log_event::do_apply_event, MariaDB sql/log_event_server.cc)."""
    node, key = sample["node"], (sample["t"], sample["_line"])
    shown = positions(got) or {}
    for w in map(positions, want):
        w = w or {}
        before = dict(w)
        for d, g in w.items():
            if may_still_wait(v, node, g, key):
                # the position before the group: where it was first seen committed (visible or binlogged)
                line = min(o["_line"] for o in v.of_node(node, "binlog", "visible") if o.get("gtid") == g)
                prior = positions(_positions(v, node, line, own_too=False)) or {}
                if prior.get(d) is None:
                    before.pop(d)
                else:
                    before[d] = prior[d]
        if all(shown.get(d) in (w.get(d), before.get(d)) for d in set(shown) | set(w)):
            return True
    return False


def _blind_filter(v: TraceView, sample: dict, got: str, want: list) -> bool:
    """On a trace that cannot show which groups the SQL thread filtered (a real server's), a
    position naming, in each domain, a group the node's filters keep out that its source committed
    by the sample (the SQL thread passed it, and gtid_slave_pos moved: FILTER.GTID.ADVANCES; a
    domain DO/IGNORE_DOMAIN_IDS drops moves it too), or a position a wanted one names there."""
    if "filtered" not in v.unobserved:
        return False
    until = sample["t"] + v.resolution_us
    kept = kept_out(v, sample["node"])
    # committed by then, or binlogged by then (a commit can return long after its group went out:
    # a semi-sync wait; a campaign's t3 waited 0.5 s while B already passed it)
    out = {c["gtid"] for c in v.kind("commit") if c.get("trx") in kept and c.get("gtid") and c["t"] <= until}
    out |= {b["gtid"] for b in v.kind("binlog") if b.get("trx") in kept and b.get("gtid") and b.get("last") and b["t"] <= until}
    shown = positions(got)
    named = [positions(w) or {} for w in want]
    return bool(shown) and all(g in out or any(w.get(d) == g for w in named) for d, g in shown.items())


def _read_last(v: TraceView, sample: dict, got: str, want: list) -> bool:
    """On a polled trace of a replica that applies one domain through several connections: a
    position naming, in each such domain, a group that may have been read last. gtid_slave_pos
    shows per domain the committed group with the highest sub_id (rpl_slave_state::iterate,
    sql/rpl_gtid.cc), and a sub_id is taken when an SQL thread reads the group's GTID event
    (event_group_new_gtid, sql/rpl_rli.cc), not when it commits: across connections the last to
    commit need not be the last read (mdev-9544 on 10.11.19: 0-2-5 shown, 0-3-5 seen committing
    with it). A poll cannot order the reads, so any connection's last group by the sample may be
    the one shown, unless a group of another connection, committed by then, was relayed (and so
    read) only after it committed."""
    res = v.resolution_us
    if not res:
        return False
    shown = positions(got)
    named = [positions(w) or {} for w in want]
    return bool(shown) and all(any(w.get(d) == g for w in named) or g in _last_read(v, sample, d) for d, g in shown.items())


def _last_read(v: TraceView, sample: dict, domain: int) -> set[str]:
    """The GTIDs of the domain a sample may show as read last across the node's connections."""
    res, at = v.resolution_us, sample["t"]
    # a connection's observations are kept apart from the channel ones (TraceView.connected)
    node = sample["node"]
    mine = v.memo(("gid.connected", node), lambda: [o for o in v.connected if o["node"] == node])
    by_link: dict[str, list[dict]] = {}
    for a in mine:
        if a["kind"] == "apply" and a.get("last") and domain_of(a.get("gtid")) == domain:
            by_link.setdefault(a["connection"], []).append(a)
    if len(by_link) < 2:
        return set()
    relayed = {(r["connection"], r["gtid"]): r["t"] for r in reversed(mine)
               if r["kind"] == "relay" and r.get("gtid") and r.get("idx", 0) == 0}
    # per connection, its last group surely committed by the sample, and those within the resolution of it
    maybe = {link: [a for a in applies if a["t"] <= at - res][-1:] + [a for a in applies if at - res < a["t"] <= at + res]
             for link, applies in by_link.items()}
    sure = [a for applies in by_link.values() for a in applies if a["t"] <= at - res]
    return {a["gtid"] for link, applies in maybe.items() for a in applies
            if not any(b["connection"] != link and relayed.get((b["connection"], b["gtid"]), 0) - res > a["t"]
                       for b in sure)}


def _blind_skip(v: TraceView, sample: dict) -> bool:
    """The sample follows a START SLAVE with SQL_SLAVE_SKIP_COUNTER set, on a trace that cannot
    show what the counter skipped (a real server's: no relay log read), and no group since: the
    skipped groups moved gtid_slave_pos, but the trace cannot say which they were."""
    if "relay" not in v.unobserved:
        return False
    node, key = sample["node"], (sample["t"], sample["_line"])
    since = max((k for k in v.skip_starts(node) if k < key), default=None)
    return since is not None and not any(
        x["node"] == node and x.get("gtid") and since < (x["t"], x["_line"]) < key for x in v.kind("visible"))


def _current_pos(binlog: dict[int, str], slave: dict[int, str], own: int | None) -> dict[int, str]:
    """MariaDB's gtid_current_pos: per domain, gtid_binlog_pos's GTID when this server's own
    server_id wrote it and its sequence number is above gtid_slave_pos's, else gtid_slave_pos's."""
    def seq(g: str) -> int:
        return F.parse_gtid(g)[2]
    mine = {d: g for d, g in binlog.items() if F.parse_gtid(g)[1] == own and (d not in slave or seq(g) > seq(slave[d]))}
    return {**slave, **mine}


def _current_shown(binlog_pos, slave_pos, own: int | None) -> str | None:
    """gtid_current_pos as the server shows it, from the two others as shown; None if either is no position."""
    binlog, slave = positions(binlog_pos), positions(slave_pos)
    return None if binlog is None or slave is None else F.format_pos(_current_pos(binlog, slave, own))


@checks("MARIADB.GTID.CURRENT_POS", kinds=("server_status",))
def gtid_current_pos(v: TraceView, check: Check) -> None:
    """@@gtid_current_pos is gtid_slave_pos, with the domains where this server itself logged later GTIDs."""
    wanted: dict[tuple, str | None] = {}  # samples mostly repeat the positions of the one before
    for o in v.kind("server_status"):
        var = o.get("variables", {})
        if "gtid_current_pos" in var and "gtid_binlog_pos" in var and "gtid_slave_pos" in var:
            # by node: its server_id is looked up only for positions it did not show before
            binlog, slave, node = var["gtid_binlog_pos"], var["gtid_slave_pos"], o["node"]
            try:
                want = wanted[binlog, slave, node]
            except KeyError:
                want = wanted[binlog, slave, node] = _current_shown(binlog, slave, server_id(v, node))
            except TypeError:  # not a position at all (a list, say): nothing to remember
                want = _current_shown(binlog, slave, server_id(v, node))
            check.judge(var["gtid_current_pos"] == want, lambda: f"{o['node']}: gtid_current_pos {var['gtid_current_pos']!r}, expected {want!r}", o)


@checks("MARIADB.GTID.IO_POS")
def gtid_io_pos_whole_groups(v: TraceView, check: Check) -> None:
    """Gtid_IO_Pos names only transactions received whole: their last event is in a master's binlog already.
    A polled server's binlog events are stamped no earlier than written and at most its resolution
    later (the first poll that found them logged, or an earlier bound): a sample within that of the
    stamp cannot be earlier than the write. A GTID the DBA set in gtid_slave_pos is the IO thread's
    start (START SLAVE loads Gtid_IO_Pos from it, rpl_gtid_errorhandling: 0-1-4, in no binlog), and
    one set in a master's gtid_binlog_state is in its binlog's Gtid_list (seen on 10.11.19)."""
    res = v.resolution_us
    ended: dict[str, int] = {}
    for o in v.kind("binlog"):
        if o.get("gtid") and o.get("last"):
            ended.setdefault(o["gtid"], o["t"])
    for o in sorted(v.kind("stmt"), key=lambda o: o["_line"]):
        if o.get("op") == "set_global" and o.get("variable") in ("gtid_slave_pos", "gtid_binlog_state") and o.get("errno") is None:
            for g in filter(None, str(o.get("value")).replace(" ", "").split(",")):
                ended[g] = min(ended.get(g, o["t"]), o["t"])
    parsed: dict = {}  # samples mostly repeat the one before: each position parsed once
    for o in v.kind("status"):
        if "Gtid_IO_Pos" not in o:
            continue
        try:
            named = parsed[o["Gtid_IO_Pos"]]
        except KeyError:
            named = parsed[o["Gtid_IO_Pos"]] = positions(o["Gtid_IO_Pos"])
        except TypeError:  # not a position at all (a list, say): nothing to remember
            named = positions(o["Gtid_IO_Pos"])
        if named is None:
            check.judge(False, f"{o['node']}: Gtid_IO_Pos {o['Gtid_IO_Pos']!r} is not a GTID position", o)
            continue
        for g in named.values():
            check.judge(g in ended and ended[g] - res <= o["t"], lambda: f"{o['node']}: Gtid_IO_Pos names {g}, not yet whole in any binlog", o)

"""PURGE BINARY LOGS and connecting by group ID."""
from __future__ import annotations

import heapq
from itertools import takewhile
from typing import Callable
from replcheck.spec import formats as F

from .core import Check, TraceView, checks, seconds
from .filter import kept_out
from .groupid_gtid import domain_of
from .groupid_shared import by_line, current_id, deleted_domains, lost_lines, purged_before_first_dump, server_id, starts_new_binlog
from .groupid_commands import binlog_info, is_purge, last_group_end


# -- PURGE BINARY LOGS and connecting by group ID -------------------------------------------------
def _last_writes(v: TraceView, node: str) -> dict[str, tuple[int, int]]:
    """When each of the node's binlogs was last written (what PURGE ... BEFORE compares), as the
    interval its last event was written in: a real server's event is read from the binlog later
    than it was written, and carries the interval its own timestamp names (`written`); else its
    time, known within the trace's resolution."""
    res = v.resolution_us
    return v.memo(("gid.last_writes", node), lambda: {
        o["file"]: tuple(o["written"]) if o.get("written") else (o["t"] - res, o["t"] + res) for o in v.of_node(node, "binlog")})


def _before(written_us: int, before_us: int) -> bool:
    """BEFORE compares whole seconds: MariaDB's purge_logs_before_date (sql/log.cc) stops at a
    binlog whose `stat_area.st_mtime >= purge_time`, the file's mtime truncated to the second
    against the statement's time as UNIX_TIMESTAMP(...)->val_int(), rounded half up
    (my_decimal2int). Trace time 0 is a whole second of the server's clock."""
    return written_us // F.US < (before_us + F.US // 2) // F.US


def _purged_by(listed: list[str], to: str | None, before_us: int | None, written: Callable[[str], int]) -> list[str]:
    """What PURGE BINARY LOGS removes before any in-use check (the server's purge_logs and
    purge_logs_before_date): TO removes the binlogs listed before the target; BEFORE those, oldest
    first, last written before the time's second (_before), stopping at the first that is not;
    neither the active (last) binlog."""
    return list(takewhile(lambda f: f != to and (before_us is None or _before(written(f), before_us)), listed[:-1]))


@checks("GGID.PURGE", kinds=("stmt:purge_binary_logs",))
def purge_removes_oldest(v: TraceView, check: Check) -> None:
    """PURGE BINARY LOGS removes the oldest binlogs up to its target, never the active one, stops
    only with a warning (a binlog in use), refuses a target not in the index (1373), and the index
    it leaves lists exactly the remaining binlogs. The files listed before the statement are the
    ones it reports purged followed by the ones remaining (SHOW BINARY LOGS before and after)."""
    for o in v.kind("stmt"):
        if not is_purge(o):
            continue
        purged, remaining = o.get("purged", []), o.get("remaining", [])
        listed = purged + remaining
        if "to" in o and o["to"] not in listed:
            check.judge(o.get("errno") == F.ER_UNKNOWN_TARGET_BINLOG and not purged,
                        f"{o['node']}: PURGE BINARY LOGS TO {o['to']!r} (not in the index) gave errno {o.get('errno')} "
                        f"and purged {purged}", o)
            continue
        written = _last_writes(v, o["node"])
        # What BEFORE removes depends on when a file was last written, known within an interval; a
        # file whose last write was not observed may go either way.
        most = _purged_by(listed, o.get("to"), o.get("before_us"), lambda f: written[f][0] if f in written else 0)
        least = _purged_by(listed, o.get("to"), o.get("before_us"), lambda f: written[f][1] if f in written else 2**63)
        stopped = o.get("warning") is not None or o.get("errno") is not None  # a binlog in use
        ok = purged == most[:len(purged)] and (len(purged) >= len(least) or stopped)
        which = f" TO {o['to']!r}" if "to" in o else f" BEFORE {seconds(o['before_us'])}" if o.get("before_us") is not None else ""
        check.judge(ok, f"{o['node']}: PURGE BINARY LOGS{which} removed {purged} of "
                    f"{listed}; expected {least if least == most else f'{least} to {most}'}", o)
        index = next((i for i in takewhile(lambda i: i["t"] <= o["t"], v.of_node(o["node"], "binlog_index").after(o["_line"]))
                      if i["t"] == o["t"]), None)
        if index is not None:
            paths = [e.path.decode() for e in F.parse_index(index["content"].encode())]
            check.judge(paths == remaining, f"{o['node']}: after PURGE the index lists {paths}, not {remaining}", o, index)


@checks("GGID.PURGE.NO_SKIP", kinds=("stmt:purge_binary_logs",))
def purge_never_skips(v: TraceView, check: Check) -> None:
    """After a purge, a slave never applies a group from that master while it lacks an earlier
    group of the master's that the purge removed: it must have been refused (1236) instead."""
    purges = [o for o in v.kind("stmt") if is_purge(o) and o.get("purged")]
    if not purges:
        return
    if any(e.get("errno") == F.ER_MASTER_FATAL_ERROR_READING_BINLOG and e["_line"] > purges[0]["_line"] for e in v.kind("error")):
        check.reached("a slave refused after a purge")  # a lagging slave, stopped as the requirement asks
    pairs = sorted({(a["node"], a.get("source")) for a in v.kind("apply") if a.get("last") and a.get("trx") is not None})
    for a, lacking, purged_before in sorted((x for node, source in pairs for x in _after_purges(v, node, source)),
                                            key=lambda x: x[0]["_line"]):
        lacking = [trx for trx in lacking if trx not in kept_out(v, a["node"])]  # its filters keep them out: never owed
        if purged_before:
            check.reached("an apply after a purge of earlier groups")
        check.judge(not lacking, f"{a['node']} applied {a['trx']} from {a['source']} but lacks {lacking}, purged from "
                    f"{a['source']}'s binlogs", a)


def _after_purges(v: TraceView, node: str, source: str):
    """(apply, the first three purged groups it lacks, whether a group before it was purged) for
    each whole group the node applied from the source once a purge had removed some of the
    source's binlogs. One sweep of both servers: the source's whole groups since its last restore
    in binlog order (a real server's observer reads a binlog before a purge removes it, so purged
    groups are there too), less those a crash recovery cut; of those in purged binlogs, the ones
    the node neither committed nor had from before its last start (restore, or CHANGE MASTER to a
    position), nor were purged before its first dump asked for no place, are what it lacks. Each
    condition, once false for a group, stays false."""
    lost = lost_lines(v)
    groups: list[tuple[str, str]] = []  # (trx, binlog file) by position
    cut: set[int] = set()  # positions a crash recovery cut away
    cut_at: dict[int, list[int]] = {}  # recovery line -> the positions it cuts
    where: dict[str, list[int]] = {}
    in_file: dict[str, list[int]] = {}
    in_domain: dict[int, list[int]] = {}  # MariaDB GTID domain -> its positions
    gone: set[str] = set()
    purged: list[int] = []  # heaps of positions: in purged binlogs; and of those, still lacking
    lacking: list[int] = []
    held: set = set(purged_before_first_dump(v, node, source))
    first_seen: dict[str, int] = {}
    start = -1
    stream = v.of_node(node) if node == source else heapq.merge(v.of_node(node), v.of_node(source), key=lambda o: o["_line"])

    def still_lacking(k: int) -> bool:
        trx = groups[k][0]
        return k not in cut and trx not in held and first_seen.get(trx, 2**62) >= start
    for o in stream:
        if o["node"] == source:
            first_seen.setdefault(o.get("trx"), o["_line"])
            if starts_new_binlog(o):  # RESET MASTER too: what it deleted is owed to no one, its binlog names come again
                groups, cut, cut_at, where, in_file, gone, purged, lacking = [], set(), {}, {}, {}, set(), [], []
                in_domain = {}
            elif o["kind"] == "binlog" and o.get("trx") is not None and o.get("last"):
                k = len(groups)
                groups.append((o["trx"], o["file"]))
                where.setdefault(o["trx"], []).append(k)
                in_file.setdefault(o["file"], []).append(k)
                in_domain.setdefault(domain_of(o.get("gtid")), []).append(k)
                if o["_line"] in lost:
                    cut_at.setdefault(lost[o["_line"]], []).append(k)
                if o["file"] in gone:
                    heapq.heappush(purged, k)
                    heapq.heappush(lacking, k)
            elif o["kind"] == "recovery":
                cut.update(cut_at.pop(o["_line"], ()))
            elif dropped := deleted_domains(o):  # the DBA's choice: those domains' groups are owed to no one
                for d in dropped:
                    cut.update(in_domain.pop(d, ()))
            elif is_purge(o):
                for f in set(o.get("purged", [])) - gone:
                    gone.add(f)
                    for k in in_file.get(f, ()):
                        heapq.heappush(purged, k)
                        heapq.heappush(lacking, k)
        if o["node"] != node:
            continue
        at = next((k for k in where.get(o["trx"], ()) if k not in cut), None) if (
            o["kind"] == "apply" and o.get("source") == source and o.get("last") and o.get("trx") is not None and gone) else None
        if at is not None:
            while purged and purged[0] in cut:
                heapq.heappop(purged)
            while lacking and not still_lacking(lacking[0]):
                heapq.heappop(lacking)
            missing = sorted(k for k in lacking if k < at and still_lacking(k))[:3] if lacking and lacking[0] < at else []
            yield o, [groups[k][0] for k in missing], bool(purged) and purged[0] < at
        if o["kind"] in ("visible", "skip") or (o["kind"] == "apply" and o.get("last")):
            held.add(o.get("trx"))
        elif o["kind"] == "restore" or (o["kind"] == "stmt" and o.get("op") == "change_master" and "master_log_file" in o
                                        and o.get("errno") is None):
            start = o["_line"]


@checks("GGID.CONNECT_BY_ID")
def connect_by_group_id(v: TraceView, check: Check) -> None:
    """A slave connecting by group ID sends its last group ID and that group's server_id; the
    master places it after that group, or refuses it with 1236: not found, or alternate future."""
    for c in v.kind("connect"):
        if c.get("by") != "group_id":
            continue
        node, source = c["node"], c["source"]
        mine = last_group_end(v, node, c["_line"])
        asked = (current_id(v, node, c["_line"]), mine.server_id if mine else server_id(v, node))
        check.judge((c.get("group_id"), c.get("server_id")) == asked,
                    f"{node} connected by group ID {c.get('group_id')} (server_id {c.get('server_id')}); its last group is "
                    f"{asked[0]} (server_id {asked[1]})", c)
        # The master looks the ID up as SHOW BINLOG INFO FOR does, in the binlogs a purge left, and
        # refuses, with the Google patch's messages, an ID it does not hold (the slave is ahead, or
        # the group was purged) or holds from another server (the slave has an alternate future).
        found = binlog_info(v, source, c["_line"], asked[0])
        refused = (F.id_not_found(asked[0]) if found is None
                   else F.alternate_future(asked[0]) if found.server_id != asked[1] else None)
        if refused is not None:
            check.judge(c.get("errno") == F.ER_MASTER_FATAL_ERROR_READING_BINLOG and c.get("message") == refused,
                        f"{source} answered {node}'s connect by group ID {asked[0]} with errno {c.get('errno')} "
                        f"{c.get('message')!r}; expected 1236 {refused!r}", c)
            continue
        at = (c.get("master_log_file"), c.get("master_log_pos"))
        check.judge(c.get("errno") is None and at == (found.log_name, found.pos),
                    f"{source} placed {node} (group ID {asked[0]}) at {at}; the group ends at {(found.log_name, found.pos)}", c)


@checks("GGID.CONNECT_BY_ID.FLAG")
def connect_by_id_flag(v: TraceView, check: Check) -> None:
    """Connect_Using_Group_ID: Yes after CHANGE MASTER TO CONNECT_USING_GROUP_ID, No again after a
    successful connect, a CHANGE MASTER to a log position, RESET SLAVE or a restore; with a log
    position in the same statement it is a syntax error."""
    flag: dict[str, bool] = {}
    # only these kinds set the flag or show it; read in trace order
    for o in sorted([*v.kind("stmt"), *v.kind("connect"), *v.kind("restore"), *v.kind("status")], key=by_line):
        node, kind = o["node"], o["kind"]
        if kind == "stmt" and o.get("op") == "change_master" and o.get("connect_using_group_id") and "master_log_file" in o:
            check.judge(o.get("errno") == F.ER_SYNTAX_ERROR,
                        f"{node}: CHANGE MASTER TO CONNECT_USING_GROUP_ID with a log position gave errno {o.get('errno')}", o)
        elif kind == "stmt" and o.get("op") in ("change_master", "reset_slave") and o.get("errno") is None:
            if o.get("connect_using_group_id"):
                flag[node] = True
            elif "master_log_file" in o or o["op"] == "reset_slave":
                flag[node] = False
        elif (kind == "connect" and o.get("by") == "group_id" and o.get("errno") is None) or kind == "restore":
            flag[node] = False
        elif kind == "status" and "Connect_Using_Group_ID" in o:
            want = "Yes" if flag.get(node) else "No"
            check.judge(o["Connect_Using_Group_ID"] == want,
                        f"{node}: SHOW SLAVE STATUS Connect_Using_Group_ID {o['Connect_Using_Group_ID']}, expected {want}", o)

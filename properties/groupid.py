"""Trace properties of global group IDs (the hierarchical-replication design) and of their
MariaDB-GTID view (domain-server_id-sequence, gtid_binlog_pos / gtid_slave_pos / gtid_current_pos,
Gtid_IO_Pos).

They read `binlog`, `commit`, `stmt`, `master_status`, `status`, `server_status`, `binlog_index`,
`failover`/`promoted`/`restore` and `crash`/`shutdown`/`restart` observations only, so a real
server's trace is judged the same way.
A server's binlog history starts again when it is restored from a backup, and a failed master that
was failed over is outside the system until it is restored: the groups it lost are gone with it.
So is the binlog of a slave that was down at a failover and is ahead of the new master (it played
groups the new master lacks): a lost branch, refused when it connects by group ID.
"""
from __future__ import annotations

import bisect
import heapq
from itertools import takewhile
from typing import Callable, NamedTuple

from replcheck.spec import formats as F

from .core import Check, TraceView, checks, seconds
from .filter import kept_out

FROZEN = ("FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT")


# -- what several properties share ---------------------------------------------------------------
def hierarchical(v: TraceView) -> set[str]:
    """Servers with group IDs: --rpl-hierarchical in the header, or IDs in their binlog."""
    return {n for n, spec in v.nodes.items() if spec.get("rpl_hierarchical")} | {
        o["node"] for o in v.kind("binlog") if "group_id" in o}


def server_id(v: TraceView, node: str) -> int | None:
    return v.nodes.get(node, {}).get("server_id")


def of_node(v: TraceView, node: str) -> list[dict]:
    """The node's observations, in trace order."""
    return v.of_node(node)


def lost_lines(v: TraceView) -> dict[int, int]:
    """Binlog observations crash recovery cut away (a `recovery` that truncated the node's binlog
    at a place: every event written there or after it since the node's last restore): line ->
    the line of that recovery."""
    def build():
        out: dict[int, int] = {}
        for node in {r["node"] for r in v.kind("recovery") if r.get("truncated")}:
            # Since the node's last restore, which starts a new binlog, what is left of its binlog:
            # in (file, pos) order, as a truncation cuts its end and writing goes on from there.
            written: list[dict] = []
            for o in v.of_node(node, "restore", "binlog", "recovery"):
                if o["kind"] == "restore":
                    written = []
                elif o["kind"] == "binlog":
                    written.append(o)
                elif o.get("truncated"):
                    cut = (o["truncated"]["file"], o["truncated"]["pos"])
                    while written and (written[-1]["file"], written[-1]["pos"]) >= cut:
                        out.setdefault(written.pop()["_line"], o["_line"])
        return out
    return v.memo("gid.lost_lines", build)


def out_of_system(v: TraceView) -> set[int]:
    """Lines of binlog observations of failed-over masters before they were restored, and those
    crash recovery cut away."""
    def build():
        gone: set[int] = set()
        for f in v.kind("failover"):
            restored = min((r["_line"] for r in v.kind("restore") if r["node"] == f["old"] and r["_line"] > f["_line"]),
                           default=None)
            gone |= {o["_line"] for o in v.kind("binlog") if o["node"] == f["old"]
                     and (restored is None or o["_line"] < restored)}
        return gone | left_ahead(v) | set(lost_lines(v))
    return v.memo("gid.out_of_system", build)


def _down_at(v: TraceView, node: str, line: int) -> bool:
    """Whether the server was down (crashed or shut down, not yet restarted or restored) at that line."""
    down = False
    for o in of_node(v, node):
        if o["_line"] >= line:
            break
        if o["kind"] in ("crash", "shutdown"):
            down = True
        elif o["kind"] in ("restart", "restore"):
            down = False
    return down


def left_ahead(v: TraceView) -> set[int]:
    """Lines of binlog observations of a slave a failover left ahead of its new master: down at the
    failover, so not in "the pool of potential new masters" the new master was picked from (002,
    MySQL Commands), it played a group the new master never got, and SHOW BINLOG INFO FOR its last
    ID fails on the new master (the design's check that "the new master is at or ahead of the
    slave" does not hold). Its binlog since its last restore is a lost branch, like the failed
    master's: the new root continues from "the last group_id it played back" (002, ID Generation)
    and may issue the lost groups' IDs again (a connect by group ID then refuses the slave: an ID
    the master does not hold, or an alternate future)."""
    out: set[int] = set()
    for f in v.kind("failover"):
        done = min((p["_line"] for p in v.kind("promoted") if p["node"] == f["node"] and p["_line"] > f["_line"]),
                   default=None)
        if done is None:
            continue
        for s in v.kind("stmt"):
            x = s.get("for")
            if (s.get("op") != "show_binlog_info" or s["node"] != f["node"] or s.get("errno") is None or x is None
                    or not f["_line"] < s["_line"] < done or not _down_at(v, x, f["_line"])):
                continue
            since = max((r["_line"] for r in v.kind("restore") if r["node"] == x and r["_line"] < s["_line"]), default=-1)
            out |= {o["_line"] for o in v.kind("binlog") if o["node"] == x and since < o["_line"] < s["_line"]}
    return out


def _id_changes(v: TraceView, node: str) -> list[tuple[int, int]]:
    """(line, group ID) of every change of a server's current group ID, in order: a group written
    to its binlog, an accepted SET BINLOG_GROUP_ID, a restore (back to 0), a crash recovery that
    cut groups away (back to the last group left)."""
    def build():
        out: dict[str, list[tuple[int, int]]] = {}
        lost = lost_lines(v)
        for o in v.obs:
            if o["kind"] == "recovery" and o.get("truncated"):
                left = [c for c in out.get(o["node"], []) if lost.get(c[0]) != o["_line"]]
                out.setdefault(o["node"], []).append((o["_line"], left[-1][1] if left else 0))
            if o["kind"] == "binlog" and o.get("group_id"):
                out.setdefault(o["node"], []).append((o["_line"], o["group_id"]))
            elif o["kind"] == "stmt" and o.get("op") == "set_binlog_group_id" and o.get("errno") is None:
                out.setdefault(o["node"], []).append((o["_line"], o["group_id"]))
            elif o["kind"] == "restore":
                out.setdefault(o["node"], []).append((o["_line"], 0))
        return out
    return v.memo("gid.changes", build).get(node, [])


def current_id(v: TraceView, node: str, line: int) -> int:
    """The server's group ID (SHOW MASTER STATUS) just before this line of the trace."""
    changes = _id_changes(v, node)
    k = bisect.bisect_left(changes, (line, -1))
    return changes[k - 1][1] if k else 0


def played_id(v: TraceView, node: str, line: int) -> int:
    """The last group the server's SQL thread played (SHOW SLAVE STATUS) before this line: the
    last group its binlog got while it had a master (filtering keeps its own commits out), or the
    ID SET BINLOG_GROUP_ID gave it."""
    lines, played = v.memo(f"gid.played.{node}", lambda: _played_changes(v, node))
    return played[bisect.bisect_left(lines, line) - 1]


def _played_changes(v: TraceView, node: str) -> tuple[list[int], list[int]]:
    """played_id over the whole trace in one pass: the lines where it changes (after a 0 for the
    start) and its value from each on."""
    last, has_master = 0, node in v.channels
    lines, played = [0], [0]
    for o in of_node(v, node):
        if o["kind"] == "binlog" and o.get("group_id") and has_master:
            last = o["group_id"]
        elif o["kind"] == "stmt" and o.get("op") == "set_binlog_group_id" and o.get("errno") is None:
            last = o["group_id"]
        elif o["kind"] == "restore":
            last, has_master = 0, True
        elif o["kind"] == "promoted":
            has_master = False
        else:
            continue
        lines.append(o["_line"])
        played.append(last)
    return lines, played


def has_master_at(v: TraceView, node: str, line: int) -> bool:
    """Whether the server had a master (the design's have_master) at that line."""
    def step(has: bool, o: dict) -> bool:
        return o["kind"] == "restore"  # a promotion ends it, a restore (as a slave) gives one
    return v.fold("gid.has_master", node, ("promoted", "restore"), step, node in v.channels).before(line + 1)


# -- group IDs -----------------------------------------------------------------------------------
@checks("GGID.UNIQUE")
def unique_ids(v: TraceView, check: Check) -> None:
    """No group ID names two different groups anywhere in the system's binlogs."""
    gone = out_of_system(v)
    first: dict[int, dict] = {}
    for o in v.kind("binlog"):
        gid = o.get("group_id")
        if not gid or o.get("trx") is None or o["_line"] in gone or o.get("idx", 0) != 0:
            continue
        seen = first.setdefault(gid, o)
        check.judge(seen.get("trx") == o.get("trx"),
                    f"group ID {gid} issued twice: {seen['node']} logged it for {seen.get('trx')}, {o['node']} for {o.get('trx')}",
                    seen, o)


@checks("GGID.MONOTONIC")
def ids_increase(v: TraceView, check: Check) -> None:
    """Group IDs strictly increase along every binlog (a SET ... WITH RESET or a restore starts afresh)."""
    last: dict[str, tuple[int, dict]] = {}
    afresh: dict[str, int] = {}  # the line of each node's last fresh start
    lost = lost_lines(v)  # a crash recovery cut them away: the IDs after them follow what is left
    for o in v.obs:
        if o["kind"] == "restore" or (o["kind"] == "stmt" and o.get("op") == "set_binlog_group_id" and o.get("errno") is None):
            last.pop(o["node"], None)
            afresh[o["node"]] = o["_line"]
        elif o["kind"] == "recovery" and o.get("truncated"):
            prev = last.get(o["node"])
            if prev is not None and prev[1]["_line"] in lost:
                # What is left since the last fresh start: the IDs before it are not followed.
                kept = [b for b in of_node(v, o["node"]) if b["kind"] == "binlog" and afresh.get(o["node"], -1) < b["_line"] < prev[1]["_line"]
                        and b.get("group_id") and b.get("idx", 0) == 0 and b.get("type") not in FROZEN and b["_line"] not in lost]
                last.pop(o["node"], None)
                if kept:
                    last[o["node"]] = (kept[-1]["group_id"], kept[-1])
        elif o["kind"] == "binlog" and o.get("group_id") and o.get("idx", 0) == 0 and o.get("type") not in FROZEN:
            prev = last.get(o["node"])
            if prev is not None:
                check.judge(o["group_id"] > prev[0],
                            f"{o['node']}: group ID {o['group_id']} ({o.get('trx')}) follows {prev[0]} in its binlog", prev[1], o)
            last[o["node"]] = (o["group_id"], o)


@checks("GGID.GROUP.SHARED")
def group_shares_id(v: TraceView, check: Check) -> None:
    """Every event of a group carries the group's ID (cached events get it when the cache is written)."""
    for node in sorted(hierarchical(v)):
        logged = [o for o in of_node(v, node) if o["kind"] == "binlog" and o.get("trx") is not None]
        group: list[dict] = []
        for o in logged + [None]:
            # A group's events are written together: a run of one transaction with rising idx.
            if group and (o is None or o.get("trx") != group[0].get("trx") or o.get("idx", 0) <= group[-1].get("idx", 0)):
                ids = {m.get("group_id") for m in group}
                check.judge(len(ids) == 1 and None not in ids,
                            f"{node}: events of {group[0].get('trx')} carry group IDs {sorted(map(str, ids))}", *group)
                group = []
            if o is not None:
                group.append(o)


@checks("GGID.FRAMING.NO_ID")
def frozen_headers_carry_none(v: TraceView, check: Check) -> None:
    """FDE and Rotate events have frozen headers: they neither have nor consume a group ID."""
    hier = hierarchical(v)
    for o in v.kind("binlog"):
        if o["node"] in hier and o.get("type") in FROZEN:
            check.judge("group_id" not in o, f"{o['node']}: {o['type']} carries group ID {o.get('group_id')}", o)


@checks("GGID.NO_STOP_EVENT")
def no_stop_events(v: TraceView, check: Check) -> None:
    """No Stop event is written while hierarchical replication is on (it would consume an ID)."""
    hier = hierarchical(v)
    for o in v.kind("binlog"):
        if o["node"] in hier and o.get("type") == "STOP_EVENT":
            check.judge(False, f"{o['node']}: STOP_EVENT in its binlog (group ID {o.get('group_id')})", o)
    for o in v.kind("shutdown"):
        if o["node"] in hier:
            check.judge(True)


@checks("GGID.FILTER")
def slave_logs_only_master_events(v: TraceView, check: Check) -> None:
    """A --rpl-hierarchical server with a master does not binlog what its own clients commit (what
    its SQL thread plays goes to its binlog, even a group that once originated on it)."""
    hier = hierarchical(v)
    for c in v.kind("commit"):
        node = c["node"]
        if node not in hier or c.get("trx") is None or not has_master_at(v, node, c["_line"]):
            continue
        logged = v.memo(("gid.binlogged", node), lambda: _by_trx(v.of_node(node, "binlog"))).get(c["trx"], [])
        check.judge(not logged, f"{node} has a master but binlogged its own {c['trx']}", c, *logged[:1])


def _by_trx(obs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for o in obs:
        out.setdefault(o.get("trx"), []).append(o)
    return out


def _origin_ids(v: TraceView) -> dict[str, int | None]:
    """Each committed client transaction's group ID where it originated (None: the origin has none)."""
    return {c["trx"]: c.get("group_id") for c in v.kind("commit") if c.get("errno") is None and c.get("gtid")}


def _replicated_firsts(v: TraceView):
    hier, origin = hierarchical(v), _origin_ids(v)
    for o in v.kind("binlog"):
        if o["node"] in hier and o.get("idx", 0) == 0 and o.get("trx") in origin and o.get("server_id") != server_id(v, o["node"]):
            yield o, origin[o["trx"]]


@checks("GGID.SLAVE.PRESERVE")
def slave_keeps_master_id(v: TraceView, check: Check) -> None:
    """A slave writes a replicated group to its binlog with the ID the root master gave it."""
    for o, gid in _replicated_firsts(v):
        if gid is not None:
            check.judge(o.get("group_id") == gid, f"{o['node']} logged {o['trx']} as group {o.get('group_id')}; the root gave it {gid}", o)


@checks("GGID.MIXED_MODE")
def mixed_mode_logs_zero(v: TraceView, check: Check) -> None:
    """A slave with --rpl-hierarchical under a master without it logs group ID 0, never a sequence of its own."""
    for o, gid in _replicated_firsts(v):
        if gid is None:
            check.judge(o.get("group_id") == 0, f"{o['node']} logged {o['trx']} from a master without group IDs as {o.get('group_id')}, not 0", o)


def _startup_refusal(spec: dict) -> str | None:
    """Why init_server_components refuses these options (the seed's "Filtering non-master events":
    --rpl-hierarchical needs --log-slave-updates, "just as --log-slave-updates requires --log-bin").
    The two cannot both fail: one needs --log-slave-updates on, the other off."""
    lsu = spec.get("log_slave_updates", True)
    if lsu and not spec.get("log_bin", True):
        return F.NEEDS_LOG_BIN
    return F.NEEDS_LOG_SLAVE_UPDATES if spec.get("rpl_hierarchical", False) and not lsu else None


@checks("GGID.STARTUP.OPTIONS")
def inconsistent_options_refused(v: TraceView, check: Check) -> None:
    """--rpl-hierarchical needs --log-slave-updates needs --log-bin: otherwise the server refuses to start, saying why."""
    for node, spec in v.nodes.items():
        want = _startup_refusal(spec)
        refusals = [o for o in v.kind("error") if o["node"] == node and o.get("op") == "startup"]
        if want is None:
            if refusals:
                check.judge(False, f"{node} refused to start with consistent options: {refusals[0]['message']}", refusals[0])
            continue
        worked = [o for o in v.of_node(node) if o["kind"] in ("binlog", "commit", "apply")]
        check.judge(bool(refusals) and refusals[0]["message"] == want and not worked,
                    f"{node} started with inconsistent options (expected: {want})", *(refusals[:1] + worked[:1]))


@checks("GGID.INDEX.FORMAT")
def index_file_format(v: TraceView, check: Check) -> None:
    """The binlog index holds `full_path|group_id|` lines that read back byte for byte, IDs never decreasing."""
    for o in v.kind("binlog_index"):
        data = o["content"].encode()
        entries = F.parse_index(data)
        ids = [e.group_id for e in entries]
        ok = (all(not e.old_format for e in entries) and F.format_index([(e.path, e.group_id) for e in entries]) == data
              and ids == sorted(ids))
        check.judge(ok, f"{o['node']}: index file {o['content']!r} is not a well-formed group-ID index", o)


@checks("GGID.SHOW_MASTER_STATUS")
def master_status_group_id(v: TraceView, check: Check) -> None:
    """SHOW MASTER STATUS shows the ID of the last group written to the binlog (or the one SET)."""
    for o in v.kind("master_status"):
        if "Group_ID" in o:
            want = current_id(v, o["node"], o["_line"])
            check.judge(o["Group_ID"] == want, lambda: f"{o['node']}: SHOW MASTER STATUS Group_ID {o['Group_ID']}, its binlog says {want}", o)


@checks("GGID.SHOW_SLAVE_STATUS")
def slave_status_group_id(v: TraceView, check: Check) -> None:
    """SHOW SLAVE STATUS shows the ID of the last group the SQL thread played."""
    for o in v.kind("status"):
        if "Exec_Master_Group_ID" in o:
            want = played_id(v, o["node"], o["_line"])
            check.judge(o["Exec_Master_Group_ID"] == want,
                        f"{o['node']}: SHOW SLAVE STATUS Exec_Master_Group_ID {o['Exec_Master_Group_ID']}, last played {want}", o)


def is_purge(o: dict) -> bool:
    return o["kind"] == "stmt" and o.get("op") == "purge_binary_logs"


def purged_files(v: TraceView, node: str, before: int) -> set[str]:
    """The node's binlogs PURGE BINARY LOGS removed before a line (since its last restore)."""
    def step(gone: frozenset, o: dict) -> frozenset:
        if o["kind"] == "restore":
            return frozenset()
        return gone | frozenset(o.get("purged", [])) if is_purge(o) else gone
    return v.fold("gid.purged", node, ("restore", "stmt"), step, frozenset()).before(before)


class GroupEnd(NamedTuple):
    """Where a group ends in a server's binlog: what SHOW BINLOG INFO FOR answers."""

    group_id: int
    log_name: str
    pos: int
    server_id: int | None


class _Ends(NamedTuple):
    lines: list[int]  # where each end was written, in trace order
    ends: list[GroupEnd]
    by_id: dict[int, list[int]]  # group ID -> the indexes of its ends
    restores: list[int]  # the lines of the node's restores (each starts its binlogs afresh)


def _group_ends(v: TraceView, node: str) -> _Ends:
    """Where each group ends in the node's binlogs, and where a SET ID's new binlog begins, over
    the whole trace in one pass."""
    def build() -> _Ends:
        out, pending_set = _Ends([], [], {}, []), None
        for o in v.of_node(node, "restore", "stmt", "binlog"):
            end = None
            if o["kind"] == "restore":
                out.restores.append(o["_line"])
            elif o["kind"] == "stmt" and o.get("op") == "set_binlog_group_id" and o.get("errno") is None:
                pending_set = o
            elif o["kind"] == "binlog" and o.get("type") == "FORMAT_DESCRIPTION_EVENT" and pending_set is not None:
                end = GroupEnd(pending_set["group_id"], o["file"], o["end"], pending_set.get("master_server_id", server_id(v, node)))
                pending_set = None
            elif o["kind"] == "binlog" and o.get("group_id") and (o.get("last") or o.get("trx") is None):
                end = GroupEnd(o["group_id"], o["file"], o["end"], o.get("server_id"))
            if end is not None:
                out.by_id.setdefault(end.group_id, []).append(len(out.ends))
                out.lines.append(o["_line"])
                out.ends.append(end)
        return out
    return v.memo(("gid.group_ends", node), build)


def _since(ix: _Ends, before: int) -> int:
    """The line from which the node's binlogs stand before a line: its last restore's."""
    k = bisect.bisect_left(ix.restores, before)
    return ix.restores[k - 1] if k else -1


def last_group_end(v: TraceView, node: str, before: int) -> GroupEnd | None:
    """The last group end in the node's binlogs before a line, purged or not."""
    ix = _group_ends(v, node)
    k = bisect.bisect_left(ix.lines, before)
    return ix.ends[k - 1] if k and ix.lines[k - 1] > _since(ix, before) else None


def binlog_info(v: TraceView, node: str, before: int, group_id: int) -> GroupEnd | None:
    """SHOW BINLOG INFO FOR on the node before a line: "the bin log name and end_log_pos of the last
    event in the group with the matching ID in the server's bin logs" (seed, "MySQL Commands"), in
    those a purge left; None when none holds it. ID 0 names no group: a mixed-mode slave gives it
    to all its groups (seed, "ID Generation")."""
    if not group_id:
        return None
    ix = _group_ends(v, node)
    since, gone = _since(ix, before), purged_files(v, node, before)
    for k in reversed(ix.by_id.get(group_id, ())):
        if ix.lines[k] >= before:
            continue
        if ix.lines[k] <= since:
            return None
        if ix.ends[k].log_name not in gone:
            return ix.ends[k]
    return None


@checks("GGID.BINLOG_INFO")
def binlog_info_answers(v: TraceView, check: Check) -> None:
    """SHOW BINLOG INFO FOR id gives the binlog name and end position of the last event of that
    group, or the documented error for an ID no binlog holds (a purged binlog holds none)."""
    for o in v.kind("stmt"):
        if o.get("op") != "show_binlog_info":
            continue
        found = binlog_info(v, o["node"], o["_line"], o["group_id"])
        if found is None:
            check.judge(o.get("errno") == F.ER_ERROR_WHEN_EXECUTING_COMMAND and o.get("message") == F.BINLOG_INFO_NOT_FOUND,
                        f"{o['node']}: SHOW BINLOG INFO FOR {o['group_id']} answered {o.get('Log_name')}:{o.get('Pos')}; no binlog holds it", o)
        else:
            got = (o.get("Log_name"), o.get("Pos"), o.get("Server_ID"))
            check.judge(o.get("errno") is None and got == (found.log_name, found.pos, found.server_id),
                        f"{o['node']}: SHOW BINLOG INFO FOR {o['group_id']} answered {got}, the group ends at "
                        f"{(found.log_name, found.pos, found.server_id)}", o)


def _first_issue_after(v: TraceView, node: str, line: int) -> tuple[dict, int] | None:
    """The node's first group issued after a line, and the line where its binlog write began."""
    c = next((c for c in v.of_node(node, "commit").after(line) if c.get("group_id") is not None), None)
    if c is None:
        return None
    logged = v.memo(("gid.binlogged", node), lambda: _by_trx(v.of_node(node, "binlog"))).get(c["trx"], [])
    began = min((o["_line"] for o in logged), default=c["_line"])
    return c, began


def _set_refusals(hierarchical_on: bool, o: dict, current: int) -> list[int]:
    """The errors SET BINLOG_GROUP_ID earns: the seed's "requires global SUPER_ACL", and, as the
    Google branch's rpl_hier test shows, --rpl-hierarchical (1290) and WITH RESET to lower the ID
    (1644). Neither says which check comes first, so any that applies is right."""
    return [errno for broken, errno in ((not hierarchical_on, F.ER_OPTION_PREVENTS_STATEMENT),
                                        (not o.get("privileged", True), F.ER_SPECIFIC_ACCESS_DENIED),
                                        (o["group_id"] < current and not o.get("with_reset", False), F.ER_STATEMENT_REQUIRES_OPTION))
            if broken]


@checks("GGID.SET")
def set_binlog_group_id(v: TraceView, check: Check) -> None:
    """SET BINLOG_GROUP_ID needs SUPER and WITH RESET to lower the ID; once accepted, the next group gets ID+1."""
    hier = hierarchical(v)
    for o in v.kind("stmt"):
        if o.get("op") != "set_binlog_group_id":
            continue
        current = current_id(v, o["node"], o["_line"])
        want = _set_refusals(o["node"] in hier, o, current)
        check.judge(o.get("errno") in want if want else o.get("errno") is None,
                    f"{o['node']}: SET BINLOG_GROUP_ID={o['group_id']} (current {current}) gave "
                    f"errno {o.get('errno')}, expected {' or '.join(map(str, want)) or None}", o)
        issued = _first_issue_after(v, o["node"], o["_line"]) if not want else None
        if issued is not None and current_id(v, o["node"], issued[1]) == o["group_id"]:  # nothing else came between
            nxt = issued[0]
            check.judge(nxt["group_id"] == o["group_id"] + 1,
                        f"{o['node']}: after SET BINLOG_GROUP_ID={o['group_id']} the next group got {nxt['group_id']}", o, nxt)


@checks("GGID.CHANGE_MASTER")
def change_master_to_played_group(v: TraceView, check: Check) -> None:
    """CHANGE MASTER to a binlog position repoints a slave exactly after the last group it played:
    the position is where that group ends in the new master's binlog (its start if it played none),
    so nothing is lost and nothing played twice."""
    for o in v.kind("stmt"):
        if o.get("op") != "change_master" or "master_log_file" not in o or o.get("errno") is not None:
            continue
        node = o["node"]
        if node not in hierarchical(v):
            continue
        source = o.get("master_host") or v.channels.get(node, {}).get("source")
        played = played_id(v, node, o["_line"])
        at = (o["master_log_file"], o["master_log_pos"])
        if played:
            found = binlog_info(v, source, o["_line"], played)
            ok = found is not None and (found.log_name, found.pos) == at
        else:
            restored = max((r["_line"] for r in v.kind("restore") if r["node"] == source and r["_line"] < o["_line"]), default=0)
            first = next((b for b in v.kind("binlog") if b["node"] == source and b["_line"] > restored
                          and b.get("type") == "FORMAT_DESCRIPTION_EVENT"), None)
            ok = first is not None and at == (first["file"], 4)
        check.judge(ok, f"{node}: CHANGE MASTER to {source} {at[0]}:{at[1]}, but the last group it played is {played}", o)


@checks("GGID.FAILOVER.ELECT")
def most_advanced_promoted(v: TraceView, check: Check) -> None:
    """Failover promotes the slave whose SHOW MASTER STATUS shows the largest group ID."""
    for f in v.kind("failover"):
        polled = [m for m in v.kind("master_status") if m.get("election") == f["old"] and m["t"] == f["t"] and "Group_ID" in m]
        if not polled:
            continue
        best = max(m["Group_ID"] for m in polled)
        mine = next((m["Group_ID"] for m in polled if m["node"] == f["node"]), None)
        check.judge(mine == best, f"failover promoted {f['node']} (group ID {mine}) although a candidate had {best}", f)


@checks("GGID.FAILOVER.CONTINUE")
def new_root_continues(v: TraceView, check: Check) -> None:
    """A slave made root continues the sequence: its first group gets the last ID it played + 1."""
    for p in v.kind("promoted"):
        issued = _first_issue_after(v, p["node"], p["_line"])
        if issued is not None and p["node"] in hierarchical(v):
            nxt, began = issued
            want = current_id(v, p["node"], began) + 1
            check.judge(nxt["group_id"] == want, f"new root {p['node']} issued {nxt['group_id']} first, expected {want}", p, nxt)


# -- the MariaDB-GTID view -------------------------------------------------------------------------
@checks("MARIADB.GTID.UNIQUE")
def gtid_one_body(v: TraceView, check: Check) -> None:
    """Each GTID names one transaction body in every binlog of the system."""
    gone = out_of_system(v)
    first: dict[str, dict] = {}
    for o in v.kind("binlog"):
        if o.get("gtid") and o.get("trx") is not None and o.get("idx", 0) == 0 and o["_line"] not in gone:
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
    lines, shown = v.memo(f"gid.positions.{node}.{own_too}", lambda: _position_changes(v, node, own_too))
    return shown[bisect.bisect_left(lines, line) - 1]


def _position_changes(v: TraceView, node: str, own_too: bool) -> tuple[list[int], list[str]]:
    """_positions over the whole trace in one pass: the lines where it changes (after a 0 for the
    start) and what it shows from each on."""
    own = server_id(v, node)
    pos: dict[int, str] = {}
    lines, shown = [0], [F.format_pos(pos)]
    # A crashed primary that rejoined (SET GLOBAL gtid_slave_pos, MDEV-21117) gets its own
    # transactions its recovery truncated back from the new primary, as replicated ones
    # (rpl_semi_sync_fail_over.result: server_1 gets 0-1-4 back): those whose commit never returned.
    rejoined = min((o["_line"] for o in v.of_node(node, "stmt") if o.get("op") == "set_global"
                    and o.get("variable") == "gtid_slave_pos"), default=None)
    returned = {c["trx"] for c in v.of_node(node, "commit") if c.get("errno") is None}

    def came_back(o: dict) -> bool:
        return rejoined is not None and o["_line"] > rejoined and o["trx"] not in returned
    lost = lost_lines(v)
    # what set the position, per domain, for a crash recovery that cuts some of it away: what it
    # cut is gone for good, so it is popped once, and the last left is the domain's position
    logged: dict[int, list[dict]] = {}
    for o in of_node(v, node):
        changed = o["kind"] == "restore" or (o["kind"] == "recovery" and bool(o.get("truncated")) and own_too)
        if o["kind"] == "restore":
            pos, logged = {}, {}
        elif (not own_too and o["kind"] == "stmt" and o.get("op") == "set_global" and o.get("variable") == "gtid_slave_pos"
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
        counted = o["kind"] in ("binlog", "visible", "filtered") or (o["kind"] == "skip" and o.get("reason") == "sql_slave_skip_counter")
        d = domain_of(o.get("gtid")) if counted else None
        if d is not None:
            replicated = F.parse_gtid(o["gtid"])[1] != own or (o["kind"] == "visible" and came_back(o))
            # a skip is stamped when its note is read, maybe after a later group was applied: it
            # never moves the position back
            later = o["kind"] != "skip" or d not in pos or F.parse_gtid(o["gtid"])[2] > F.parse_gtid(pos[d])[2]
            if (o["kind"] == "binlog" and o.get("last") and (own_too or replicated)) or (
                    not own_too and o["kind"] in ("visible", "skip", "filtered") and replicated and later):
                pos[d] = o["gtid"]
                logged.setdefault(d, []).append(o)
                changed = True
            elif o["kind"] == "skip" and not own_too and replicated and v.resolution_us:
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
    return lines, shown


def sampled_positions(v: TraceView, sample: dict, own_too: bool) -> list[str]:
    """The positions a sample may show. A model's trace is exact: the one at the sample's line. A
    polled server's observations are placed within its resolution of when they happened (a
    replica binlogs a group a moment before it commits it and gtid_slave_pos moves), so any
    position the node passes through within the resolution around the sample is allowed."""
    res = v.resolution_us
    if not res:
        return [_positions(v, sample["node"], sample["_line"], own_too)]
    node = of_node(v, sample["node"])
    times = v.memo(f"gid.times.{sample['node']}", lambda: [o["t"] for o in node])
    nearby = node[bisect.bisect_left(times, sample["t"] - res):bisect.bisect_right(times, sample["t"] + res)]
    near = [o["_line"] for o in nearby]
    cuts = [sample["_line"], *near, *(line + 1 for line in near)]
    return sorted({_positions(v, sample["node"], line, own_too) for line in cuts})


def _restored(v: TraceView) -> set[str]:
    return {o["node"] for o in v.kind("restore")}


@checks("MARIADB.GTID.BINLOG_POS")
def gtid_binlog_pos(v: TraceView, check: Check) -> None:
    """@@gtid_binlog_pos is, per domain, the last GTID written to the binlog (rebuilt after a crash)."""
    # A polled trace reads the binlogs at the end: a group a replica-role recovery truncated (MDEV-21117)
    # is in none, though the server showed it while its commit waited; such samples cannot be judged.
    truncating = v.resolution_us and any(r.get("init_rpl_role") == "SLAVE" for r in v.kind("restart"))
    doubt = [c for c in v.kind("commit") if truncating and c.get("errno") is not None and "start" in c]
    for o in v.kind("server_status"):
        got = o.get("variables", {}).get("gtid_binlog_pos")
        if got is not None and not any(c["node"] == o["node"] and c["start"] <= o["t"] <= c["t"] for c in doubt):
            want = sampled_positions(v, o, own_too=True)
            check.judge(got in want, lambda: f"{o['node']}: gtid_binlog_pos {got!r}, its binlog ends with {' or '.join(map(repr, want))}", o)


@checks("MARIADB.GTID.SLAVE_POS")
def gtid_slave_pos(v: TraceView, check: Check) -> None:
    """@@gtid_slave_pos is, per domain, the last GTID the slave replicated and committed."""
    restored = _restored(v)
    for o in v.kind("server_status"):
        got = o.get("variables", {}).get("gtid_slave_pos")
        if got is not None and o["node"] not in restored and not _blind_skip(v, o):
            want = sampled_positions(v, o, own_too=False)
            check.judge(got in want or _blind_filter(v, o, got), lambda: f"{o['node']}: gtid_slave_pos {got!r}, it replicated up to {' or '.join(map(repr, want))}", o)


def _blind_filter(v: TraceView, sample: dict, got: str) -> bool:
    """On a trace that cannot show which groups the SQL thread filtered (a real server's), a
    position naming, in each domain, a group the node's filters keep out that its source committed
    by the sample: the SQL thread passed it, and gtid_slave_pos moved (FILTER.GTID.ADVANCES)."""
    if "filtered" not in v.unobserved:
        return False
    until = sample["t"] + v.resolution_us
    out = {c["gtid"] for c in v.kind("commit") if c.get("trx") in kept_out(v, sample["node"]) and c.get("gtid") and c["t"] <= until}
    shown = positions(got)
    return bool(shown) and all(g in out for g in shown.values())


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


@checks("MARIADB.GTID.CURRENT_POS")
def gtid_current_pos(v: TraceView, check: Check) -> None:
    """@@gtid_current_pos is gtid_slave_pos, with the domains where this server itself logged later GTIDs."""
    wanted: dict[tuple, str | None] = {}  # samples mostly repeat the positions of the one before
    for o in v.kind("server_status"):
        var = o.get("variables", {})
        if "gtid_current_pos" in var and "gtid_binlog_pos" in var and "gtid_slave_pos" in var:
            shown = (var["gtid_binlog_pos"], var["gtid_slave_pos"], server_id(v, o["node"]))
            try:
                want = wanted[shown]
            except KeyError:
                want = wanted[shown] = _current_shown(*shown)
            except TypeError:  # not a position at all (a list, say): nothing to remember
                want = _current_shown(*shown)
            check.judge(var["gtid_current_pos"] == want, lambda: f"{o['node']}: gtid_current_pos {var['gtid_current_pos']!r}, expected {want!r}", o)


@checks("MARIADB.GTID.IO_POS")
def gtid_io_pos_whole_groups(v: TraceView, check: Check) -> None:
    """Gtid_IO_Pos names only transactions received whole: their last event is in a master's binlog already.
    A polled server's binlog events are stamped no earlier than written and at most its resolution
    later (the first poll that found them logged, or an earlier bound): a sample within that of the
    stamp cannot be earlier than the write."""
    res = v.resolution_us
    ended: dict[str, int] = {}
    for o in v.kind("binlog"):
        if o.get("gtid") and o.get("last"):
            ended.setdefault(o["gtid"], o["t"])
    for o in v.kind("status"):
        if "Gtid_IO_Pos" not in o:
            continue
        named = positions(o["Gtid_IO_Pos"])
        if named is None:
            check.judge(False, f"{o['node']}: Gtid_IO_Pos {o['Gtid_IO_Pos']!r} is not a GTID position", o)
            continue
        for g in named.values():
            check.judge(g in ended and ended[g] - res <= o["t"], lambda: f"{o['node']}: Gtid_IO_Pos names {g}, not yet whole in any binlog", o)


# -- PURGE BINARY LOGS and connecting by group ID -------------------------------------------------
def _last_writes(v: TraceView, node: str) -> dict[str, int]:
    """When each of the node's binlogs was last written (what PURGE ... BEFORE compares)."""
    return v.memo(("gid.last_writes", node), lambda: {o["file"]: o["t"] for o in v.of_node(node, "binlog")})


def _purged_by(listed: list[str], to: str | None, before_us: int | None, written: Callable[[str], int]) -> list[str]:
    """What PURGE BINARY LOGS removes before any in-use check (the server's purge_logs and
    purge_logs_before_date): TO removes the binlogs listed before the target; BEFORE those, oldest
    first, last written before the time, stopping at the first that is not; neither the active
    (last) binlog."""
    return list(takewhile(lambda f: f != to and (before_us is None or written(f) < before_us), listed[:-1]))


@checks("GGID.PURGE")
def purge_removes_oldest(v: TraceView, check: Check) -> None:
    """PURGE BINARY LOGS removes the oldest binlogs up to its target, never the active one, stops
    only with a warning (a binlog in use), refuses a target not in the index (1373), and the index
    it leaves lists exactly the remaining binlogs. The files listed before the statement are the
    ones it reports purged followed by the ones remaining (SHOW BINARY LOGS before and after)."""
    res = v.resolution_us
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
        # What BEFORE removes depends on when a file was last written, known within the resolution;
        # a file whose last write was not observed may go either way.
        most = _purged_by(listed, o.get("to"), o.get("before_us"), lambda f: written[f] - res if f in written else 0)
        least = _purged_by(listed, o.get("to"), o.get("before_us"), lambda f: written.get(f, 2**63) + res)
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


@checks("GGID.PURGE.NO_SKIP")
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
    position) are what it lacks. Each condition, once false for a group, stays false."""
    lost = lost_lines(v)
    groups: list[tuple[str, str]] = []  # (trx, binlog file) by position
    cut: set[int] = set()  # positions a crash recovery cut away
    cut_at: dict[int, list[int]] = {}  # recovery line -> the positions it cuts
    where: dict[str, list[int]] = {}
    in_file: dict[str, list[int]] = {}
    gone: set[str] = set()
    purged: list[int] = []  # heaps of positions: in purged binlogs; and of those, still lacking
    lacking: list[int] = []
    held: set = set()
    first_seen: dict[str, int] = {}
    start = -1
    stream = v.of_node(node) if node == source else heapq.merge(v.of_node(node), v.of_node(source), key=lambda o: o["_line"])

    def still_lacking(k: int) -> bool:
        trx = groups[k][0]
        return k not in cut and trx not in held and first_seen.get(trx, 2**62) >= start
    for o in stream:
        if o["node"] == source:
            first_seen.setdefault(o.get("trx"), o["_line"])
            if o["kind"] == "restore":
                groups, cut, cut_at, where, in_file, gone, purged, lacking = [], set(), {}, {}, {}, set(), [], []
            elif o["kind"] == "binlog" and o.get("trx") is not None and o.get("last"):
                k = len(groups)
                groups.append((o["trx"], o["file"]))
                where.setdefault(o["trx"], []).append(k)
                in_file.setdefault(o["file"], []).append(k)
                if o["_line"] in lost:
                    cut_at.setdefault(lost[o["_line"]], []).append(k)
                if o["file"] in gone:
                    heapq.heappush(purged, k)
                    heapq.heappush(lacking, k)
            elif o["kind"] == "recovery":
                cut.update(cut_at.pop(o["_line"], ()))
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
    for o in v.obs:
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

"""The design's commands: SHOW BINLOG INFO FOR, SET BINLOG_GROUP_ID, CHANGE MASTER TO the played
group, and the failover that elects the most advanced slave."""
from __future__ import annotations

import bisect
from typing import NamedTuple
from replcheck.spec import formats as F

from .core import Check, TraceView, checks
from .groupid_shared import current_id, hierarchical, played_id, server_id
from .groupid_ids import by_trx


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


@checks("GGID.BINLOG_INFO", kinds=("stmt:show_binlog_info",))
def binlog_info_answers(v: TraceView, check: Check) -> None:
    """SHOW BINLOG INFO FOR id gives the binlog name and end position of the last event of that
    group, or the documented error for an ID no binlog holds (a purged binlog holds none). A server
    without --rpl-hierarchical refuses it with 1290 as it refuses the other group-ID statements
    (Google's rpl_skip_hier.result: SHOW BINLOG INFO FOR 1, ER_OPTION_PREVENTS_STATEMENT)."""
    hier = hierarchical(v)
    for o in v.kind("stmt"):
        if o.get("op") != "show_binlog_info":
            continue
        if o["node"] not in hier:
            check.judge(o.get("errno") == F.ER_OPTION_PREVENTS_STATEMENT,
                        f"{o['node']}: SHOW BINLOG INFO FOR {o['group_id']} without --rpl-hierarchical gave errno "
                        f"{o.get('errno')}, expected {F.ER_OPTION_PREVENTS_STATEMENT}", o)
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
    logged = v.memo(("gid.binlogged", node), lambda: by_trx(v.of_node(node, "binlog"))).get(c["trx"], [])
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


@checks("GGID.SET", kinds=("stmt:set_binlog_group_id",))
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


@checks("GGID.FAILOVER.ELECT", kinds=("master_status",))
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

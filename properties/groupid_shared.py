"""What several group-ID properties share: who is hierarchical, a node's server_id, the binlog lines
lost with a failed or restored server, and a node's current and played group ID over time."""
from __future__ import annotations

import bisect
from operator import itemgetter

from .core import TraceView


FROZEN = ("FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT")
by_line = itemgetter("_line")  # a key for observations in trace order


# -- what several properties share ---------------------------------------------------------------
def hierarchical(v: TraceView) -> set[str]:
    """Servers with group IDs: --rpl-hierarchical in the header, or IDs in their binlog."""
    return {n for n, spec in v.nodes.items() if spec.get("rpl_hierarchical")} | {
        o["node"] for o in v.kind("binlog") if "group_id" in o}


def starts_new_binlog(o: dict) -> bool:
    """A restore, or a RESET MASTER or SET GLOBAL gtid_binlog_state that was carried out: the node's
    binlog and its GTID history start over (sql_repl.cc reset_master: every binlog deleted, the
    binlog GTID state emptied or set)."""
    return o["kind"] == "restore" or (o["kind"] == "stmt" and o.get("errno") is None and (
        o.get("op") == "reset_master" or (o.get("op") == "set_global" and o.get("variable") == "gtid_binlog_state")))


def deleted_domains(o: dict) -> set[int]:
    """The domains a FLUSH BINARY LOGS DELETE_DOMAIN_ID that was carried out took from the node's
    binlog state (rpl_binlog_state::drop_domain, rpl_gtid.cc: the domain's GTIDs and counter gone,
    the binlogs that held them purged before): the DBA's choice, after which the node may issue
    the domain's GTIDs anew (binlog_flush_binlogs_delete_domain.result, rpl_gtid_delete_domain.result)."""
    if o["kind"] == "stmt" and o.get("op") == "flush_logs" and o.get("errno") is None:
        return set(o.get("delete_domain_id") or ())
    return set()


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


def purged_before_first_dump(v: TraceView, node: str, source: str) -> set[str]:
    """The source's groups a purge had removed before the node, never pointed anywhere, first
    connected to it by position: a slave with no master position asks for MASTER_LOG_FILE '', and
    the dump starts at the first binlog the index still names (MariaDB sql/sql_repl.cc,
    mysql_binlog_send: an empty log name, find_log_pos(name=0)), so those groups are asked by no
    one. A restore or CHANGE MASTER TO MASTER_LOG_FILE before it names a place instead."""
    def build() -> set[str]:
        # the node's first say in it: a place (a restore, a CHANGE MASTER TO MASTER_LOG_FILE) or a connect to the source
        first = next((o for o in v.of_node(node, "connect", "restore", "stmt") if o["kind"] == "restore" or (
            o["kind"] == "stmt" and o.get("op") == "change_master" and o.get("master_log_file") and o.get("errno") is None)
            or (o["kind"] == "connect" and o.get("source") == source)), None)
        if first is None or first["kind"] != "connect" or first.get("by") != "position" or first.get("errno") is not None:
            return set()
        # what the source's binlog index held when the node connected; its other observations leave it as it is
        in_file: dict[str, list[str]] = {}
        gone: set[str] = set()
        for o in v.of_node(source, "restore", "stmt", "binlog").before(first["_line"]):
            if starts_new_binlog(o):
                in_file, gone = {}, set()
            elif o["kind"] == "binlog" and o.get("trx") is not None and o.get("last"):
                in_file.setdefault(o["file"], []).append(o["trx"])
            elif o["kind"] == "stmt" and o.get("op") == "purge_binary_logs":
                gone.update(o.get("purged") or ())
        return {trx for f in gone for trx in in_file.get(f, ())}
    return v.memo(("gid.purged_before_first_dump", node, source), build)

"""Group IDs: unique, increasing, shared by a group's events, kept by slaves, refused with
inconsistent options, and shown by SHOW MASTER STATUS / SHOW SLAVE STATUS."""
from __future__ import annotations

from replcheck.spec import formats as F

from .core import Check, TraceView, checks
from .groupid_shared import FROZEN, by_line, current_id, has_master_at, hierarchical, lost_lines, of_node, out_of_system, played_id, server_id


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
    # only these kinds write, reset or cut a binlog's IDs; read in trace order
    for o in sorted([*v.kind("restore"), *v.kind("stmt"), *v.kind("recovery"), *v.kind("binlog")], key=by_line):
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
        logged = v.memo(("gid.binlogged", node), lambda: by_trx(v.of_node(node, "binlog"))).get(c["trx"], [])
        check.judge(not logged, f"{node} has a master but binlogged its own {c['trx']}", c, *logged[:1])


def by_trx(obs: list[dict]) -> dict[str, list[dict]]:
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
        # until a restart with --log-slave-updates (my.cnf fixed while it was down) makes them consistent
        fixed = next((o["_line"] for o in v.of_node(node, "restart") if o.get("log_slave_updates")), None)
        worked = [o for o in v.of_node(node) if o["kind"] in ("binlog", "commit", "apply") and (fixed is None or o["_line"] < fixed)]
        check.judge(bool(refusals) and refusals[0]["message"] == want and not worked,
                    f"{node} started with inconsistent options (expected: {want})", *(refusals[:1] + worked[:1]))


@checks("GGID.INDEX.FORMAT", kinds=("binlog_index",))
def index_file_format(v: TraceView, check: Check) -> None:
    """The binlog index holds `full_path|group_id|` lines that read back byte for byte, IDs never decreasing."""
    for o in v.kind("binlog_index"):
        data = o["content"].encode()
        entries = F.parse_index(data)
        ids = [e.group_id for e in entries]
        ok = (all(not e.old_format for e in entries) and F.format_index([(e.path, e.group_id) for e in entries]) == data
              and ids == sorted(ids))
        check.judge(ok, f"{o['node']}: index file {o['content']!r} is not a well-formed group-ID index", o)


@checks("GGID.SHOW_MASTER_STATUS", kinds=("master_status",))
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
